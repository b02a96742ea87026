import type { z } from 'zod';
import { type ChangeMatcher, matchesChanges } from './change-matcher.ts';
import type { ChangeSet } from './change-set.ts';
import type { JsonObject } from './json.ts';
import type { PlanEnvelope, Route } from './plan.ts';
import type { ToolArgsSchema, ToolDefinition } from './tool.ts';

/** What a policy predicate sees besides the arguments. */
export interface PolicyContext {
  readonly stepId: string;
  readonly plan: PlanEnvelope;
  /** What the step will change, from its tool's `preview` (absent without one, or when it failed). */
  readonly changeSet?: ChangeSet;
}

/**
 * One gate rule. Rules are tried in order; the first whose `tool`, `when` and `changes` match decides
 * the route. Risk follows meaning: `when` looks at the arguments (a refund over $500 routes
 * differently), `changes` at what the step will change in the world (src/pipeline/change-matcher.ts).
 */
export interface PolicyRule {
  /** Shown on the card and in the journal; defaults to `<tools>#<position>`. */
  readonly name?: string;
  /** Tool name(s) this rule covers; `'*'` covers every tool. */
  readonly tool: string | readonly string[];
  /** Argument predicate; omitted means "always". Called only with arguments that passed `type`. */
  when?(args: JsonObject, ctx: PolicyContext): boolean;
  /**
   * Change-set predicate: a changed path, an entity type, a violated invariant, an unknown impact.
   * A rule with it never matches a step without a change set.
   * @example { tool: '*', changes: { paths: ['delivery.date'] }, route: 'review', approvers: 'leads' }
   */
  readonly changes?: ChangeMatcher;
  readonly route: 'auto' | 'review' | 'block';
  /** Group whose members may approve (required for `review`). */
  readonly approvers?: string;
  /** How many distinct approvers are needed (default 1). */
  readonly approvals?: number;
  /** Bar the step's human author from approving it (default false). */
  readonly distinctFromAuthor?: boolean;
  /**
   * Whether people a run was escalated to may approve this rule's steps, as far as their escalation
   * level grants (default true). False keeps these steps to members of `approvers` only.
   */
  readonly escalatedMayApprove?: boolean;
  /** Why the step is blocked (for `block`). */
  readonly reason?: string;
  /**
   * True: the rule's steps may run before the whole plan is decided — each is released to the agent
   * once its own approvals are complete (at once for `auto`) and every step it depends on is reported
   * applied. Only for tools whose effect is `read`, or `write` listed in the config's `internalTools`;
   * `defineConfig` refuses a rule that could cover any other tool (never `irreversible`).
   */
  readonly continue?: boolean;
}

/**
 * A rule for one tool whose predicate sees that tool's typed arguments.
 * @example rule(issueRefund, { when: (a) => a.amount > 50_000, route: 'review', approvers: 'finance', approvals: 2 })
 */
export function rule<S extends ToolArgsSchema>(
  tool: ToolDefinition<S>,
  spec: Omit<PolicyRule, 'tool' | 'when'> & { when?: (args: z.output<S>, ctx: PolicyContext) => boolean },
): PolicyRule {
  const { when, ...rest } = spec;
  // Passed through as is (not wrapped) so the config digest hashes the predicate's own source.
  return {
    ...rest,
    tool: tool.name,
    ...(when === undefined ? {} : { when: when as NonNullable<PolicyRule['when']> }),
  };
}

/** The name a rule is known by. */
export function ruleName(policyRule: PolicyRule, index: number): string {
  if (policyRule.name !== undefined) return policyRule.name;
  const tools = typeof policyRule.tool === 'string' ? policyRule.tool : policyRule.tool.join(',');
  return `${tools}#${index + 1}`;
}

function coversTool(policyRule: PolicyRule, tool: string): boolean {
  const tools = typeof policyRule.tool === 'string' ? [policyRule.tool] : policyRule.tool;
  return tools.includes('*') || tools.includes(tool);
}

export type RouteResult = { ok: true; route: Route } | { ok: false; message: string };

/**
 * Routes one step (with its change set, when its tool previewed one): the first matching rule wins; no
 * matching rule blocks the step (fail closed).
 * A predicate that throws is a configuration bug and is reported, never swallowed into a route.
 */
export function routeStep(
  step: { id: string; tool: string; args: JsonObject },
  plan: PlanEnvelope,
  rules: readonly PolicyRule[],
  changeSet?: ChangeSet,
): RouteResult {
  for (const [index, policyRule] of rules.entries()) {
    if (!coversTool(policyRule, step.tool)) continue;
    if (policyRule.changes !== undefined && !matchesChanges(policyRule.changes, changeSet)) continue;
    if (policyRule.when !== undefined) {
      let matches: boolean;
      try {
        const policyContext: PolicyContext =
          changeSet === undefined ? { stepId: step.id, plan } : { stepId: step.id, plan, changeSet };
        matches = policyRule.when(step.args, policyContext);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        return {
          ok: false,
          message: `policy rule ${ruleName(policyRule, index)} failed on step ${step.id}: ${reason}`,
        };
      }
      if (!matches) continue;
    }
    return { ok: true, route: routeOf(policyRule, index) };
  }
  return {
    ok: true,
    route: { kind: 'block', rule: 'default', reason: `no policy rule covers tool ${step.tool}` },
  };
}

// A rule always gives the same route, so each is built and frozen once (validate deep-freezes plans).
const routes = new WeakMap<PolicyRule, Route>();

function routeOf(policyRule: PolicyRule, index: number): Route {
  const cached = routes.get(policyRule);
  if (cached !== undefined) return cached;
  const name = ruleName(policyRule, index);
  let route: Route;
  switch (policyRule.route) {
    case 'auto':
      route = { kind: 'auto', rule: name, ...(policyRule.continue === true ? { continue: true } : {}) };
      break;
    case 'block':
      route = { kind: 'block', rule: name, reason: policyRule.reason ?? `blocked by policy rule ${name}` };
      break;
    case 'review':
      route = {
        kind: 'review',
        rule: name,
        group: policyRule.approvers ?? '',
        approvals: policyRule.approvals ?? 1,
        distinctFromAuthor: policyRule.distinctFromAuthor ?? false,
        ...(policyRule.escalatedMayApprove === false ? { escalatedMayApprove: false } : {}),
        ...(policyRule.continue === true ? { continue: true } : {}),
      };
      break;
  }
  Object.freeze(route);
  routes.set(policyRule, route);
  return route;
}
