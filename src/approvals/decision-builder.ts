/**
 * The decision an agent receives, and how a transition seals it: built from the version decided on,
 * signed, and written with the run's terminal status in the same commit.
 */
import type {
  Decision,
  DecisionPlan,
  DecisionProvenance,
  DecisionStatus,
  Diagnostic,
  Phase,
  ReleasedStep,
  UnsignedDecision,
} from '../pipeline/index.ts';
import type { RunKeys } from './keys.ts';
import type { Authority } from './rules.ts';
import { countedApprovers, isApprovalOf } from './rules.ts';
import type { RunCommit, RunFieldUpdate } from './run-commit.ts';
import type { ApprovalRecord, StoredVersion } from './types.ts';

/** Signs an unsigned decision (Countersign's key; see src/pipeline/receipt.ts). */
export type DecisionSigner = (unsigned: UnsignedDecision) => Decision;

export interface DecisionInput {
  readonly runId: string;
  readonly agent: string;
  readonly status: DecisionStatus;
  readonly version?: StoredVersion;
  readonly approvals?: readonly ApprovalRecord[];
  readonly authority?: Authority;
  readonly decidedAt: number;
  readonly decidedBy: string | null;
  readonly reason?: string;
  readonly phase?: Phase;
  readonly diagnostics?: readonly Diagnostic[];
  readonly configDigest: string;
  /** Steps released before the decision, with the agent's report of each at this moment. */
  readonly released?: readonly ReleasedStep[];
}

/**
 * The decision an agent receives, unsigned: the exact version decided on, its digests, and for each
 * step who wrote it and the approvals that counted (entitled people, given to that step id at its
 * digest). Every field is JSON, null never undefined.
 */
export function buildDecision(input: DecisionInput): UnsignedDecision {
  const { version } = input;
  const approvals = input.approvals ?? [];
  const authority: Authority = input.authority ?? { groups: {}, escalated: [], effectOf: () => undefined };
  return {
    runId: input.runId,
    agent: input.agent,
    status: input.status,
    version: version?.version ?? null,
    plan: version === undefined ? null : decisionPlanOf(version, approvals, authority),
    decidedAt: new Date(input.decidedAt).toISOString(),
    decidedBy: input.decidedBy,
    reason: input.reason ?? null,
    phase: input.phase ?? null,
    diagnostics: input.diagnostics ?? [],
    configDigest: input.configDigest,
    ...(input.released === undefined || input.released.length === 0 ? {} : { released: input.released }),
  };
}

/**
 * A version as a decision or a release carries it: each step with its digest, route, the approvals
 * that counted (entitled people, given to that step id at its digest, oldest first), who wrote it, and
 * — for a step with a change set — its preconditions (the target at the version it was previewed at).
 */
export function decisionPlanOf(
  version: StoredVersion,
  approvals: readonly ApprovalRecord[],
  authority: Authority,
): DecisionPlan {
  return {
    runId: version.plan.runId,
    agent: version.plan.agent,
    expiresAt: version.plan.expiresAt,
    digest: version.plan.digest,
    steps: version.plan.steps.map((step) => {
      const counted = new Set(countedApprovers(step, version, approvals, authority));
      return {
        id: step.id,
        tool: step.tool,
        args: step.args,
        digest: step.digest,
        route: step.route.kind,
        approvals: approvals
          .filter((approval) => isApprovalOf(approval, step) && counted.has(approval.userId))
          .sort((a, b) => a.at - b.at)
          .filter(
            (approval, index, sorted) =>
              sorted.findIndex((other) => other.userId === approval.userId) === index,
          )
          .map((approval) => ({ userId: approval.userId, at: new Date(approval.at).toISOString() })),
        provenance: provenanceOf(version, step.id),
        ...(step.dependsOn === undefined ? {} : { dependsOn: step.dependsOn }),
        // The target as previewed, as the approvers saw it: the executor checks it before the effect.
        ...(step.changeSet === undefined
          ? {}
          : {
              preconditions: [
                {
                  type: step.changeSet.target.type,
                  id: step.changeSet.target.id,
                  version: step.changeSet.target.version,
                },
              ],
            }),
      };
    }),
  };
}

/**
 * Seals a signed decision into a transition's commit: the run's terminal status and who decided, the
 * decision itself, and the wake-up for agents waiting on it — all or nothing with the rest of the commit.
 */
export function sealDecision(
  commit: RunCommit,
  keys: Pick<RunKeys, 'decision'>,
  decidedChannel: string,
  decision: Decision,
  extra: RunFieldUpdate = {},
): void {
  commit
    .run({
      status: decision.status,
      decided_by: decision.decidedBy ?? '',
      decided_at: Date.parse(decision.decidedAt),
      ...(decision.reason === null ? {} : { reason: decision.reason }),
      ...extra,
    })
    .set(keys.decision, JSON.stringify(decision))
    .publish(decidedChannel, decision.runId);
}

/** A step's provenance as the decision carries it (JSON, null never undefined). */
function provenanceOf(version: StoredVersion, stepId: string): DecisionProvenance {
  const provenance = version.provenance[stepId];
  if (provenance === undefined || provenance.by === 'agent') {
    return { by: 'agent', userId: null, version: provenance?.version ?? 1, change: null };
  }
  return {
    by: 'user',
    userId: provenance.userId,
    version: provenance.version,
    change: provenance.change ?? null,
  };
}
