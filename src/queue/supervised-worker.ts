import type { Worker } from 'bullmq';

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
