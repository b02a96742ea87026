/**
 * Redis for tests: a real server (never a mock: our Lua scripts must run), shared by all test files,
 * with isolation by key prefix. Cleanup deletes only keys under the test's own prefix, so it is safe on
 * a developer's Redis given through TEST_REDIS_URL. Never FLUSHALL/FLUSHDB here.
 */
import { randomBytes } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { inject } from 'vitest';

/** The URL test/global-setup.ts provided (a private server, or TEST_REDIS_URL). */
export function redisUrl(): string {
  return inject('redisUrl');
}

/**
 * A key prefix no other test file or run shares: `t:<name>:<8 hex>`. Keys belong to it when they start
 * with `<prefix>:` — what BullMQ does with its `prefix` option and what our own keys should do.
 * `name` is reduced to `[A-Za-z0-9_.-]`, so the prefix never holds glob or hash-tag characters.
 *
 * @example
 * const prefix = uniquePrefix('approvals'); // "t:approvals:9f86d081"
 * new Queue('intake', { connection, prefix }); // keys "t:approvals:9f86d081:intake:…"
 */
export function uniquePrefix(name: string): string {
  const safeName = name.replace(/[^A-Za-z0-9_.-]+/g, '-').slice(0, 64) || 'test';
  return `t:${safeName}:${randomBytes(4).toString('hex')}`;
}

/**
 * Delete every key starting with `<prefix>:` (SCAN + UNLINK, in batches). Returns how many were deleted.
 * Only ever touches the prefix: no FLUSHALL, whoever owns the server.
 */
export async function deleteKeysUnder(redis: Redis, prefix: string): Promise<number> {
  if (!/^[A-Za-z0-9_.:-]+$/.test(prefix)) {
    // Glob characters would widen the match to keys that are not ours.
    throw new Error(
      `refusing to delete under prefix ${JSON.stringify(prefix)}: only [A-Za-z0-9_.:-] allowed`,
    );
  }
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.unlink(...keys);
  } while (cursor !== '0');
  return deleted;
}

/** A test file's Redis: a client, the file's own prefix, and a cleanup for `afterAll`. */
export interface TestRedis {
  /** Connected to {@link redisUrl}. */
  readonly redis: Redis;
  /** This file's prefix (see {@link uniquePrefix}). */
  readonly prefix: string;
  /** `<prefix>:<parts joined by ':'>` */
  key(...parts: readonly string[]): string;
  /** Delete the keys under `prefix` and close `redis`. Idempotent. */
  cleanup(): Promise<void>;
}

/**
 * ioredis options accepted by {@link testRedis}. (`replyMapping` is left out: ioredis 6 declares it
 * `?: X | undefined` in RedisOptions but `?: X` in the constructor, so a full RedisOptions value does not
 * type-check under exactOptionalPropertyTypes.)
 */
export type TestRedisOptions = Omit<RedisOptions, 'replyMapping'>;

/**
 * Open a client on the test Redis with a fresh prefix.
 *
 * @example
 * const { redis, key, cleanup } = testRedis('journal');
 * afterAll(cleanup);
 * it('appends', async () => { await redis.rpush(key('run-1', 'journal'), 'x'); });
 */
export function testRedis(name: string, options: TestRedisOptions = {}): TestRedis {
  const url = redisUrl();
  const redis = new Redis(url, options);
  const prefix = uniquePrefix(name);
  let cleaning: Promise<void> | undefined;
  return {
    redis,
    prefix,
    key: (...parts) => [prefix, ...parts].join(':'),
    cleanup() {
      cleaning ??= (async () => {
        // A separate connection: the test may have quit `redis` or left it in subscriber mode.
        const admin = new Redis(url, { lazyConnect: true });
        try {
          await deleteKeysUnder(admin, prefix);
        } finally {
          admin.disconnect();
          redis.disconnect();
        }
      })();
      return cleaning;
    },
  };
}
