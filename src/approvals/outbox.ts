/**
 * The decision outbox: a decided run is put in the `undelivered` set before its commit, and taken out
 * once its decision is handed to the delivery queue. A process that dies in between leaves it there,
 * and the sweep delivers it again (delivery is idempotent: one job id per run).
 */
import type { Redis } from 'ioredis';
import type { ErrorReporter } from '../log.ts';
import type { Decision } from '../pipeline/index.ts';
import type { Keys } from './keys.ts';

export interface OutboxOptions {
  readonly redis: Redis;
  readonly keys: Keys;
  /** The decision sink (the `decisions-<agent>` queue); without it decisions are only stored. */
  readonly deliver?: (decision: Decision) => Promise<void>;
  readonly onError: ErrorReporter;
}

export class Outbox {
  constructor(private readonly options: OutboxOptions) {}

  /** Before a commit that seals a decision: from here on a crash cannot lose its delivery. */
  async hold(runId: string, at: number): Promise<void> {
    await this.options.redis.zadd(this.options.keys.undelivered, at, runId);
  }

  /** Delivers one decision and takes it out of the outbox; a failure stays for the sweep. */
  async deliver(decision: Decision): Promise<boolean> {
    const { deliver } = this.options;
    if (deliver === undefined) {
      await this.delivered(decision.runId);
      return false;
    }
    try {
      await deliver(decision);
      await this.delivered(decision.runId);
      return true;
    } catch (error) {
      this.options.onError(
        error,
        `delivering the decision for run ${decision.runId} (the outbox sweep retries it)`,
        { runId: decision.runId, agent: decision.agent },
      );
      return false;
    }
  }

  /**
   * The run's decision was handed to delivery: marked on the run (its own slot) before it leaves the
   * outbox, sent together in that order on one connection, so whoever finds the run in the outbox
   * after this can tell its decision went out (`release`, the sweep).
   */
  private async delivered(runId: string): Promise<void> {
    const { redis, keys } = this.options;
    await Promise.all([redis.set(keys.forRun(runId).delivered, '1'), redis.zrem(keys.undelivered, runId)]);
  }

  /**
   * A hold whose attempt did not decide the run (another commit did): taken out of the outbox once the
   * run's decision is marked delivered; otherwise left, for the delivery under way or the sweep.
   */
  async release(runId: string): Promise<void> {
    const { redis, keys } = this.options;
    if ((await redis.get(keys.forRun(runId).delivered)) === '1') await redis.zrem(keys.undelivered, runId);
  }

  /**
   * Delivers decisions committed but not confirmed delivered. A run still pending is one whose commit
   * lost its race or failed: it leaves the outbox. Returns how many were delivered.
   */
  async sweep(): Promise<number> {
    const { redis, keys } = this.options;
    const runIds = await redis.zrange(keys.undelivered, '0', '-1');
    let delivered = 0;
    for (const runId of runIds) {
      const [text, mark] = await Promise.all([
        redis.get(keys.forRun(runId).decision),
        redis.get(keys.forRun(runId).delivered),
      ]);
      if (mark === '1') {
        // Delivered already (a hold that came back after it, or a crash before it left the outbox).
        await redis.zrem(keys.undelivered, runId);
        continue;
      }
      if (text === null) {
        const status = await redis.hget(keys.forRun(runId).run, 'status');
        if (status !== null && status !== 'pending') continue; // committing right now; next sweep
        await redis.zrem(keys.undelivered, runId);
        continue;
      }
      if (await this.deliver(JSON.parse(text) as Decision)) delivered++;
    }
    return delivered;
  }
}
