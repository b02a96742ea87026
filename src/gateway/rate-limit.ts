/**
 * A token bucket per agent, in this process: `requests` per `perMs`, refilled continuously. Several
 * replicas each allow that much (the limit protects each process; a shared limit would need Redis on
 * every request).
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly limitOf: (agent: string) => { readonly requests: number; readonly perMs: number },
    private readonly clock: () => number = Date.now,
  ) {}

  /** Takes one token; when none is left, how many seconds until one is. */
  take(agent: string): { readonly ok: true } | { readonly ok: false; readonly retryAfterSeconds: number } {
    const { requests, perMs } = this.limitOf(agent);
    const now = this.clock();
    const rate = requests / perMs;
    const bucket = this.buckets.get(agent) ?? { tokens: requests, at: now };
    bucket.tokens = Math.min(requests, bucket.tokens + (now - bucket.at) * rate);
    bucket.at = now;
    this.buckets.set(agent, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / rate / 1000)) };
  }
}
