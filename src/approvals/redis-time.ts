/**
 * One clock for every replica (docs/architecture.md §15): Redis's `TIME`. Transitions read it in the
 * same round trip as the run they decide on (store.ts); what needs a time synchronously — the agent
 * gateway's signature window, timer delays, repair ages — uses `RedisClock`, this process's clock
 * corrected by its measured offset from Redis.
 */
import type { Redis } from 'ioredis';

/**
 * Where a transition's `now` comes from: Redis's `TIME`, read with the snapshot, or a function tests
 * inject to move time themselves.
 */
export type TimeSource = 'redis' | (() => number);

/** A `TIME` reply (`[seconds, microseconds]`) in milliseconds since the epoch. */
export function timeReplyMs(reply: readonly (string | number)[]): number {
  return Number(reply[0]) * 1000 + Math.floor(Number(reply[1]) / 1000);
}

/** Redis's time now (ms since the epoch): one `TIME`. */
export async function redisNow(redis: Redis): Promise<number> {
  return timeReplyMs(await redis.time());
}

/** The time of `source` now: `TIME` on `redis`, or the injected function. */
export function timeOf(source: TimeSource, redis: Redis): Promise<number> {
  return source === 'redis' ? redisNow(redis) : Promise.resolve(source());
}

/**
 * Redis's time without a round trip: this process's clock plus its offset from Redis, measured at
 * `start` and every `everyMs` after (a clock stepped by NTP is caught at the next measure). For what
 * needs a time synchronously; transitions read `TIME` itself.
 * @example
 * const clock = new RedisClock(redis);
 * await clock.start();
 * verifySignedRequest({ …, now: clock.now() });
 */
export class RedisClock {
  private offsetMs = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly everyMs = 5_000,
  ) {}

  /** Redis's time now, estimated (ms since the epoch). */
  readonly now = (): number => Date.now() + this.offsetMs;

  /** How far Redis's clock is ahead of this process's (ms; negative when behind). */
  get offset(): number {
    return this.offsetMs;
  }

  /** Measures the offset: `TIME` against the midpoint of the local clock around it. */
  async measure(): Promise<number> {
    const before = Date.now();
    const redisMs = await redisNow(this.redis);
    const after = Date.now();
    this.offsetMs = redisMs - Math.round((before + after) / 2);
    return this.offsetMs;
  }

  /** Measures once, then every `everyMs` in the background (a failed measure keeps the last offset). */
  async start(): Promise<void> {
    await this.measure();
    this.timer ??= setInterval(() => {
      this.measure().catch(() => {});
    }, this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
