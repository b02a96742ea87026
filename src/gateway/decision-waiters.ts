/**
 * Long polls without a Redis connection each: one subscriber for the whole process listens to every
 * agent's "decided" and "feed updated" channels, and wakes the requests waiting for them. Thousands of
 * open long polls cost a closure each.
 */
import type { Redis } from 'ioredis';
import type { Keys } from '../approvals/index.ts';

type Wake = () => void;

export class DecisionWaiters {
  /** `<agent> <runId>` → waiters for that run; `<agent>` → waiters for the agent's feed. */
  private readonly waiting = new Map<string, Set<Wake>>();
  private readonly decidedPrefix: string;
  private readonly feedPrefix: string;

  constructor(
    private readonly subscriber: Redis,
    keys: Keys,
  ) {
    this.decidedPrefix = keys.decided('');
    this.feedPrefix = keys.feedChannel('');
    subscriber.on('pmessage', (_pattern: string, channel: string, message: string) => {
      if (channel.startsWith(this.decidedPrefix)) {
        this.wake(`${channel.slice(this.decidedPrefix.length)} ${message}`);
      } else if (channel.startsWith(this.feedPrefix)) {
        this.wake(channel.slice(this.feedPrefix.length));
      }
    });
  }

  /** Subscribes; call once before serving long polls. */
  async start(): Promise<void> {
    await this.subscriber.psubscribe(`${this.decidedPrefix}*`, `${this.feedPrefix}*`);
  }

  /** Resolves when `runId` of `agent` is decided, after `ms`, or when `abort` fires — whichever is first. */
  forRun(agent: string, runId: string, ms: number, abort: AbortSignal): Promise<void> {
    return this.wait(`${agent} ${runId}`, ms, abort);
  }

  /** Resolves when the agent's feed gets an entry, after `ms`, or on `abort`. */
  forFeed(agent: string, ms: number, abort: AbortSignal): Promise<void> {
    return this.wait(agent, ms, abort);
  }

  /** How many requests are waiting (for metrics and tests). */
  get size(): number {
    let total = 0;
    for (const set of this.waiting.values()) total += set.size;
    return total;
  }

  async close(): Promise<void> {
    for (const key of [...this.waiting.keys()]) this.wake(key);
    await this.subscriber.punsubscribe().catch(() => {});
  }

  private wait(key: string, ms: number, abort: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiting.get(key) ?? new Set<Wake>();
      this.waiting.set(key, set);
      const finish: Wake = () => {
        clearTimeout(timer);
        abort.removeEventListener('abort', finish);
        set.delete(finish);
        if (set.size === 0 && this.waiting.get(key) === set) this.waiting.delete(key);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      abort.addEventListener('abort', finish, { once: true });
      set.add(finish);
    });
  }

  private wake(key: string): void {
    const set = this.waiting.get(key);
    if (set === undefined) return;
    for (const finish of [...set]) finish();
  }
}
