/**
 * The `timers` processor: a plan version's expiry, escalation and reminder jobs (docs/architecture.md §8).
 *
 * Inputs: job data = `TimerJobData` (timer-plan.ts): the kind, the run, the version the timer was
 * scheduled for, and for an escalation its level (1-based) and repeat (0 for the level itself).
 * Outputs: one approvals transition per job — `expire`, `escalate` or `remind`. What follows a
 * committed transition (the card and messages in Slack, the next step of the chain, removing a decided
 * run's timers) is done by the service's listeners, so a job ends at its commit. A timer that runs
 * before it is due by Redis's time (BullMQ promotes delayed jobs by the clock of the worker that looks:
 * one whose clock runs fast runs them early) changes nothing — the service answers `pending` — and
 * returns `early` with how long is left by Redis's time; the worker puts the job back for that long.
 * A timer for a superseded or decided version changes nothing: the service journals `stale_timer`.
 *
 * Idempotency: job ids are deterministic per run, version and step, so each is scheduled once; the
 * service's compare-and-set makes each transition exactly-once against racing clicks and replicas. A
 * retried escalation records the same people again and the listeners post only messages not yet
 * recorded. Malformed job data fails without retry.
 */
import { UnrecoverableError } from 'bullmq';
import { z } from 'zod';
import type { UseCaseResult } from '../approvals/types.ts';
import { RUN_ID_PATTERN } from '../pipeline/index.ts';
import type { TimerJobData } from './timer-plan.ts';

/** The transitions timers call, and the time they decide at (the approvals service provides them). */
export interface TimerUseCases {
  expire(input: { runId: string; version: number }): Promise<UseCaseResult>;
  escalate(input: {
    runId: string;
    version: number;
    level: number;
    repeat?: number;
    dueAt?: number;
  }): Promise<UseCaseResult>;
  remind(input: { runId: string; version: number; dueAt?: number }): Promise<UseCaseResult>;
  /** Redis's time (ms): what the transitions decide at. */
  now(): Promise<number>;
}

export interface TimerDependencies {
  readonly service: TimerUseCases;
}

/** What one timer job came to; the job's return value. */
export type TimerSummary =
  | { readonly kind: UseCaseResult['kind'] }
  /** Not due yet by Redis's time: to run again in `retryInMs`. */
  | { readonly kind: 'early'; readonly retryInMs: number };

/**
 * The shortest wait before an early timer runs again: Redis said "not yet" but the remaining time it
 * gives may round to nothing by the time the job is put back.
 */
export const EARLY_RETRY_MIN_MS = 20;

/** The part of a BullMQ job the processor reads. */
export interface TimerJob {
  readonly data: unknown;
}

const runId = z.string().regex(RUN_ID_PATTERN);
const version = z.int().min(1);
const timerJobSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('expire'), runId, version }),
  z.object({ kind: z.literal('remind'), runId, agent: z.string(), version, dueAt: z.int().exactOptional() }),
  z.object({
    kind: z.literal('escalate'),
    runId,
    agent: z.string(),
    version,
    level: z.int().min(1),
    repeat: z.int().min(0),
    dueAt: z.int().exactOptional(),
  }),
]) satisfies z.ZodType<TimerJobData>;

/**
 * Builds the timers processor.
 * @example new Worker(TIMERS_QUEUE, createTimerProcessor({ service }), opts);
 */
export function createTimerProcessor(deps: TimerDependencies): (job: TimerJob) => Promise<TimerSummary> {
  const { service } = deps;
  return async (job) => {
    const parsed = timerJobSchema.safeParse(job.data);
    if (!parsed.success) {
      throw new UnrecoverableError(`timer job data is not a timer: ${z.prettifyError(parsed.error)}`);
    }
    const timer = parsed.data;
    const result =
      timer.kind === 'expire'
        ? await service.expire(timer)
        : timer.kind === 'escalate'
          ? await service.escalate(timer)
          : await service.remind(timer);
    if (result.kind !== 'pending') return { kind: result.kind };
    // Not due by Redis's time: how long is left, by Redis's time too.
    const dueAt = timer.kind === 'expire' ? Date.parse(result.run.current.plan.expiresAt) : timer.dueAt;
    if (dueAt === undefined) return { kind: result.kind };
    return { kind: 'early', retryInMs: Math.max(EARLY_RETRY_MIN_MS, dueAt - (await service.now())) };
  };
}
