/**
 * What every use case decides with: a consistent snapshot of the run (read by the caller), its input,
 * and this context. A use case is a pure function to an `Attempt` — the writes to commit (if any), the
 * answer, and the decision the commit seals; the service runs it in the store's commit loop.
 */
import type { CountersignConfig } from '../../config/define-config.ts';
import type { Decision, DecisionStatus, HookResults } from '../../pipeline/index.ts';
import { buildDecision, type DecisionSigner, sealDecision } from '../decision-builder.ts';
import { authorityFor, checkAction, type RunState } from '../guard.ts';
import type { Keys } from '../keys.ts';
import { type ReleaseSigner, releasedSteps } from '../releases.ts';
import { RunCommit, type RunFieldUpdate } from '../run-commit.ts';
import { projectRun, type RunStateInput } from '../run-view.ts';
import type { RunSnapshot } from '../store.ts';
import type { RunView, UseCaseResult } from '../types.ts';

export interface UseCaseContext {
  readonly config: CountersignConfig;
  readonly keys: Keys;
  /** Milliseconds since the epoch: Redis's `TIME`, read with the snapshot of each attempt. */
  readonly now: number;
  readonly sign: DecisionSigner;
  /** Signs a step's early release (the same key and receipt scheme as decisions). */
  readonly signRelease: ReleaseSigner;
  /**
   * The tools' hook results, gathered by the command before its attempts for the plan it expects to
   * decide on (hook-gathering.ts). Absent or for other bytes, the steps count as unverified.
   */
  readonly hooks?: HookResults | undefined;
}

const NO_HOOKS: HookResults = new Map();

/** The hook results an attempt re-checks with (none gathered: every hooked step is unverified). */
export function hooksOf(ctx: { readonly hooks?: HookResults | undefined }): HookResults {
  return ctx.hooks ?? NO_HOOKS;
}

/** One attempt at a use case. */
export interface Attempt<R = UseCaseResult> {
  readonly commit?: RunCommit;
  readonly result: R;
  /** The decision the commit seals; delivered once committed. */
  readonly decision?: Decision;
}

/**
 * A fresh commit for the run, chained from the snapshot's journal head. Decided on a pending run
 * before its expiry, it must also land before the expiry (by Redis's time, checked in the commit):
 * otherwise the loop reads again and the use case decides past it — a click expires the run.
 */
export function commitFor(ctx: UseCaseContext, snapshot: RunSnapshot, runId: string): RunCommit {
  const fields = snapshot.fields;
  const open = fields !== undefined && fields.status === 'pending' && ctx.now < fields.expiresAt;
  return new RunCommit(ctx.keys.forRun(runId), snapshot, open ? fields.expiresAt : undefined);
}

/** The run as people see it, from a state a use case read or is about to write. */
export function viewOf(ctx: UseCaseContext, runId: string, state: RunStateInput): RunView {
  return projectRun(ctx.config, runId, state);
}

/** The state after a decision, for the answer's view. */
export function decidedState(state: RunState, decision: Decision): RunState {
  return {
    ...state,
    fields: {
      ...state.fields,
      status: decision.status,
      ...(decision.decidedBy === null ? {} : { decidedBy: decision.decidedBy }),
      decidedAt: Date.parse(decision.decidedAt),
      ...(decision.reason === null ? {} : { reason: decision.reason }),
    },
  };
}

/**
 * Decides a run that has a version: builds the decision from `state` (its current version and the
 * approvals that count), signs it, and seals it into `commit`. Returns the signed decision.
 */
export function decideRun(
  ctx: UseCaseContext,
  commit: RunCommit,
  state: RunState,
  outcome: {
    readonly status: Exclude<DecisionStatus, 'invalid'>;
    readonly by: string;
    readonly reason?: string;
  },
  extra: RunFieldUpdate = {},
): Decision {
  const decision = ctx.sign(
    buildDecision({
      runId: state.runId,
      agent: state.fields.agent,
      status: outcome.status,
      version: state.current,
      approvals: state.approvals,
      authority: authorityFor(ctx.config, state),
      decidedAt: ctx.now,
      decidedBy: outcome.by,
      ...(outcome.reason === undefined ? {} : { reason: outcome.reason }),
      configDigest: ctx.config.digest,
      released: releasedSteps(state),
    }),
  );
  sealDecision(commit, ctx.keys.forRun(state.runId), ctx.keys.decided(state.fields.agent), decision, extra);
  return decision;
}

/** Moves a pending run past its expiry to `expired` and seals the decision. */
export function expireNow(ctx: UseCaseContext, snapshot: RunSnapshot, state: RunState): Attempt {
  const commit = commitFor(ctx, snapshot, state.runId);
  const decision = decideRun(ctx, commit, state, {
    status: 'expired',
    by: 'timer',
    reason: `expired at ${state.current.plan.expiresAt} — nothing was executed`,
  });
  commit.journal({ type: 'expired', version: state.current.version }, ctx.now, state.current.plan.digest);
  return {
    commit,
    decision,
    result: { kind: 'expired', run: viewOf(ctx, state.runId, decidedState(state, decision)), decision },
  };
}

/** Journals a refused action and answers it (`unauthorized` unless another answer is given). */
export function refuse(
  ctx: UseCaseContext,
  snapshot: RunSnapshot,
  state: RunState,
  refusal: {
    readonly action: 'approve' | 'reject' | 'edit';
    readonly version: number;
    readonly userId: string;
    readonly reason: 'stale' | 'unauthorized';
    readonly detail: string;
  },
  answer?: UseCaseResult,
): Attempt {
  const commit = commitFor(ctx, snapshot, state.runId).journal(
    { type: 'refused', ...refusal },
    ctx.now,
    state.current.plan.digest,
  );
  return {
    commit,
    result: answer ?? { kind: 'unauthorized', reason: refusal.detail, run: viewOf(ctx, state.runId, state) },
  };
}

/**
 * The gate of every click and edit: closed runs are answered, an overdue run is expired, a stale
 * version is refused (journaled). Otherwise the state to decide on.
 */
export function gate(
  ctx: UseCaseContext,
  snapshot: RunSnapshot,
  input: { readonly runId: string; readonly version: number; readonly userId: string },
  action: 'approve' | 'reject' | 'edit',
): { readonly open: RunState } | Attempt {
  const check = checkAction(ctx.config, snapshot, input, ctx.now);
  switch (check.kind) {
    case 'closed':
      return { result: check.answer };
    case 'expired':
      return expireNow(ctx, snapshot, check.state);
    case 'stale':
      return refuse(
        ctx,
        snapshot,
        check.state,
        {
          action,
          version: input.version,
          userId: input.userId,
          reason: 'stale',
          detail: `version ${input.version} is no longer current; version ${check.currentVersion} is`,
        },
        { kind: 'stale', run: viewOf(ctx, input.runId, check.state), currentVersion: check.currentVersion },
      );
    case 'open':
      return { open: check.state };
  }
}
