import { canonicalJson, sha256Hex } from './canonical-json.ts';
import type { PlanEnvelope, Step } from './plan.ts';

/** The part of a step its digest covers: what it does, not its id (an id can be reused by an edit). */
export type DigestedStep = Pick<Step, 'tool' | 'args'>;

/** The part of a plan its digest covers. `summary` and `context` are prose for people and are left out. */
export type DigestedPlan = Pick<PlanEnvelope, 'runId' | 'agent' | 'expiresAt'> & {
  readonly steps: readonly Pick<Step, 'id' | 'tool' | 'args'>[];
};

/**
 * SHA-256 hex of canonical `{ "args", "tool" }` (docs/architecture.md §1). Approvals are bound to it, and an
 * executor re-checks it right before the step's effect.
 *
 * @example stepDigest({ tool: 'refund', args: { amount: 500 } })
 */
export function stepDigest(step: DigestedStep): string {
  return sha256Hex(canonicalJson({ args: step.args, tool: step.tool }));
}

/**
 * SHA-256 hex of canonical `{ "agent", "expires_at", "run_id", "steps": [{ "args", "id", "tool" }] }`
 * (docs/architecture.md §1): the bytes a decision is sealed to.
 */
export function planDigest(plan: DigestedPlan): string {
  return sha256Hex(
    canonicalJson({
      agent: plan.agent,
      expires_at: plan.expiresAt,
      run_id: plan.runId,
      steps: plan.steps.map((step) => ({ args: step.args, id: step.id, tool: step.tool })),
    }),
  );
}

/**
 * Every step digest and the plan digest in one pass, canonicalizing each step's args once. Gives the
 * same results as `stepDigest` and `planDigest` (the tests hold it to that); the key order in the
 * templates below is the sorted order the contract requires.
 */
export function digestPlan(plan: DigestedPlan): { readonly steps: readonly string[]; readonly plan: string } {
  const steps: string[] = [];
  const entries: string[] = [];
  for (const step of plan.steps) {
    const args = canonicalJson(step.args);
    const tool = canonicalJson(step.tool);
    steps.push(sha256Hex(`{"args":${args},"tool":${tool}}`));
    entries.push(`{"args":${args},"id":${canonicalJson(step.id)},"tool":${tool}}`);
  }
  const head = `{"agent":${canonicalJson(plan.agent)},"expires_at":${canonicalJson(plan.expiresAt)}`;
  return {
    steps,
    plan: sha256Hex(`${head},"run_id":${canonicalJson(plan.runId)},"steps":[${entries.join(',')}]}`),
  };
}
