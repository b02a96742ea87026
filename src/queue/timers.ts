/**
 * The `timers` processor: a plan version's expiry, escalation and reminder jobs (DESIGN.md §8).
 *
 * Inputs: job data = `TimerJobData` (timer-plan.ts): the kind, the run, the version the timer was
 * scheduled for, and for an escalation its level (1-based) and repeat (0 for the level itself).
 * Outputs, per kind — each one use case handed to the presenter:
 * - expire → `service.expire` → presenter: the card and every message of the run show "expired —
 *   nothing was executed" without buttons, and the run's other timers are removed; the service
 *   delivers `expired` to the agent. Returns `early` (the worker re-delays the job) when it fires
 *   before `expiresAt` by this process's clock.
 * - escalate → `service.escalate` (records the level's people: they may now act on the run) →
 *   presenter (the card says who and when) → the next step of the chain is scheduled → the
 *   escalation message goes to the people by DM and/or to the level's channel, recorded per channel.
 * - remind → the run is read; still pending at that version → next step scheduled → the reminder is
 *   posted in the card's channel.
 * A timer for a superseded or decided version changes nothing: for expire and escalate the service
 * journals `stale_timer` (and the presenter counts it); a stale reminder is dropped. An escalation or
 * a reminder past `expiresAt` (an overdue job after downtime) expires the run instead.
 *
 * Idempotency: job ids are deterministic per run, version and step, so each is scheduled once; the
 * service's compare-and-set makes expiry exactly-once against racing clicks and replicas. A retried
 * escalation (Redis failed midway) records the same people again and posts only the messages not yet
 * recorded; a message Slack refuses is reported by the presenter, not retried. Malformed job data
 * fails without retry.
 */
import { UnrecoverableError } from 'bullmq';
import { z } from 'zod';
import type { RunView, UseCaseResult } from '../approvals/types.ts';
import type { EscalationPolicy } from '../config/define-config.ts';
import { RUN_ID_PATTERN } from '../pipeline/index.ts';
import type { ChainStep, TimerJobData } from './timer-plan.ts';

/** The use cases timers call (the approvals service provides them). */
export interface TimerUseCases {
  expire(input: { runId: string; version: number }): Promise<UseCaseResult>;
  escalate(input: {
    runId: string;
    version: number;
    level: number;
    notified: readonly string[];
  }): Promise<UseCaseResult>;
  getRun(runId: string): Promise<RunView | undefined>;
}

/** What timers show in Slack (the bot's Presenter). */
export interface TimerPresenter {
  present(result: UseCaseResult): Promise<void>;
  showEscalation(run: RunView, step: ChainStep): Promise<void>;
}

export interface TimerDependencies {
  readonly service: TimerUseCases;
  readonly presenter: TimerPresenter;
  /** Escalation policy per agent (`config.escalation`): who a level notifies. */
  readonly escalation: Readonly<Record<string, EscalationPolicy>>;
  /** Schedules the chain step after one that fired (`TimerScheduler.scheduleAfter`). */
  readonly scheduleAfter: (run: RunView, step: ChainStep) => Promise<void>;
  /** Milliseconds since the epoch (default `Date.now`). */
  readonly clock?: () => number;
}

/** What one timer job came to; the job's return value. */
export type TimerSummary =
  | { readonly kind: UseCaseResult['kind'] | 'reminded' | 'stale' | 'unconfigured' }
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
 * @example new Worker(TIMERS_QUEUE, createTimerProcessor({ service, presenter, escalation, scheduleAfter }), opts);
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
        await deps.presenter.present(result);
        return { kind: result.kind };
      }
      case 'escalate': {
        const level = deps.escalation[timer.agent]?.levels[timer.level - 1];
        if (level === undefined) return { kind: 'unconfigured' };
        const result = await deps.service.escalate({ ...timer, notified: level.notify });
        await deps.presenter.present(result);
        if (result.kind === 'escalated') {
          // Next step first: a failure below (Redis) retries this job, but must not stop the chain.
          await deps.scheduleAfter(result.run, timer);
          await deps.presenter.showEscalation(result.run, timer);
        }
        return { kind: result.kind };
      }
      case 'remind': {
        const run = await deps.service.getRun(timer.runId);
        if (run === undefined || run.status !== 'pending' || run.version !== timer.version)
          return { kind: 'stale' };
        if (clock() >= Date.parse(run.current.plan.expiresAt)) {
          // Overdue (the bot was down): no reminder for a plan that can no longer be approved.
          const result = await deps.service.expire(timer);
          await deps.presenter.present(result);
          return { kind: result.kind };
        }
        await deps.scheduleAfter(run, timer);
        await deps.presenter.showEscalation(run, timer);
        return { kind: 'reminded' };
      }
    }
  };
}
