import type { Redis } from 'ioredis';
import type { Keys } from './keys.ts';
import { type TimeSource, timeOf } from './redis-time.ts';
import { commitLoop, RunCommit } from './run-commit.ts';
import type { StepOutcome } from './types.ts';

export type OutcomeResult =
  | { readonly kind: 'recorded'; readonly outcome: StepOutcome }
  | { readonly kind: 'already_claimed'; readonly outcome: StepOutcome }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'not_approved'; readonly status: string }
  | { readonly kind: 'unknown_step' };

export interface OutcomeOptions {
  /** Redis's `TIME` (read with the run) or an injected clock. */
  readonly time: TimeSource;
  /** A step reported `applying` this long without a result reads as `uncertain`. */
  readonly uncertainAfterMs: number;
}

/** `applying` older than `uncertainAfterMs` reads as `uncertain`: derived on read, never stored. */
export function deriveOutcome(outcome: StepOutcome, now: number, uncertainAfterMs: number): StepOutcome {
  return outcome.status === 'applying' && now - outcome.at > uncertainAfterMs
    ? { ...outcome, status: 'uncertain' }
    : outcome;
}

/**
 * The agent reports a step's outcome (journaled). `applying` claims the step: a second claim, or any
 * report after a final one, is refused — so a step is never dispatched twice, even when a decision is
 * delivered again. Needs no policy config, so the agent client calls it directly.
 */
export async function recordOutcome(
  redis: Redis,
  keys: Keys,
  input: { runId: string; stepId: string; status: 'applying' | 'applied' | 'failed'; detail?: string },
  options: OutcomeOptions,
): Promise<{ result: OutcomeResult; revision?: number }> {
  const runKeys = keys.forRun(input.runId);
  const { attempt, revision } = await commitLoop(redis, runKeys, options.time, async (snapshot, now) => {
    if (snapshot.fields === undefined || snapshot.current === undefined) {
      return { result: { kind: 'not_found' } as OutcomeResult };
    }
    if (snapshot.fields.status !== 'approved') {
      return { result: { kind: 'not_approved', status: snapshot.fields.status } as OutcomeResult };
    }
    if (!snapshot.current.plan.steps.some((step) => step.id === input.stepId)) {
      return { result: { kind: 'unknown_step' } as OutcomeResult };
    }
    const existingText = await redis.hget(runKeys.outcomes, input.stepId);
    const existing =
      existingText === null
        ? undefined
        : deriveOutcome(JSON.parse(existingText) as StepOutcome, now, options.uncertainAfterMs);
    if (existing !== undefined && (input.status === 'applying' || existing.status !== 'applying')) {
      return { result: { kind: 'already_claimed', outcome: existing } as OutcomeResult };
    }
    const outcome: StepOutcome = {
      stepId: input.stepId,
      status: input.status,
      at: now,
      ...(input.detail === undefined ? {} : { detail: input.detail.slice(0, 2000) }),
    };
    const commit = new RunCommit(runKeys, snapshot)
      .hset(runKeys.outcomes, { [input.stepId]: JSON.stringify(outcome) })
      .journal(
        {
          type: 'outcome',
          stepId: input.stepId,
          status: input.status,
          ...(outcome.detail === undefined ? {} : { detail: outcome.detail }),
        },
        now,
        snapshot.fields.planDigest,
      );
    return { commit, result: { kind: 'recorded', outcome } as OutcomeResult };
  });
  return { result: attempt.result, ...(revision === undefined ? {} : { revision }) };
}

/** Outcomes reported per step, with `uncertain` derived. */
export async function readOutcomes(
  redis: Redis,
  keys: Keys,
  runId: string,
  options: OutcomeOptions,
): Promise<StepOutcome[]> {
  const [hash, now] = await Promise.all([
    redis.hgetall(keys.forRun(runId).outcomes),
    timeOf(options.time, redis),
  ]);
  return Object.values(hash).map((text) =>
    deriveOutcome(JSON.parse(text) as StepOutcome, now, options.uncertainAfterMs),
  );
}
