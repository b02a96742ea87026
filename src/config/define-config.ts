import { z } from 'zod';
import { canonicalJson, sha256Hex } from '../pipeline/canonical-json.ts';
import { DEFAULT_LIMITS, type PipelineConfig, type PlanLimits } from '../pipeline/context.ts';
import { parseDuration } from '../pipeline/duration.ts';
import { CountersignError } from '../pipeline/errors.ts';
import { fieldRegistry } from '../pipeline/fields.ts';
import type { JsonValue } from '../pipeline/json.ts';
import { ID_PATTERN } from '../pipeline/phases/parse.ts';
import { type PolicyRule, ruleName } from '../pipeline/policy.ts';
import type { ToolDefinition } from '../pipeline/tool.ts';

/** A secret given inline (tests, local demo) or read from an environment variable at start. */
export type SecretSource = string | { readonly env: string };

export interface AgentInput {
  /** Tools this agent may plan to call. */
  readonly tools: readonly string[];
  /** Slack channel id its cards are posted to. */
  readonly channel: string;
  /** Shared HMAC secret: submissions are signed with it, decisions carry a receipt signed with it. */
  readonly secret: SecretSource;
  /** How long this agent's plans stay open when a submission does not say (default `defaults.expiresIn`). */
  readonly expiresIn?: string;
}

/**
 * What the people an escalation level notifies may do on the run, beyond their own groups' rights.
 * Without `may`, a level only notifies: being escalated to grants nothing.
 */
export interface EscalationGrantInput {
  /** They may approve steps whose approver group is one of these (`'*'`: any group). */
  readonly approve: '*' | readonly string[];
  /**
   * How one of their approvals counts: `'member'` (default) as one of the N approvals the step's
   * group must give; `'alone'` as enough for the step by itself.
   */
  readonly counts?: 'member' | 'alone';
  /** Whether that includes steps of irreversible tools (default false: never unless granted). */
  readonly irreversible?: boolean;
}

export interface EscalationLevelInput {
  /** Time since the card was posted (or the version created) before this level fires: `'15m'`. */
  readonly after: string;
  /** A group name, or Slack user ids. */
  readonly notify: string | readonly string[];
  /** Also post in this channel. */
  readonly channel?: string;
  /** What the notified people may do on the run (default: nothing, they are only told). */
  readonly may?: EscalationGrantInput;
}

export interface EscalationInput {
  readonly levels: readonly EscalationLevelInput[];
  /** Re-notify the last level `times` more times, `every` apart. */
  readonly repeat?: { readonly times: number; readonly every: string };
  /** Remind the original channel this long after posting, before the first escalation. */
  readonly reminder?: { readonly after: string };
}

export interface DefaultsInput {
  /** How long a plan stays open when the agent does not say (default `'24h'`). */
  readonly expiresIn?: string;
  /** The longest an agent may ask for (default `'7d'`). */
  readonly maxExpiresIn?: string;
  /** A step reported `applying` this long without a result becomes `uncertain` (default `'15m'`). */
  readonly uncertainAfter?: string;
  readonly limits?: Partial<PlanLimits>;
}

export interface ConfigInput {
  readonly tools: readonly ToolDefinition[];
  readonly agents: Readonly<Record<string, AgentInput>>;
  /** Group name → Slack user ids. */
  readonly groups: Readonly<Record<string, readonly string[]>>;
  readonly policy: readonly PolicyRule[];
  /** Group name → tools its members may add or change in an edit (`'*'` for all). */
  readonly authoring: Readonly<Record<string, readonly string[] | '*'>>;
  /** Per agent. */
  readonly escalation?: Readonly<Record<string, EscalationInput>>;
  readonly defaults?: DefaultsInput;
}

/** An escalation level's grant, resolved (see `EscalationGrantInput`). */
export interface EscalationGrant {
  readonly approve: '*' | readonly string[];
  readonly counts: 'member' | 'alone';
  readonly irreversible: boolean;
}

