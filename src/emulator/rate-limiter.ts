/**
 * Rate limits: a token bucket per key (`burst` calls at once, then `perSecond`), and per-method limits
 * on top of it, keyed by channel or by workspace as Slack keys them. {@link SLACK_RATE_LIMITS} is Slack's
 * published tiers as buckets.
 */

/** Bucket size and refill rate. */
export interface RateLimit {
  readonly perSecond: number;
  readonly burst: number;
}

/**
 * One method's limit. `per: 'channel'` keeps a bucket per channel (the call's `channel`, resolved to its
 * id), as Slack does for chat.postMessage; `'workspace'` (the default) one bucket for the method, as
 * Slack's tiers are "per method per workspace per app" and the emulator is one workspace with one app.
 */
export interface MethodRateLimit extends RateLimit {
  readonly per?: 'channel' | 'workspace';
}

/** Limits by method name; `false` = that method is not limited. Methods not named keep their default. */
export type RateLimits = { readonly [method: string]: MethodRateLimit | false };

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

/** A limit of `count` calls per minute, `burst` of them at once. */
export function perMinute(count: number, burst: number): RateLimit {
  return { perSecond: count / 60, burst };
}

/**
 * Slack's Web API tiers ("1+", "20+", "50+", "100+ per minute"). Slack publishes no burst sizes, only
 * that each tier tolerates some ("a small amount" for Tier 1, "generous" for Tier 4); the bursts here
 * are a fifth of a minute's quota (two calls for Tier 1), so from Tier 2 up the first minute allows at
 * most 1.2 times the tier's rate.
 */
export const SLACK_RATE_TIERS = {
  tier1: perMinute(1, 2),
  tier2: perMinute(20, 4),
  tier3: perMinute(50, 10),
  tier4: perMinute(100, 20),
} as const satisfies Readonly<Record<string, RateLimit>>;

/**
 * Slack's published limits for the methods the emulator speaks (https://docs.slack.dev/apis/web-api/rate-limits
 * and each method's page). chat.postMessage is "special": about one message per second per channel,
 * short bursts allowed (the emulator's default burst of 5). auth.test's page says "hundreds of requests
 * per minute"; Tier 4 is the strict end of that.
 */
export const SLACK_RATE_LIMITS: RateLimits = {
  'chat.postMessage': { perSecond: 1, burst: 5, per: 'channel' },
  'chat.update': SLACK_RATE_TIERS.tier3,
  'chat.delete': SLACK_RATE_TIERS.tier3,
  'chat.postEphemeral': SLACK_RATE_TIERS.tier4,
  'chat.getPermalink': SLACK_RATE_TIERS.tier4,
  'conversations.open': SLACK_RATE_TIERS.tier3,
  'conversations.history': SLACK_RATE_TIERS.tier3,
  'conversations.replies': SLACK_RATE_TIERS.tier3,
  'views.open': SLACK_RATE_TIERS.tier4,
  'views.push': SLACK_RATE_TIERS.tier4,
  'views.update': SLACK_RATE_TIERS.tier4,
  'views.publish': SLACK_RATE_TIERS.tier4,
  'users.info': SLACK_RATE_TIERS.tier4,
  'usergroups.users.list': SLACK_RATE_TIERS.tier2,
  'auth.test': SLACK_RATE_TIERS.tier4,
  'apps.connections.open': SLACK_RATE_TIERS.tier1,
};

/** A limiter per method, each keyed by channel or workspace as its {@link MethodRateLimit} says. */
export class MethodRateLimiter {
  readonly #limiters = new Map<
    string,
    { readonly per: 'channel' | 'workspace'; readonly bucket: TokenBucketLimiter }
  >();
  #enabled = true;

  constructor(limits: RateLimits, now: () => number) {
    for (const [method, limit] of Object.entries(limits)) {
      if (limit === false) continue;
      this.#limiters.set(method, {
        per: limit.per ?? 'workspace',
        bucket: new TokenBucketLimiter(limit, now),
      });
    }
  }

  /**
   * Spend one call of `method`. `channel` is the call's resolved channel id; a per-channel method called
   * without one is not limited (Slack answers it channel_not_found anyway).
   */
  take(method: string, channel: string | undefined): RateDecision {
    const limiter = this.#enabled ? this.#limiters.get(method) : undefined;
    if (limiter === undefined) return { ok: true };
    if (limiter.per === 'workspace') return limiter.bucket.take('');
    return channel === undefined ? { ok: true } : limiter.bucket.take(channel);
  }

  /** Forget every bucket. */
  reset(): void {
    for (const { bucket } of this.#limiters.values()) bucket.reset();
  }

  /**
   * Off: every call goes through and spends nothing (seeding a workspace fast). On again: limits apply
   * from full buckets, as for a workspace that was quiet.
   */
  setEnabled(enabled: boolean): void {
    if (enabled && !this.#enabled) this.reset();
    this.#enabled = enabled;
  }
}
