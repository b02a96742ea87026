import type { Worker, WorkerOptions } from 'bullmq';

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

/**
 * Reports a worker's errors and failed jobs under `name` (the intake and timers workers alike) and
 * gives it an idempotent close.
 */
export function supervise<W extends Worker>(
  worker: W,
  name: string,
  log: (line: string) => void = (line) => console.error(line),
): SupervisedWorker<W> {
  worker.on('error', (error) => log(`${name} worker: ${error.message}`));
  worker.on('failed', (job, error) => {
    log(`${name} job ${job?.id ?? '?'} failed (attempt ${job?.attemptsMade ?? '?'}): ${error.message}`);
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