export interface EscalationLevel {
  readonly afterMs: number;
  /** Resolved Slack user ids. */
  readonly notify: readonly string[];
  /** The group name when `notify` named one, for messages. */
  readonly group?: string;
  readonly channel?: string;
  /** What the notified people may do; absent: nothing beyond their own groups' rights. */
  readonly may?: EscalationGrant;
}

export interface EscalationPolicy {
  readonly levels: readonly EscalationLevel[];
  readonly repeat?: { readonly times: number; readonly everyMs: number };
  readonly reminderAfterMs?: number;
}

/** The validated configuration every module reads. */
export interface CountersignConfig {
  readonly pipeline: PipelineConfig;
  readonly agents: Readonly<Record<string, AgentInput>>;
  readonly groups: Readonly<Record<string, readonly string[]>>;
  readonly escalation: Readonly<Record<string, EscalationPolicy>>;
  readonly defaults: {
    readonly expiresInMs: number;
    /** Per agent, where the agent sets its own default (`agents.<name>.expiresIn`). */
    readonly agentExpiresInMs: Readonly<Record<string, number>>;
    readonly maxExpiresInMs: number;
    readonly uncertainAfterMs: number;
  };
  /** SHA-256 of the policy-relevant config (rules, tools and their hook sources): decisions record it. */
  readonly digest: string;
}

