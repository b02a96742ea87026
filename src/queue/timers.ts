/**
 * The `timers` processor: a plan version's expiry, escalation and reminder jobs (docs/architecture.md §8).
 *
 * Inputs: job data = `TimerJobData` (timer-plan.ts): the kind, the run, the version the timer was
 * scheduled for, and for an escalation its level (1-based) and repeat (0 for the level itself).
 * Outputs: one approvals transition per job — `expire`, `escalate` or `remind`. What follows a
 * committed transition (the card and messages in Slack, the next step of the chain, removing a decided
 * run's timers) is done by the service's listeners, so a job ends at its commit. An expiry that fires
 * before `expiresAt` by this process's clock returns `early` (the worker re-delays the job).
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

/** The transitions timers call (the approvals service provides them). */
export interface TimerUseCases {
  expire(input: { runId: string; version: number }): Promise<UseCaseResult>;
  escalate(input: { runId: string; version: number; level: number; repeat?: number }): Promise<UseCaseResult>;
  remind(input: { runId: string; version: number }): Promise<UseCaseResult>;
}

export interface TimerDependencies {
  readonly service: TimerUseCases;
  /** Milliseconds since the epoch (default `Date.now`). */
  readonly clock?: () => number;
}

/** What one timer job came to; the job's return value. */
export type TimerSummary =
  | { readonly kind: UseCaseResult['kind'] }
  | { readonly kind: 'early'; readonly retryAt: number };

/** The part of a BullMQ job the processor reads. */
export interface TimerJob {
  readonly data: unknown;
}

const runId = z.string().regex(RUN_ID_PATTERN);
const version = z.int().min(1);
const timerJobSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('expire'), runId, version }),
  z.object({ kind: z.literal('remind'), runId, agent: z.string(), version }),
  z.object({
    kind: z.literal('escalate'),
    runId,
    agent: z.string(),
    version,
    level: z.int().min(1),
    repeat: z.int().min(0),
  }),
]) satisfies z.ZodType<TimerJobData>;

/**
 * Builds the timers processor.
 * @example new Worker(TIMERS_QUEUE, createTimerProcessor({ service }), opts);
 */
export function createTimerProcessor(deps: TimerDependencies): (job: TimerJob) => Promise<TimerSummary> {
  const clock = deps.clock ?? Date.now;
  return async (job) => {
    const parsed = timerJobSchema.safeParse(job.data);
    if (!parsed.success) {
      throw new UnrecoverableError(`timer job data is not a timer: ${z.prettifyError(parsed.error)}`);
    }
    const timer = parsed.data;
    switch (timer.kind) {
      case 'expire': {
        const result = await deps.service.expire(timer);
        if (result.kind === 'pending') {
          const retryAt = Date.parse(result.run.current.plan.expiresAt);
          if (retryAt > clock()) return { kind: 'early', retryAt };
        }
        return { kind: result.kind };
      }
      case 'escalate':
        return { kind: (await deps.service.escalate(timer)).kind };
      case 'remind':
        return { kind: (await deps.service.remind(timer)).kind };
    }
  };
}
