import { DelayedError, type Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { ErrorReporter, Logger } from '../log.ts';
import { bullPrefix, TIMERS_QUEUE } from './names.ts';
import { CRASH_RECOVERY, type SupervisedWorker, supervise } from './supervised-worker.ts';
import type { TimerJobData } from './timer-plan.ts';
import { createTimerProcessor, type TimerDependencies, type TimerSummary } from './timers.ts';

export interface TimersWorkerOptions extends TimerDependencies {
  /** A worker-role connection (`maxRetriesPerRequest: null`); BullMQ duplicates it for blocking reads. */
  readonly connection: Redis;
  /** Countersign key prefix (default `cs`). */
  readonly prefix?: string;
  /**
   * Timers processed at once (default 16). A timer job ends at its commit (Slack is the render
   * queue's), so it waits only on Redis: 16 keep a storm of expiries CPU-bound while clicks that
   * arrive meanwhile queue behind fewer of them. Measured with slack_backpressure's storm (1,000
   * expiring among 2,000 pending, the machine shared): approve acks in the storm's first seconds
   * 59–67 ms at most with 16 against 105–299 ms with 32, and the expired decisions' p99 no worse
   * (1.7–2.0 s against 1.9–3.4 s; two trials each, not yet a full benchmark run).
   */
  readonly concurrency?: number;
  /** Worker errors and failed jobs, with the job's id and run (default: a line on stderr). */
  readonly onError?: ErrorReporter;
  /** Debug lines for jobs done. */
  readonly logger?: Logger;
}

/** Timer jobs processed at once by default (see `TimersWorkerOptions.concurrency`). */
const TIMERS_CONCURRENCY = 16;

export type TimersWorker = SupervisedWorker<Worker<TimerJobData, TimerSummary>>;

/**
 * Starts the timers worker. A timer that runs before it is due by Redis's time (this process's clock
 * runs fast, or the one that scheduled it ran slow) is put back as a delayed job for the time left by
 * Redis's time (BullMQ's `moveToDelayed` + `DelayedError`): `moveToDelayed` takes a timestamp on this
 * process's clock, and this process's worker is the one that will find it due. So a skewed clock
 * never makes a timer act early and never loses it (docs/architecture.md §15). The caller owns
 * `connection`.
 * @example
 * const timers = startTimersWorker({ connection, service: approvals });
 */
export function startTimersWorker(options: TimersWorkerOptions): TimersWorker {
  const process = createTimerProcessor(options);
  const worker = new Worker<TimerJobData, TimerSummary>(
    TIMERS_QUEUE,
    async (job: Job<TimerJobData, TimerSummary>, token?: string) => {
      const summary = await process(job);
      if (summary.kind === 'early' && 'retryInMs' in summary) {
        await job.moveToDelayed(Date.now() + summary.retryInMs, token);
        throw new DelayedError();
      }
      return summary;
    },
    {
      connection: options.connection,
      prefix: bullPrefix(options.prefix ?? 'cs'),
      concurrency: options.concurrency ?? TIMERS_CONCURRENCY,
      ...CRASH_RECOVERY,
    },
  );
  return supervise(worker, 'timers', options.onError, options.logger);
}
