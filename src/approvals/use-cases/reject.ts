/** reject: anyone who may approve a step of the current version may reject the run, with a reason. */
import { rejectRights } from '../guard.ts';
import type { RunSnapshot } from '../store.ts';
import {
  type Attempt,
  commitFor,
  decidedState,
  decideRun,
  gate,
  refuse,
  type UseCaseContext,
  viewOf,
} from './context.ts';

export interface RejectInput {
  readonly runId: string;
  readonly version: number;
  readonly userId: string;
  readonly reason: string;
}

export function reject(ctx: UseCaseContext, snapshot: RunSnapshot, input: RejectInput): Attempt {
  const gated = gate(ctx, snapshot, input, 'reject');
  if (!('open' in gated)) return gated;
  const state = gated.open;
  const rights = rejectRights(ctx.config, state, input.userId);
  if (!rights.ok) {
    return refuse(ctx, snapshot, state, {
      action: 'reject',
      version: input.version,
      userId: input.userId,
      reason: 'unauthorized',
      detail: rights.reason,
    });
  }
  const reason = input.reason.trim().slice(0, 2000) || 'no reason given';
  const commit = commitFor(ctx, snapshot, input.runId);
  const decision = decideRun(ctx, commit, state, { status: 'rejected', by: input.userId, reason });
  commit.journal(
    { type: 'rejected', version: state.current.version, userId: input.userId, reason },
    ctx.now,
    state.current.plan.digest,
  );
  const run = viewOf(ctx, input.runId, decidedState(state, decision));
  return { commit, decision, result: { kind: 'rejected', run, decision } };
}
