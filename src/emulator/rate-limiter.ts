/**
 * A token bucket per key (a channel, for chat.postMessage): `burst` calls at once, then `perSecond`.
 * Slack documents chat.postMessage as "1 per second per channel, short bursts allowed".
 */

/** Bucket size and refill rate. */
export interface RateLimit {
  readonly perSecond: number;
  readonly burst: number;
}

/** The outcome of {@link TokenBucketLimiter.take}. */
export type RateDecision = { readonly ok: true } | { readonly ok: false; readonly retryAfterSeconds: number };

/** Token buckets keyed by string; time comes from `now` (ms). */
export class TokenBucketLimiter {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number,
  ) {
    if (!(limit.perSecond > 0) || !(limit.burst >= 1)) {
      throw new RangeError(`rate limit needs perSecond > 0 and burst >= 1, got ${JSON.stringify(limit)}`);
    }
  }

  /** Spend one token for `key`, or say how many whole seconds until one is available (at least 1). */
  take(key: string): RateDecision {
    const now = this.now();
    const bucket = this.#buckets.get(key) ?? { tokens: this.limit.burst, at: now };
    const refilled = Math.min(
      this.limit.burst,
      bucket.tokens + ((now - bucket.at) / 1000) * this.limit.perSecond,
    );
    if (refilled >= 1) {
      this.#buckets.set(key, { tokens: refilled - 1, at: now });
      return { ok: true };
    }
    this.#buckets.set(key, { tokens: refilled, at: now });
    const seconds = (1 - refilled) / this.limit.perSecond;
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(seconds)) };
  }

  /** Forget every bucket (all keys full again). */
  reset(): void {
    this.#buckets.clear();
  }
}
