import type { Redis } from 'ioredis';
import { type RunState, stateOf } from './guard.ts';
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

/**
 * Adds to an `applied` report's commit whatever that report makes ready on a pending run (the service
 * releases the steps that depended on it: releases.ts), so the release is atomic with the report.
 */
export type AfterApplied = (commit: RunCommit, state: RunState, now: number) => void;

/** `applying` older than `uncertainAfterMs` reads as `uncertain`: derived on read, never stored. */
export function deriveOutcome(outcome: StepOutcome, now: number, uncertainAfterMs: number): StepOutcome {
  return outcome.status === 'applying' && now - outcome.at > uncertainAfterMs
    ? { ...outcome, status: 'uncertain' }
    : outcome;
}

/**
 * The agent reports a step's outcome (journaled). Accepted for a step of an approved run, and for a
 * step released before its run was decided (whatever the run's status since: it may have been running
 * when the run was rejected); refused for any other (`not_approved`). `applying` claims the step: a
 * second claim, or any report after a final one, is refused — so a step is never dispatched twice,
 * even when a decision is delivered again. `afterApplied` joins the commit of an `applied` report on a
 * pending run: what it releases is released with it, or not at all.
 */
export async function recordOutcome(
  redis: Redis,
  keys: Keys,
  input: {
    runId: string;
    stepId: string;
    status: 'applying' | 'applied' | 'failed';
    detail?: string;
    metrics?: Readonly<Record<string, number>>;
  },
  options: OutcomeOptions & { readonly afterApplied?: AfterApplied },
): Promise<{ result: OutcomeResult; revision?: number }> {
  const runKeys = keys.forRun(input.runId);
  const { attempt, revision } = await commitLoop(redis, runKeys, options.time, (snapshot, now) => {
    const state = stateOf(snapshot);
    if (state === undefined) {
      return { result: { kind: 'not_found' } as OutcomeResult };
    }
    const released = state.fields.released?.[input.stepId] !== undefined;
    if (state.fields.status !== 'approved' && !released) {
      return { result: { kind: 'not_approved', status: state.fields.status } as OutcomeResult };
    }
    if (!state.current.plan.steps.some((step) => step.id === input.stepId)) {
      return { result: { kind: 'unknown_step' } as OutcomeResult };
    }
    const stored = snapshot.outcomes[input.stepId];
    const existing = stored === undefined ? undefined : deriveOutcome(stored, now, options.uncertainAfterMs);
    if (existing !== undefined && (input.status === 'applying' || existing.status !== 'applying')) {
      return { result: { kind: 'already_claimed', outcome: existing } as OutcomeResult };
    }
    const outcome: StepOutcome = {
      stepId: input.stepId,
      status: input.status,
      at: now,
      ...(input.detail === undefined ? {} : { detail: input.detail.slice(0, 2000) }),
      ...(input.metrics === undefined || Object.keys(input.metrics).length === 0
        ? {}
        : { metrics: input.metrics }),
    };
    // On a pending run before its expiry, the commit lands before the expiry or not at all (as the
    // use cases' commits do): a release it carries is never made past it.
    const open = state.fields.status === 'pending' && now < state.fields.expiresAt;
    const commit = new RunCommit(runKeys, snapshot, open ? state.fields.expiresAt : undefined)
      .hset(runKeys.outcomes, { [input.stepId]: JSON.stringify(outcome) })
      .journal(
        {
          type: 'outcome',
          stepId: input.stepId,
          status: input.status,
          ...(outcome.detail === undefined ? {} : { detail: outcome.detail }),
          ...(outcome.metrics === undefined ? {} : { metrics: outcome.metrics }),
        },
        now,
        state.fields.planDigest,
      );
    if (input.status === 'applied' && open) {
      options.afterApplied?.(
        commit,
        { ...state, outcomes: { ...snapshot.outcomes, [input.stepId]: outcome } },
        now,
      );
    }
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