/** Raised at start for a configuration that cannot work; lists every problem, not only the first. */
export class ConfigError extends CountersignError {
  override readonly name = 'ConfigError';
  declare readonly code: 'invalid_config';
  constructor(readonly problems: readonly string[]) {
    super('invalid_config', `invalid Countersign config:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export function isConfigError(error: unknown): error is ConfigError {
  return error instanceof ConfigError;
}

const slackId = z
  .string()
  .regex(/^[A-Z0-9][A-Z0-9_]{1,31}$/, 'must be a Slack id such as U024BE7LH or C0OPS');
const durationText = z.string();
const shape = z.strictObject({
  tools: z.array(z.custom<ToolDefinition>((t) => typeof t === 'object' && t !== null && 'name' in t)).min(1),
  agents: z.record(
    z.string().regex(ID_PATTERN, 'agent names are letters, digits, - and _'),
    z.strictObject({
      tools: z.array(z.string()).min(1),
      channel: slackId,
      secret: z.union([
        z.string().min(16, 'must be at least 16 characters'),
        z.strictObject({ env: z.string().min(1) }),
      ]),
      expiresIn: durationText.optional(),
    }),
  ),
  groups: z.record(
    z.string().regex(ID_PATTERN, 'group names are letters, digits, - and _'),
    z.array(slackId),
  ),
  policy: z.array(
    z.strictObject({
      name: z.string().optional(),
      tool: z.union([z.string(), z.array(z.string()).min(1)]),
      when: z.function().optional(),
      route: z.enum(['auto', 'review', 'block']),
      approvers: z.string().optional(),
      approvals: z.int().min(1).optional(),
      distinctFromAuthor: z.boolean().optional(),
      escalatedMayApprove: z.boolean().optional(),
      reason: z.string().optional(),
    }),
  ),
  authoring: z.record(z.string(), z.union([z.literal('*'), z.array(z.string())])),
  escalation: z
    .record(
      z.string(),
      z.strictObject({
        levels: z
          .array(
            z.strictObject({
              after: durationText,
              notify: z.union([z.string(), z.array(slackId).min(1)]),
              channel: slackId.optional(),
              may: z
                .strictObject({
                  approve: z.union([z.literal('*'), z.array(z.string()).min(1)]),
                  counts: z.enum(['member', 'alone']).optional(),
                  irreversible: z.boolean().optional(),
                })
                .optional(),
            }),
          )
          .min(1),
        repeat: z.strictObject({ times: z.int().min(1).max(100), every: durationText }).optional(),
        reminder: z.strictObject({ after: durationText }).optional(),
      }),
    )
    .optional(),
  defaults: z
    .strictObject({
      expiresIn: durationText.optional(),
      maxExpiresIn: durationText.optional(),
      uncertainAfter: durationText.optional(),
      limits: z
        .strictObject({
          maxPlanBytes: z.int().min(1024).optional(),
          maxSteps: z.int().min(1).max(500).optional(),
          maxStringLength: z.int().min(16).optional(),
          maxDepth: z.int().min(2).max(64).optional(),
        })
        .optional(),
    })
    .optional(),
});

/** Issue codes about a value, not the structure: checking can go on past them. */
const VALUE_ISSUES: ReadonlySet<string> = new Set(['invalid_format', 'too_small', 'too_big', 'invalid_key']);

/** `agents.ops.channel: must be a Slack id …`, with array indexes written `policy[0]`. */
function describeIssue(issue: z.core.$ZodIssue): string {
  const where =
    issue.path.reduce<string>(
      (text, key) =>
        typeof key === 'number' ? `${text}[${key}]` : text === '' ? String(key) : `${text}.${String(key)}`,
      '',
    ) || 'config';
  if (issue.code === 'invalid_key') {
    const reason = issue.issues[0]?.message ?? issue.message;
    return `${where}: ${reason}`;
  }
  return `${where}: ${issue.message}`;
}

/**
 * Validates a Countersign configuration and resolves it (durations to ms, group references checked).
 * Throws `ConfigError` listing every problem: a bad config fails at start, never at the first click.
 * @example
 * export default defineConfig({ tools: [addNote], agents: { support: { tools: ['add_note'], channel: 'C0OPS',
 *   secret: { env: 'SUPPORT_AGENT_SECRET' } } }, groups: { operators: ['U0OP1'] },
 *   policy: [{ tool: '*', route: 'review', approvers: 'operators' }], authoring: { operators: '*' } });
 */
export function defineConfig(input: ConfigInput): CountersignConfig {
  const parsed = shape.safeParse(input);
  const problems: string[] = parsed.success ? [] : parsed.error.issues.map(describeIssue);
  // A wrong value (a bad Slack id, a short secret) leaves the structure intact, so the cross-checks
  // below can still run and every problem is reported at once; a wrong structure cannot go further.
  if (!parsed.success && !parsed.error.issues.every((issue) => VALUE_ISSUES.has(issue.code))) {
    throw new ConfigError(problems);
  }
  const toolNames = new Set<string>();
  for (const tool of input.tools) {
    if (toolNames.has(tool.name)) problems.push(`tools: ${tool.name} is defined twice`);
    toolNames.add(tool.name);
  }
  const groupNames = new Set(Object.keys(input.groups));
  const knownTool = (where: string, name: string) => {
    if (name !== '*' && !toolNames.has(name)) problems.push(`${where}: unknown tool ${JSON.stringify(name)}`);
  };
  const knownGroup = (where: string, name: string) => {
    if (!groupNames.has(name)) problems.push(`${where}: unknown group ${JSON.stringify(name)}`);
  };

  for (const [agent, spec] of Object.entries(input.agents)) {
    for (const tool of spec.tools) {
      if (tool === '*') problems.push(`agents.${agent}.tools: list tools by name ('*' is not allowed here)`);
      else knownTool(`agents.${agent}.tools`, tool);
    }
  }
  input.policy.forEach((policyRule, index) => {
    const where = `policy[${index}] (${ruleName(policyRule, index)})`;
    for (const tool of typeof policyRule.tool === 'string' ? [policyRule.tool] : policyRule.tool)
      knownTool(where, tool);
    if (policyRule.route === 'review') {
      if (policyRule.approvers === undefined) {
        problems.push(`${where}: a review rule needs approvers (a group name)`);
      } else {
        knownGroup(where, policyRule.approvers);
        // Approvals come from distinct people, so a member listed twice counts once.
        const size = new Set(input.groups[policyRule.approvers]).size;
        const needed = policyRule.approvals ?? 1;
        if (groupNames.has(policyRule.approvers) && size < needed) {
          problems.push(
            `${where}: needs ${needed} approvals but group ${policyRule.approvers} has ${size} distinct member(s)`,
          );
        }
      }
    } else {
      if (policyRule.approvers !== undefined || policyRule.approvals !== undefined) {
        problems.push(`${where}: approvers/approvals only apply to route 'review'`);
      }
      if (policyRule.escalatedMayApprove !== undefined) {
        problems.push(`${where}: escalatedMayApprove only applies to route 'review'`);
      }
    }
  });
  for (const [group, tools] of Object.entries(input.authoring)) {
    knownGroup('authoring', group);
    if (tools !== '*') for (const tool of tools) knownTool(`authoring.${group}`, tool);
  }

  /** Milliseconds, or 0 after recording a problem. */
  const duration = (where: string, text: string | undefined, fallback: string): number => {
    const ms = parseDuration(text ?? fallback);
    if (ms === undefined) {
      problems.push(
        `${where}: ${JSON.stringify(text)} is not a duration (write it like '15m', '24h' or '1h30m')`,
      );
      return 0;
    }
    if (ms === 0) problems.push(`${where}: must be longer than zero`);
    return ms;
  };
  const defaults = {
    expiresInMs: duration('defaults.expiresIn', input.defaults?.expiresIn, '24h'),
    maxExpiresInMs: duration('defaults.maxExpiresIn', input.defaults?.maxExpiresIn, '7d'),
    uncertainAfterMs: duration('defaults.uncertainAfter', input.defaults?.uncertainAfter, '15m'),
  };
  if (defaults.expiresInMs > defaults.maxExpiresInMs) {
    problems.push('defaults: expiresIn is longer than maxExpiresIn');
  }
  const agentExpiresInMs: Record<string, number> = {};
  for (const [agent, spec] of Object.entries(input.agents)) {
    if (spec.expiresIn === undefined) continue;
    const ms = duration(`agents.${agent}.expiresIn`, spec.expiresIn, '');
    if (ms > defaults.maxExpiresInMs) problems.push(`agents.${agent}.expiresIn: is longer than maxExpiresIn`);
    agentExpiresInMs[agent] = ms;
  }

  const escalation: Record<string, EscalationPolicy> = {};
  for (const [agent, spec] of Object.entries(input.escalation ?? {})) {
    const where = `escalation.${agent}`;
    if (input.agents[agent] === undefined) problems.push(`${where}: unknown agent ${JSON.stringify(agent)}`);
    let previous = 0;
    const levels = spec.levels.map((level, index): EscalationLevel => {
      const afterMs = duration(`${where}.levels[${index}].after`, level.after, '');
      if (afterMs > 0 && afterMs <= previous)
        problems.push(`${where}.levels[${index}]: must come after the level before it`);
      previous = afterMs;
      const may = level.may && {
        approve: level.may.approve === '*' ? ('*' as const) : [...level.may.approve],
        counts: level.may.counts ?? 'member',
        irreversible: level.may.irreversible ?? false,
      };
      if (may !== undefined && may.approve !== '*') {
        for (const group of may.approve) knownGroup(`${where}.levels[${index}].may.approve`, group);
      }
      const rest = {
        ...(level.channel === undefined ? {} : { channel: level.channel }),
        ...(may === undefined ? {} : { may }),
      };
      if (typeof level.notify === 'string') {
        knownGroup(`${where}.levels[${index}].notify`, level.notify);
        if (input.groups[level.notify]?.length === 0) {
          problems.push(`${where}.levels[${index}].notify: group ${level.notify} has no members to notify`);
        }
        return { afterMs, notify: input.groups[level.notify] ?? [], group: level.notify, ...rest };
      }
      return { afterMs, notify: level.notify, ...rest };
    });
    const firstAfter = levels[0]?.afterMs ?? 0;
    const reminderAfterMs = spec.reminder && duration(`${where}.reminder.after`, spec.reminder.after, '');
    // Compared only when both are valid durations; an invalid one is already reported.
    if (
      reminderAfterMs !== undefined &&
      reminderAfterMs > 0 &&
      firstAfter > 0 &&
      reminderAfterMs >= firstAfter
    ) {
      problems.push(`${where}.reminder: must come before the first escalation level`);
    }
    escalation[agent] = {
      levels,
      ...(spec.repeat === undefined
        ? {}
        : {
            repeat: {
              times: spec.repeat.times,
              everyMs: duration(`${where}.repeat.every`, spec.repeat.every, ''),
            },
          }),
      ...(reminderAfterMs === undefined ? {} : { reminderAfterMs }),
    };
  }

  if (problems.length > 0) throw new ConfigError(problems);

  const authoring = Object.fromEntries(
    Object.entries(input.authoring).map(([group, tools]) => [group, tools === '*' ? ['*'] : [...tools]]),
  );
  const pipeline: PipelineConfig = {
    tools: new Map(input.tools.map((tool) => [tool.name, tool])),
    agents: Object.fromEntries(
      Object.entries(input.agents).map(([name, spec]) => [name, { tools: spec.tools }]),
    ),
    groups: input.groups,
    policy: input.policy,
    authoring,
    limits: { ...DEFAULT_LIMITS, ...input.defaults?.limits },
    maxExpiresInMs: defaults.maxExpiresInMs,
    defaultExpiresInMs: defaults.expiresInMs,
    agentExpiresInMs,
  };
  return {
    pipeline,
    agents: input.agents,
    groups: input.groups,
    escalation,
    defaults: { ...defaults, agentExpiresInMs },
    digest: configDigest(input),
  };
}

/** Digest over everything that decides a route or a check, including hook sources. */
function configDigest(input: ConfigInput): string {
  const source = (fn: unknown) => (typeof fn === 'function' ? fn.toString() : null);
  return sha256Hex(
    canonicalJson({
      tools: input.tools.map((tool) => ({
        name: tool.name,
        effect: tool.effect,
        // With field metadata, so a money field's currency is part of what was approved under.
        args: JSON.stringify(z.toJSONSchema(tool.args, { unrepresentable: 'any', metadata: fieldRegistry })),
        checks: source(tool.checks),
      })),
      agents: Object.fromEntries(Object.entries(input.agents).map(([name, spec]) => [name, [...spec.tools]])),
      groups: Object.fromEntries(Object.entries(input.groups).map(([name, ids]) => [name, [...ids]])),
      policy: input.policy.map((policyRule, index) => ({
        name: ruleName(policyRule, index),
        tool: typeof policyRule.tool === 'string' ? policyRule.tool : [...policyRule.tool],
        when: source(policyRule.when),
        route: policyRule.route,
        approvers: policyRule.approvers ?? null,
        approvals: policyRule.approvals ?? 1,
        distinctFromAuthor: policyRule.distinctFromAuthor ?? false,
        // Only when set: configs that do not use it keep the digest they had.
        ...(policyRule.escalatedMayApprove === false ? { escalatedMayApprove: false } : {}),
      })),
      // What an escalation lets people approve decides approvals as much as the groups do; a level that
      // only notifies decides nothing, and leaves the digest as it was.
      ...escalationGrantsDigestPart(input.escalation),
      authoring: Object.fromEntries(
        Object.entries(input.authoring).map(([group, tools]) => [group, tools === '*' ? '*' : [...tools]]),
      ),
    }),
  );
}

/**
 * Resolves an agent's secret from config or the environment; undefined when the variable is unset or
 * empty (`FREIGHT_AGENT_SECRET=` in a compose file must not become an empty HMAC key).
 */
export function resolveSecret(
  source: SecretSource,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const secret = typeof source === 'string' ? source : env[source.env];
  return secret === '' ? undefined : secret;
}

/** The escalation grants, for the config digest: `{}` when no level grants anything. */
function escalationGrantsDigestPart(escalation: ConfigInput['escalation']): { escalation?: JsonValue } {
  const grants = Object.entries(escalation ?? {}).flatMap(([agent, spec]) =>
    spec.levels.flatMap((level, index) =>
      level.may === undefined
        ? []
        : [
            {
              agent,
              level: index + 1,
              notify: typeof level.notify === 'string' ? level.notify : [...level.notify],
              approve: level.may.approve === '*' ? '*' : [...level.may.approve],
              counts: level.may.counts ?? 'member',
              irreversible: level.may.irreversible ?? false,
            },
          ],
    ),
  );
  return grants.length === 0 ? {} : { escalation: grants };
}
