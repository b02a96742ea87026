/**
 * The config's side of tool hooks (docs/tool-hooks.md): the hooks' time budget, the group that reviews
 * steps whose hooks could not verify them, and change-set matchers in policy rules. Problems are
 * appended to the list they are given, so every one is reported at once.
 */
import { CHANGE_MATCHER_KEYS } from '../pipeline/change-matcher.ts';
import { HOOK_NAMES } from '../pipeline/hooks.ts';
import { ruleName } from '../pipeline/policy.ts';
import type { ToolDefinition } from '../pipeline/tool.ts';
import type { DurationReader } from './config-durations.ts';
import type { ConfigInput } from './config-types.ts';
import type { NameChecks } from './cross-references.ts';

/** The most a hook may be given: a plan waits for its slowest hook before anyone sees it. */
const MAX_HOOK_TIMEOUT_MS = 60_000;

/** What the pipeline reads of the hooks' settings. */
export interface HookSettings {
  readonly hookTimeoutMs: number;
  readonly unverifiedApprovers?: string;
}

/** `defaults.hookTimeout` (default `'2s'`) and `defaults.unverifiedApprovers`, checked. */
export function resolveHookSettings(
  input: ConfigInput,
  duration: DurationReader,
  names: NameChecks,
  problems: string[],
): HookSettings {
  const hookTimeoutMs = duration('defaults.hookTimeout', input.defaults?.hookTimeout, '2s');
  if (hookTimeoutMs > MAX_HOOK_TIMEOUT_MS) {
    problems.push(
      `defaults.hookTimeout: ${JSON.stringify(input.defaults?.hookTimeout)} is longer than 1m (a plan waits for its slowest hook)`,
    );
  }
  const group = input.defaults?.unverifiedApprovers;
  if (group !== undefined) names.group('defaults.unverifiedApprovers', group);
  else {
    const needing = autoRulesOverHookedTools(input);
    if (needing.length > 0) {
      problems.push(
        `defaults.unverifiedApprovers: name the group that reviews a step whose hooks failed or timed out — ${needing.join('; ')}, and no group in authoring may write it (an unverified step is never let through)`,
      );
    }
  }
  return { hookTimeoutMs, ...(group === undefined ? {} : { unverifiedApprovers: group }) };
}

function coveredTools(input: ConfigInput, tool: string | readonly string[]): ToolDefinition[] {
  const named = typeof tool === 'string' ? [tool] : tool;
  return named.includes('*')
    ? [...input.tools]
    : input.tools.filter((candidate) => named.includes(candidate.name));
}

/**
 * "rule notes-auto lets add_note (preview) through": the auto rules that could meet an unverified step
 * nobody may review (no group in `authoring` may write its tool, the fallback of `unverifiedReviewers`).
 */
function autoRulesOverHookedTools(input: ConfigInput): string[] {
  const authored = (tool: string) =>
    Object.values(input.authoring).some((tools) => tools === '*' || tools.includes(tool));
  return input.policy.flatMap((policyRule, index) => {
    if (policyRule.route !== 'auto') return [];
    const hooked = coveredTools(input, policyRule.tool).flatMap((tool) => {
      const hooks = HOOK_NAMES.filter((hook) => tool[hook] !== undefined);
      return hooks.length === 0 || authored(tool.name) ? [] : [`${tool.name} (${hooks.join(', ')})`];
    });
    if (hooked.length === 0) return [];
    return [`rule ${ruleName(policyRule, index)} lets ${hooked.join(', ')} through`];
  });
}

/**
 * A change-set matcher names at least one criterion, and covers at least one tool with a `preview`
 * (without one a step never has a change set, so the rule could never match).
 */
export function checkChangeMatchers(input: ConfigInput, problems: string[]): void {
  input.policy.forEach((policyRule, index) => {
    if (policyRule.changes === undefined) return;
    const where = `policy[${index}] (${ruleName(policyRule, index)}).changes`;
    if (!CHANGE_MATCHER_KEYS.some((key) => policyRule.changes?.[key] !== undefined)) {
      problems.push(`${where}: name at least one of ${CHANGE_MATCHER_KEYS.join(', ')}`);
    }
    if (!coveredTools(input, policyRule.tool).some((tool) => tool.preview !== undefined)) {
      problems.push(`${where}: none of the tools it covers has a preview, so it can never match`);
    }
  });
}
