import { DEFAULT_LIMITS, type PipelineConfig } from '../pipeline/context.ts';
import { configDigest } from './config-digest.ts';
import { durationReader, resolveDefaults } from './config-durations.ts';
import { ConfigError } from './config-error.ts';
import { checkShape } from './config-shape.ts';
import type { ConfigInput, CountersignConfig } from './config-types.ts';
import { checkCrossReferences, nameChecks } from './cross-references.ts';
import { resolveDrift } from './drift.ts';
import { resolveEscalation } from './escalation-policy.ts';
import { checkChangeMatchers, type HookSettings, resolveHookSettings } from './hook-policy.ts';

// src/main.ts, src/queue and src/approvals/use-cases still import these from here (they are being
// edited elsewhere); everything else imports them from config-types.ts and config-error.ts.
export { isConfigError } from './config-error.ts';
export type { CountersignConfig, EscalationPolicy } from './config-types.ts';

/**
 * Validates a Countersign configuration and resolves it (durations to ms, group references checked).
 * Throws `ConfigError` listing every problem: a bad config fails at start, never at the first click.
 * @example
 * export default defineConfig({ tools: [addNote], agents: { support: { tools: ['add_note'], channel: 'C0OPS',
 *   secret: { env: 'SUPPORT_AGENT_SECRET' } } }, groups: { operators: ['U0OP1'] },
 *   policy: [{ tool: '*', route: 'review', approvers: 'operators' }], authoring: { operators: '*' } });
 */
export function defineConfig(input: ConfigInput): CountersignConfig {
  const shape = checkShape(input);
  // A wrong value (a bad Slack id, a short secret) leaves the structure intact, so the cross-checks
  // below can still run and every problem is reported at once; a wrong structure cannot go further.
  if (!shape.structureIntact) throw new ConfigError(shape.problems);
  const problems = [...shape.problems];
  const names = nameChecks(input, problems);
  checkCrossReferences(input, names, problems);
  const duration = durationReader(problems);
  const defaults = resolveDefaults(input, duration, problems);
  const hooks = resolveHookSettings(input, duration, names, problems);
  checkChangeMatchers(input, problems);
  const { groups, usergroups } = groupLists(input);
  const escalation = resolveEscalation(input, { duration, names, problems, groups, usergroups });
  const drift = resolveDrift(input, duration, names);
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    pipeline: pipelineConfig(input, defaults, groups, hooks),
    agents: input.agents,
    groups,
    usergroups,
    escalation,
    defaults,
    digest: configDigest(input),
    ...drift,
  };
}

/**
 * Each group's member list: the configured ids, or — for a Slack user group — an empty list the
 * user-group directory fills in place (one list per group, shared by every reader).
 */
function groupLists(input: ConfigInput): {
  groups: Record<string, readonly string[]>;
  usergroups: Record<string, string>;
} {
  const groups: Record<string, readonly string[]> = {};
  const usergroups: Record<string, string> = {};
  for (const [name, group] of Object.entries(input.groups)) {
    if ('usergroup' in group) {
      usergroups[name] = group.usergroup;
      groups[name] = [];
    } else {
      groups[name] = group;
    }
  }
  return { groups, usergroups };
}

/** What the pipeline reads of a checked config. */
function pipelineConfig(
  input: ConfigInput,
  defaults: CountersignConfig['defaults'],
  groups: Readonly<Record<string, readonly string[]>>,
  hooks: HookSettings,
): PipelineConfig {
  const authoring = Object.fromEntries(
    Object.entries(input.authoring).map(([group, tools]) => [group, tools === '*' ? ['*'] : [...tools]]),
  );
  return {
    tools: new Map(input.tools.map((tool) => [tool.name, tool])),
    agents: Object.fromEntries(
      Object.entries(input.agents).map(([name, spec]) => [name, { tools: spec.tools }]),
    ),
    groups,
    policy: input.policy,
    authoring,
    limits: { ...DEFAULT_LIMITS, ...input.defaults?.limits },
    maxExpiresInMs: defaults.maxExpiresInMs,
    defaultExpiresInMs: defaults.expiresInMs,
    agentExpiresInMs: defaults.agentExpiresInMs,
    ...hooks,
  };
}
