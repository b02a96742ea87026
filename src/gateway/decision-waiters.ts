/**
 * Long polls without a Redis connection each: one subscriber for the whole process listens to every
 * agent's "decided", "feed updated" and "released" channels, and wakes the requests waiting for them.
 * Thousands of open long polls cost a closure each.
 */
import type { Redis } from 'ioredis';
import type { Keys } from '../approvals/index.ts';

type Wake = () => void;

export class DecisionWaiters {
  /**
   * `<agent> <runId>` → waiters for that run's decision; `<agent> <runId> released` → waiters for its
   * releases; `<agent>` → waiters for the agent's feed.
   */
  private readonly waiting = new Map<string, Set<Wake>>();
  private readonly decidedPrefix: string;
  private readonly feedPrefix: string;
  private readonly releasedPrefix: string;

  constructor(
    private readonly subscriber: Redis,
    keys: Keys,
  ) {
    this.decidedPrefix = keys.decided('');
    this.feedPrefix = keys.feedChannel('');
    this.releasedPrefix = keys.releasedChannel('');
    subscriber.on('pmessage', (_pattern: string, channel: string, message: string) => {
      if (channel.startsWith(this.decidedPrefix)) {
        this.wake(`${channel.slice(this.decidedPrefix.length)} ${message}`);
      } else if (channel.startsWith(this.releasedPrefix)) {
        this.wake(`${channel.slice(this.releasedPrefix.length)} ${message} released`);
      } else if (channel.startsWith(this.feedPrefix)) {
        this.wake(channel.slice(this.feedPrefix.length));
      }
    });
  }

  /** Subscribes; call once before serving long polls. */
  async start(): Promise<void> {
    await this.subscriber.psubscribe(
      `${this.decidedPrefix}*`,
      `${this.feedPrefix}*`,
      `${this.releasedPrefix}*`,
    );
  }

  /** Resolves when `runId` of `agent` is decided, after `ms`, or when `abort` fires — whichever is first. */
  forRun(agent: string, runId: string, ms: number, abort: AbortSignal): Promise<void> {
    return this.wait([`${agent} ${runId}`], ms, abort);
  }

  /**
   * Resolves when `runId` of `agent` releases a step or is decided (no release comes after that),
   * after `ms`, or on `abort`.
   */
  forReleases(agent: string, runId: string, ms: number, abort: AbortSignal): Promise<void> {
    return this.wait([`${agent} ${runId}`, `${agent} ${runId} released`], ms, abort);
  }

  /** Resolves when the agent's feed gets an entry, after `ms`, or on `abort`. */
  forFeed(agent: string, ms: number, abort: AbortSignal): Promise<void> {
    return this.wait([agent], ms, abort);
  }

  /** How many requests are waiting (for metrics and tests). */
  get size(): number {
    // A release waiter is in two sets (the run's decision and its releases): counted once.
    const all = new Set<Wake>();
    for (const set of this.waiting.values()) for (const wake of set) all.add(wake);
    return all.size;
  }

  async close(): Promise<void> {
    for (const key of [...this.waiting.keys()]) this.wake(key);
    await this.subscriber.punsubscribe().catch(() => {});
  }

  /** Resolves when any of `keys` is woken, after `ms`, or on `abort`. */
  private wait(keys: readonly string[], ms: number, abort: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const sets = keys.map((key) => {
        const set = this.waiting.get(key) ?? new Set<Wake>();
        this.waiting.set(key, set);
        return [key, set] as const;
      });
      const finish: Wake = () => {
        clearTimeout(timer);
        abort.removeEventListener('abort', finish);
        for (const [key, set] of sets) {
          set.delete(finish);
          if (set.size === 0 && this.waiting.get(key) === set) this.waiting.delete(key);
        }
        resolve();
      };
      const timer = setTimeout(finish, ms);
      abort.addEventListener('abort', finish, { once: true });
      for (const [, set] of sets) set.add(finish);
    });
  }

  private wake(key: string): void {
    const set = this.waiting.get(key);
    if (set === undefined) return;
    for (const finish of [...set]) finish();
  }
}
