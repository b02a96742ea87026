/**
 * Bolt answers Slack when a listener acks, and the listener keeps working after that (updating cards).
 * This global middleware remembers the work still running, so stopping can wait for it while Redis
 * and Slack are still reachable.
 */
import type { AnyMiddlewareArgs, Middleware } from '@slack/bolt';

export class InFlight {
  private readonly running = new Set<Promise<void>>();

  readonly middleware: Middleware<AnyMiddlewareArgs> = async ({ next }) => {
    const work = next();
    this.running.add(work);
    try {
      await work;
    } finally {
      this.running.delete(work);
    }
  };

  /** Resolves once nothing is running (work started meanwhile is waited for too). */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
