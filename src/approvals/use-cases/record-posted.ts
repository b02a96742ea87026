/** recordPosted: where the run's card is (posted once, updated in place for later versions), journaled. */
import { messageName } from '../keys.ts';
import type { RunSnapshot } from '../store.ts';
import { type Attempt, commitFor, type UseCaseContext } from './context.ts';

export interface PostedInput {
  readonly runId: string;
  readonly version: number;
  readonly channel: string;
  readonly ts: string;
  /** What the card shows (its content's digest, the run revision rendered), kept with its place. */
  readonly digest?: string;
  readonly revision?: number;
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
      // With what the card shows: without it the renderer could not tell the card is up to date and
      // would update it right after posting it, one chat.update of Slack's ~50 a minute per new run.
      [messageName({ kind: 'card' })]: JSON.stringify({
        channel: input.channel,
        ts: input.ts,
        ...(input.digest === undefined ? {} : { digest: input.digest }),
        ...(input.revision === undefined ? {} : { revision: input.revision }),
      }),
    })
    .journal({ type: 'posted', ...input }, ctx.now, snapshot.fields.planDigest);
  return { commit, result: undefined };
}
