import { canonicalJson, sha256Hex } from './canonical-json.ts';
import type { PlanEnvelope, Step } from './plan.ts';

/**
 * The part of a step its digest covers: what it does and what it waits for, not its id (approvals are
 * keyed by the id).
 */
export type DigestedStep = Pick<Step, 'tool' | 'args'> & {
  readonly dependsOn?: readonly string[] | undefined;
};

/** The part of a plan its digest covers. `summary` and `context` are prose for people and are left out. */
export type DigestedPlan = Pick<PlanEnvelope, 'runId' | 'agent' | 'expiresAt'> & {
  readonly steps: readonly (Pick<Step, 'id' | 'tool' | 'args'> & {
    readonly dependsOn?: readonly string[] | undefined;
  })[];
};

/**
 * A step's dependencies as the digests cover them (docs/canonical-json.md, contract 2): sorted ids,
 * without duplicates, or undefined when there are none — so a step without dependencies has the same
 * digest as under contract 1.
 */
export function digestedDependencies(dependsOn: readonly string[] | undefined): string[] | undefined {
  if (dependsOn === undefined || dependsOn.length === 0) return undefined;
  return [...new Set(dependsOn)].sort();
}

/**
 * SHA-256 hex of canonical `{ "args", "depends_on"?, "tool" }` (docs/canonical-json.md). Approvals are
 * bound to it, and an executor re-checks it right before the step's effect.
 *
 * @example stepDigest({ tool: 'refund', args: { amount: 500 } })
 */
export function stepDigest(step: DigestedStep): string {
  const dependsOn = digestedDependencies(step.dependsOn);
  return sha256Hex(
    canonicalJson(
      dependsOn === undefined
        ? { args: step.args, tool: step.tool }
        : { args: step.args, depends_on: dependsOn, tool: step.tool },
    ),
  );
}

/**
 * SHA-256 hex of canonical `{ "agent", "expires_at", "run_id", "steps": [{ "args", "depends_on"?, "id",
 * "tool" }] }` (docs/canonical-json.md): the bytes a decision is sealed to.
 */
export function planDigest(plan: DigestedPlan): string {
  return sha256Hex(
    canonicalJson({
      agent: plan.agent,
      expires_at: plan.expiresAt,
      run_id: plan.runId,
      steps: plan.steps.map((step) => {
        const dependsOn = digestedDependencies(step.dependsOn);
        return dependsOn === undefined
          ? { args: step.args, id: step.id, tool: step.tool }
          : { args: step.args, depends_on: dependsOn, id: step.id, tool: step.tool };
      }),
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
    const dependsOn = digestedDependencies(step.dependsOn);
    const deps = dependsOn === undefined ? '' : `,"depends_on":${canonicalJson(dependsOn)}`;
    steps.push(sha256Hex(`{"args":${args}${deps},"tool":${tool}}`));
    entries.push(`{"args":${args}${deps},"id":${canonicalJson(step.id)},"tool":${tool}}`);
  }
  const head = `{"agent":${canonicalJson(plan.agent)},"expires_at":${canonicalJson(plan.expiresAt)}`;
  return {
    steps,
    plan: sha256Hex(`${head},"run_id":${canonicalJson(plan.runId)},"steps":[${entries.join(',')}]}`),
  };
}
