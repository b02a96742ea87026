import { describe, expect, it } from 'vitest';
import {
  MethodRateLimiter,
  SLACK_RATE_LIMITS,
  SLACK_RATE_TIERS,
  TokenBucketLimiter,
} from './rate-limiter.ts';

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

describe('MethodRateLimiter', () => {
  it('keeps one bucket per method for workspace limits, one per channel for channel limits', () => {
    const limiter = new MethodRateLimiter(
      {
        'chat.update': { perSecond: 1, burst: 1 },
        'chat.postMessage': { perSecond: 1, burst: 1, per: 'channel' },
      },
      clock().now,
    );
    expect(limiter.take('chat.update', 'C0OPS').ok).toBe(true);
    expect(limiter.take('chat.update', 'C0OTHER').ok).toBe(false);
    expect(limiter.take('chat.postMessage', 'C0OPS').ok).toBe(true);
    expect(limiter.take('chat.postMessage', 'C0OTHER').ok).toBe(true);
    expect(limiter.take('chat.postMessage', 'C0OPS').ok).toBe(false);
  });

  it('lets unnamed methods, methods named false and channel-less calls through', () => {
    const limiter = new MethodRateLimiter(
      { 'chat.update': false, 'chat.postMessage': { perSecond: 1, burst: 1, per: 'channel' } },
      clock().now,
    );
    for (let i = 0; i < 10; i++) {
      expect(limiter.take('chat.update', 'C0OPS').ok).toBe(true);
      expect(limiter.take('users.info', undefined).ok).toBe(true);
      expect(limiter.take('chat.postMessage', undefined).ok).toBe(true);
    }
  });
  it('lets every call through while switched off, and limits again from full buckets once on', () => {
    const time = clock();
    const limiter = new MethodRateLimiter({ 'chat.update': { perSecond: 1, burst: 2 } }, time.now);
    limiter.take('chat.update', 'C0OPS');
    limiter.take('chat.update', 'C0OPS');
    expect(limiter.take('chat.update', 'C0OPS').ok).toBe(false);
    limiter.setEnabled(false);
    for (let i = 0; i < 100; i++) expect(limiter.take('chat.update', 'C0OPS').ok).toBe(true);
    limiter.setEnabled(true);
    expect(limiter.take('chat.update', 'C0OPS').ok).toBe(true);
    expect(limiter.take('chat.update', 'C0OPS').ok).toBe(true);
    expect(limiter.take('chat.update', 'C0OPS')).toEqual({ ok: false, retryAfterSeconds: 1 });
  });
});

describe('SLACK_RATE_LIMITS', () => {
  it("uses Slack's tiers: 1, 20, 50 and 100 per minute", () => {
    expect(SLACK_RATE_TIERS.tier1.perSecond * 60).toBeCloseTo(1);
    expect(SLACK_RATE_TIERS.tier2.perSecond * 60).toBeCloseTo(20);
    expect(SLACK_RATE_TIERS.tier3.perSecond * 60).toBeCloseTo(50);
    expect(SLACK_RATE_TIERS.tier4.perSecond * 60).toBeCloseTo(100);
    expect(SLACK_RATE_LIMITS['chat.postMessage']).toEqual({ perSecond: 1, burst: 5, per: 'channel' });
    expect(SLACK_RATE_LIMITS['chat.update']).toBe(SLACK_RATE_TIERS.tier3);
    expect(SLACK_RATE_LIMITS['chat.postEphemeral']).toBe(SLACK_RATE_TIERS.tier4);
    expect(SLACK_RATE_LIMITS['views.open']).toBe(SLACK_RATE_TIERS.tier4);
    expect(SLACK_RATE_LIMITS['conversations.history']).toBe(SLACK_RATE_TIERS.tier3);
  });

  it("holds chat.update to about 50 a minute: a burst of 10, then the tier's rate", () => {
    const time = clock();
    const limiter = new MethodRateLimiter(SLACK_RATE_LIMITS, time.now);
    let passed = 0;
    for (let second = 0; second < 60; second++) {
      for (let i = 0; i < 10; i++) if (limiter.take('chat.update', 'C0OPS').ok) passed++;
      time.advance(1000);
    }
    // A burst of 10, then 50 a minute.
    expect(passed).toBeGreaterThanOrEqual(58);
    expect(passed).toBeLessThanOrEqual(60);
  });
});
