import { describe, expect, it } from 'vitest';
import { TokenBucketLimiter } from './rate-limiter.ts';

function clock(start = 1_775_462_400_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('TokenBucketLimiter', () => {
  it('lets a burst through, then refuses with a whole-second Retry-After', () => {
    const time = clock();
    const limiter = new TokenBucketLimiter({ perSecond: 1, burst: 5 }, time.now);
    for (let i = 0; i < 5; i++) expect(limiter.take('C0OPS')).toEqual({ ok: true });
    expect(limiter.take('C0OPS')).toEqual({ ok: false, retryAfterSeconds: 1 });
  });

  it('refills at the configured rate', () => {
    const time = clock();
    const limiter = new TokenBucketLimiter({ perSecond: 1, burst: 2 }, time.now);
    limiter.take('C0OPS');
    limiter.take('C0OPS');
    time.advance(999);
    expect(limiter.take('C0OPS').ok).toBe(false);
    time.advance(1);
    expect(limiter.take('C0OPS').ok).toBe(true);
    expect(limiter.take('C0OPS').ok).toBe(false);
  });

  it('asks for longer waits when the rate is below one per second', () => {
    const limiter = new TokenBucketLimiter({ perSecond: 0.25, burst: 1 }, clock().now);
    limiter.take('C0OPS');
    expect(limiter.take('C0OPS')).toEqual({ ok: false, retryAfterSeconds: 4 });
  });

  it('counts each key on its own, and forgets everything on reset', () => {
    const limiter = new TokenBucketLimiter({ perSecond: 1, burst: 1 }, clock().now);
    expect(limiter.take('C0OPS').ok).toBe(true);
    expect(limiter.take('C0OTHER').ok).toBe(true);
    expect(limiter.take('C0OPS').ok).toBe(false);
    limiter.reset();
    expect(limiter.take('C0OPS').ok).toBe(true);
  });

  it('refuses a configuration that could never let a call through', () => {
    expect(() => new TokenBucketLimiter({ perSecond: 0, burst: 5 }, Date.now)).toThrow(RangeError);
    expect(() => new TokenBucketLimiter({ perSecond: 1, burst: 0 }, Date.now)).toThrow(RangeError);
  });
});
