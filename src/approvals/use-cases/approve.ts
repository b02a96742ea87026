/**
 * approve: one person approves every step of the current version they may approve, one approval per
 * step, bound to the step's id and digest. The run is approved when no review step lacks approvals and
 * nothing is blocked — after the authorize phase is re-run against today's config and data.
 */
import { envelopeOf, type ValidationResult, validateWith } from '../../pipeline/index.ts';
import { approveRights, authorityFor, type RunState } from '../guard.ts';
import { releaseReady } from '../releases.ts';
import { awaitedSteps, blockedSteps } from '../rules.ts';
import type { RunCommit } from '../run-commit.ts';
import { approvalEntry } from '../run-commit.ts';
import type { RunSnapshot } from '../store.ts';
import type { ApprovalRecord, StoredVersion } from '../types.ts';
import {
  type Attempt,
  commitFor,
  decidedState,
  decideRun,
  gate,
  hooksOf,
  refuse,
  type UseCaseContext,
  viewOf,
} from './context.ts';

export interface ApproveInput {
  readonly runId: string;
  readonly version: number;
  readonly userId: string;
}

export function approve(ctx: UseCaseContext, snapshot: RunSnapshot, input: ApproveInput): Attempt {
  const gated = gate(ctx, snapshot, input, 'approve');
  if (!('open' in gated)) return gated;
  const state = gated.open;
  const rights = approveRights(ctx.config, state, input.userId);
  if (!rights.ok) {
    return refuse(ctx, snapshot, state, {
      action: 'approve',
      version: input.version,
      userId: input.userId,
      reason: 'unauthorized',
      detail: rights.reason,
    });
  }
  const { now } = ctx;
  const added: ApprovalRecord[] = rights.fresh.map((step) => ({
    stepId: step.id,
    stepDigest: step.digest,
    userId: input.userId,
    version: state.current.version,
    at: now,
  }));
  const next: RunState = { ...state, approvals: [...state.approvals, ...added] };
  const approvedSteps = added.map((approval) => approval.stepId);
  const keys = ctx.keys.forRun(input.runId);
  const commit = commitFor(ctx, snapshot, input.runId);
  for (const approval of added) commit.hset(keys.approvals, approvalEntry(approval));
  if (added.length > 0) {
    commit.journal(
      {
        type: 'approval',
        userId: input.userId,
        version: state.current.version,
        steps: added.map((approval) => ({ id: approval.stepId, digest: approval.stepDigest })),
      },
      now,
      state.current.plan.digest,
    );
  }
  // Still pending: the approvals may have completed a `continue` step, released in the same commit.
  const awaiting = (version: StoredVersion): Attempt => {
    const released = releaseReady(ctx, commit, next);
    return {
      ...(added.length > 0 || released.releasedNow.length > 0 ? { commit } : {}),
      result: {
        kind: 'awaiting',
        run: viewOf(ctx, input.runId, { ...released.state, current: version }),
        approvedSteps,
      },
    };
  };
  if (!complete(ctx, next, state.current)) return awaiting(state.current);

  // Re-check at the boundary: policy and the tools' checks as they are now, not as they were (the
  // checks ran again before this attempt; the change sets are the stored ones the approvers saw).
  const recheck = unverifiedChecks(
    validateWith(envelopeOf(state.current.plan), { config: ctx.config.pipeline, now }, hooksOf(ctx)),
  );
  if (!recheck.ok) return recheckFailed(ctx, commit, next, input, recheck);
  const rechecked: StoredVersion = { ...state.current, plan: recheck.plan };
  // The policy tightened since the card was posted: more approvals are needed now.
  if (!complete(ctx, next, rechecked)) return { ...awaiting(rechecked), commit };

  const decision = decideRun(ctx, commit, next, { status: 'approved', by: input.userId });
  commit.journal(
    {
      type: 'approved',
      version: state.current.version,
      planDigest: state.current.plan.digest,
      by: input.userId,
    },
    now,
    state.current.plan.digest,
  );
  const run = viewOf(ctx, input.runId, decidedState(next, decision));
  return { commit, decision, result: { kind: 'approved', run, decision } };
}

/** Every review step has its approvals and nothing is blocked. */
function complete(ctx: UseCaseContext, state: RunState, version: StoredVersion): boolean {
  const authority = authorityFor(ctx.config, state);
  return awaitedSteps(version, state.approvals, authority).length === 0 && blockedSteps(version).length === 0;
}

/**
 * Checks that could not run again at approval (failed, timed out) hold the run: it stays pending and
 * says so, and the next approval runs them again. Other unverified marks were there when people
 * approved (the card showed them) and routed their steps to review.
 */
function unverifiedChecks(recheck: ValidationResult): ValidationResult {
  if (!recheck.ok) return recheck;
  const diagnostics = recheck.plan.steps.flatMap((step) =>
    (step.unverified ?? [])
      .filter((entry) => entry.hook === 'checks')
      .map((entry) => ({
        phase: 'authorize' as const,
        code: 'check_failed' as const,
        stepId: step.id,
        message: `step ${step.id}: could not verify: ${entry.reason}`,
      })),
  );
  return diagnostics.length === 0 ? recheck : { ok: false, phase: 'authorize', diagnostics };
}

/** The last approval came in, but the checks run again now fail: the run stays pending and says why. */
function recheckFailed(
  ctx: UseCaseContext,
  commit: RunCommit,
  state: RunState,
  input: ApproveInput,
  recheck: Extract<ValidationResult, { ok: false }>,
): Attempt {
  const detail = recheck.diagnostics.map((d) => d.message).join('; ');
  commit.journal(
    {
      type: 'refused',
      action: 'approve',
      version: state.current.version,
      userId: input.userId,
      reason: 'recheck_failed',
      detail,
    },
    ctx.now,
    state.current.plan.digest,
  );
  const recheckProblem = detail.slice(0, 2000);
  commit.run({ recheck_problem: recheckProblem });
  const run = viewOf(ctx, input.runId, { ...state, fields: { ...state.fields, recheckProblem } });
  return { commit, result: { kind: 'invalid', phase: recheck.phase, diagnostics: recheck.diagnostics, run } };
}
