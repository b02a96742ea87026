import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { deleteKeysUnder, redisUrl, testRedis, uniquePrefix } from './redis.ts';

describe('test Redis harness', () => {
  const { redis, prefix, key, cleanup } = testRedis('harness');
  afterAll(cleanup);

  it('provides a live Redis at the injected URL', async () => {
    expect(redisUrl()).toMatch(/^rediss?:\/\//);
    expect(await redis.ping()).toBe('PONG');
  });

  it('runs Lua scripts (the reason we never mock Redis)', async () => {
    const counter = key('counter');
    const script = `
      -- KEYS[1] counter; ARGV[1] increment. Returns the new value.
      return redis.call('INCRBY', KEYS[1], ARGV[1])`;
    expect(await redis.eval(script, 1, counter, 5)).toBe(5);
    expect(await redis.eval(script, 1, counter, 2)).toBe(7);
  });

  it('gives every call a different prefix, free of glob characters', () => {
    const a = uniquePrefix('my test*[x]');
    const b = uniquePrefix('my test*[x]');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^t:my-test-x-:[0-9a-f]{8}$/);
  });

  it('cleans up only keys under its own prefix', async () => {
    const neighbour = uniquePrefix('neighbour');
    // A key that merely starts with the same characters is not under the prefix.
    const lookalike = `${prefix}extra`;
    await redis.set(key('a'), '1');
    await redis.hset(key('run', 'b'), 'f', 'v');
    await redis.set(`${neighbour}:c`, '1');
    await redis.set(lookalike, '1');
    try {
      expect(await deleteKeysUnder(redis, prefix)).toBeGreaterThanOrEqual(2);
      expect(await redis.exists(key('a'), key('run', 'b'))).toBe(0);
      expect(await redis.exists(`${neighbour}:c`, lookalike)).toBe(2);
    } finally {
      await redis.unlink(`${neighbour}:c`, lookalike);
    }
  });

  it('refuses a prefix that would match other keys', async () => {
    await expect(deleteKeysUnder(redis, 't:*')).rejects.toThrow(/refusing/);
  });

  it('cleanup deletes the prefix and closes the client, even after the test quit it', async () => {
    const other = testRedis('harness-cleanup');
    await other.redis.set(other.key('x'), '1');
    await other.redis.quit();
    await other.cleanup();
    await other.cleanup(); // idempotent
    const probe = new Redis(redisUrl());
    try {
      expect(await probe.exists(other.key('x'))).toBe(0);
    } finally {
      probe.disconnect();
    }
  });
});
