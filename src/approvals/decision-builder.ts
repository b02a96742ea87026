import {
  type Decision,
  type DecisionStatus,
  type Diagnostic,
  type Phase,
  signDecision,
  type UnsignedDecision,
} from '../pipeline/index.ts';
import type { Authority } from './rules.ts';
import { countedApprovers } from './rules.ts';
import type { ApprovalRecord, StoredVersion } from './types.ts';

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
}

/**
 * Builds and signs the decision an agent receives: the exact version decided on, its digests, and for
 * each step the approvals that counted (eligible people, bound to the step's digest).
 */
export function buildDecision(input: DecisionInput, secret: string): Decision {
  const { version } = input;
  const approvals = input.approvals ?? [];
  const authority = input.authority ?? { groups: {}, escalatedTo: [] };
  const unsigned: UnsignedDecision = {
    runId: input.runId,
    agent: input.agent,
    status: input.status,
    version: version?.version ?? null,
    plan:
      version === undefined
        ? null
        : {
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
                  .filter((approval) => approval.stepDigest === step.digest && counted.has(approval.userId))
                  .sort((a, b) => a.at - b.at)
                  .map((approval) => ({ userId: approval.userId, at: new Date(approval.at).toISOString() })),
              };
            }),
          },
    decidedAt: new Date(input.decidedAt).toISOString(),
    decidedBy: input.decidedBy,
    reason: input.reason ?? null,
    phase: input.phase ?? null,
    diagnostics: input.diagnostics ?? [],
    configDigest: input.configDigest,
  };
  return signDecision(unsigned, secret);
}
