import type { Job, Worker, WorkerOptions } from 'bullmq';
import type { ErrorReporter, LogFields, Logger } from '../log.ts';

/**
 * How fast a job held by a process that died is taken up again: its lock lapses after `lockDuration`
 * (a live worker renews it every half of that) and the stalled-job check runs every `stalledInterval`,
 * so another worker — or the same one restarted — runs it again within 10 s of the crash (BullMQ's
 * defaults take 30–60 s). A job found stalled more than `maxStalledCount` times fails.
 */
export const CRASH_RECOVERY = {
  lockDuration: 8_000,
  stalledInterval: 2_000,
  maxStalledCount: 3,
} as const satisfies Partial<WorkerOptions>;

/** A started worker and the one way to stop it. */
export interface SupervisedWorker<W extends Worker> {
  readonly worker: W;
  /** Stops taking jobs, waits for the active ones, closes the worker's own connections. Idempotent. */
  close(): Promise<void>;
}

/** The default reporter of queues and workers without one: one plain line on stderr. */
export const reportToStderr: ErrorReporter = (error, context) =>
  console.error(`countersign: ${context}: ${error instanceof Error ? error.message : String(error)}`);

/**
 * Reports a worker's errors and failed jobs under `name` (the timers, render and webhooks workers
 * alike), with the job's id and run, and gives it an idempotent close.
 */
export function supervise<W extends Worker>(
  worker: W,
  name: string,
  onError: ErrorReporter = reportToStderr,
  /** Debug lines for jobs done (id and run). */
  logger?: Pick<Logger, 'debug'>,
): SupervisedWorker<W> {
  worker.on('error', (error) => onError(error, `the ${name} worker`));
  worker.on('completed', (job) => logger?.debug(jobFields(job), `${name} job done`));
  worker.on('failed', (job, error) => {
    onError(error, `${name} job failed (attempt ${job?.attemptsMade ?? '?'})`, jobFields(job));
  });
  let closing: Promise<void> | undefined;
  return {
    worker,
    close() {
      closing ??= worker.close();
      return closing;
    },
  };
}

/** What a log line about a job names: the job, and the run and agent its data names. */
function jobFields(job: Job | undefined): LogFields {
  const data: { runId?: unknown; agent?: unknown } = job?.data ?? {};
  return {
    ...(job?.id === undefined ? {} : { jobId: job.id }),
    ...(typeof data.runId === 'string' ? { runId: data.runId } : {}),
    ...(typeof data.agent === 'string' ? { agent: data.agent } : {}),
  };
}
