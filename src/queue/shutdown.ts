/**
 * Graceful shutdown on SIGTERM/SIGINT: run the close steps in order (workers first, so they stop
 * taking jobs and finish the active ones, then queues, then connections), then exit. A second signal
 * while closing exits at once: BullMQ hands the unfinished jobs to another worker as stalled.
 */

/** One thing to close, e.g. `() => intake.close()` or `() => redis.quit()`. */
export type CloseStep = () => Promise<unknown>;

export interface ShutdownOptions {
  readonly signals?: readonly NodeJS.Signals[];
  /** Exit after closing (default `process.exit`); tests pass their own. */
  readonly exit?: (code: number) => void;
  /** Where signals come from (default `process`). */
  readonly emitter?: Pick<NodeJS.Process, 'on' | 'off'>;
  readonly log?: (line: string) => void;
  /**
   * Exit with code 1 when closing has not finished after this long (default: wait). Closing waits on
   * Redis; with Redis down it would wait forever.
   */
  readonly deadlineMs?: number;
}

/**
 * Installs the handlers; returns a function that removes them.
 * @example
 * installShutdownHandlers([() => intake.close(), () => sink.close(), () => redis.quit()]);
 */
export function installShutdownHandlers(
  steps: readonly CloseStep[],
  options: ShutdownOptions = {},
): () => void {
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const emitter = options.emitter ?? process;
  const log = options.log ?? ((line: string) => console.error(line));
  let closing = false;

  const onSignal = (signal: NodeJS.Signals): void => {
    if (closing) {
      log(`${signal} again: exiting without waiting for active jobs`);
      exit(1);
      return;
    }
    closing = true;
    log(`${signal}: finishing active jobs, then closing`);
    if (options.deadlineMs !== undefined) {
      const deadline = setTimeout(() => {
        log(
          `still closing after ${options.deadlineMs} ms: exiting; unfinished jobs are retried by another worker`,
        );
        exit(1);
      }, options.deadlineMs);
      deadline.unref();
    }
    void (async () => {
      let code = 0;
      for (const step of steps) {
        try {
          await step();
        } catch (error) {
          code = 1;
          log(`while closing: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
      exit(code);
    })();
  };
  // Subscribed until removed: the second signal must reach us too.
  for (const name of signals) emitter.on(name, onSignal);
  return () => {
    for (const name of signals) emitter.off(name, onSignal);
  };
}
