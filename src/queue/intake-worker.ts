import { type Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { createIntakeProcessor, type IntakeDependencies, type IntakeSummary } from './intake.ts';
import { bullPrefix, INTAKE_QUEUE } from './names.ts';
import { type SupervisedWorker, supervise } from './supervised-worker.ts';

export interface IntakeWorkerOptions extends IntakeDependencies {
  /** A worker-role connection (`maxRetriesPerRequest: null`); BullMQ duplicates it for blocking reads. */
  readonly connection: Redis;
  /** Countersign key prefix (default `cs`). */
  readonly prefix?: string;
  /** Jobs processed at once by this worker (default {@link INTAKE_CONCURRENCY}). */
  readonly concurrency?: number;
  /** BullMQ stall detection; the defaults (30 s) suit production, tests shorten them. */
  readonly lockDuration?: number;
  readonly stalledInterval?: number;
  readonly maxStalledCount?: number;
  /** Worker errors and failed jobs (default: `console.error`). */
  readonly log?: (line: string) => void;
}

export type IntakeWorker = SupervisedWorker<Worker>;

/**
 * Intake jobs processed at once by default. A job mostly waits — on three Redis round trips, then on
 * Slack posting the card (100 ms or more) — so slots, not CPU, limit a low setting: 8 slots held by
 * Slack calls cap intake near 80 plans/s. At 32 a burst keeps the CPU busy (measured: 4,000 plans/s
 * on 2 cores with posting stubbed, against 3,500 at 8); the timers worker uses the same.
 */
export const INTAKE_CONCURRENCY = 32;

/**
 * Starts the intake worker. It leaves `connection` and the service's connection open: the caller
 * owns them (see `installShutdownHandlers` for the order to close things in).
 * @example
 * const intake = startIntakeWorker({ connection, service, redis, keys: service.keys, agents: config.agents, secrets });
 * installShutdownHandlers([() => intake.close(), () => redis.quit(), () => connection.quit()]);
 */
export function startIntakeWorker(options: IntakeWorkerOptions): IntakeWorker {
  const process = createIntakeProcessor(options);
  const worker = new Worker<unknown, IntakeSummary>(INTAKE_QUEUE, (job: Job) => process(job), {
    connection: options.connection,
    prefix: bullPrefix(options.prefix ?? 'cs'),
    concurrency: options.concurrency ?? INTAKE_CONCURRENCY,
    ...(options.lockDuration === undefined ? {} : { lockDuration: options.lockDuration }),
    ...(options.stalledInterval === undefined ? {} : { stalledInterval: options.stalledInterval }),
    ...(options.maxStalledCount === undefined ? {} : { maxStalledCount: options.maxStalledCount }),
  });
  return supervise(worker, 'intake', options.log);
}
