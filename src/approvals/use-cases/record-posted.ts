/** recordPosted: where the run's card is (posted once, updated in place for later versions), journaled. */
import { messageName } from '../keys.ts';
import type { RunSnapshot } from '../store.ts';
import { type Attempt, commitFor, type UseCaseContext } from './context.ts';

export interface PostedInput {
  readonly runId: string;
  readonly version: number;
  readonly channel: string;
  readonly ts: string;
}

export function recordPosted(
  ctx: UseCaseContext,
  snapshot: RunSnapshot,
  input: PostedInput,
): Attempt<undefined> {
  if (snapshot.fields === undefined) return { result: undefined };
  const keys = ctx.keys.forRun(input.runId);
  const commit = commitFor(ctx, snapshot, input.runId)
    .hset(keys.messages, {
      [messageName({ kind: 'card' })]: JSON.stringify({ channel: input.channel, ts: input.ts }),
    })
    .journal({ type: 'posted', ...input }, ctx.now, snapshot.fields.planDigest);
  return { commit, result: undefined };
}
