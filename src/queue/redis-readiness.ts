/**
 * What `npm start` checks about Redis before it says "listening": that it answers within a timeout,
 * that it keeps data across a restart (AOF or RDB snapshots on) and that it never evicts keys
 * (`maxmemory-policy noeviction`). Approval state and the timer queue live only there: a Redis that
 * loses or evicts keys loses decisions and leaves cards live forever. Each problem is one line, in
 * the operator's terms, with the fix.
 */
import { Redis } from 'ioredis';

export interface RedisReadinessOptions {
  /** How long Redis gets to answer (default 5 s). */
  readonly timeoutMs?: number;
  /** Accept a Redis without persistence or with eviction (`COUNTERSIGN_ALLOW_VOLATILE_REDIS=1`). */
  readonly allowVolatile?: boolean;
}

/** The problems found (empty when Redis is fit); never throws. */
export async function checkRedisReadiness(
  url: string,
  options: RedisReadinessOptions = {},
): Promise<string[]> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const where = redactedUrl(url);
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: timeoutMs,
    connectionName: 'countersign-start-checks',
  });
  // The connection's own error (ECONNREFUSED, ENOTFOUND, WRONGPASS) says more than the command's
  // "Connection is closed.".
  let connectionError: Error | undefined;
  redis.on('error', (error: Error) => {
    connectionError ??= error;
  });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    const facts = await Promise.race([readFacts(redis), late]);
    return options.allowVolatile === true ? [] : durabilityProblems(where, facts);
  } catch (error) {
    const reason = (connectionError ?? (error instanceof Error ? error : new Error(String(error)))).message;
    return [`Redis at ${where} is not reachable: ${reason} (is it running? is REDIS_URL right?)`];
  } finally {
    clearTimeout(timer);
    redis.disconnect();
  }
}

export interface RedisFacts {
  /** AOF on (`INFO persistence` aof_enabled:1). */
  readonly aof: boolean;
  /** The RDB `save` schedule (`CONFIG GET save`); `undefined` when CONFIG is not allowed. */
  readonly save: string | undefined;
  /** `INFO memory` maxmemory_policy. */
  readonly maxmemoryPolicy: string | undefined;
}

async function readFacts(redis: Redis): Promise<RedisFacts> {
  await redis.connect();
  const persistence = parseInfo(await redis.info('persistence'));
  const memory = parseInfo(await redis.info('memory'));
  let save: string | undefined;
  try {
    const answer = (await redis.config('GET', 'save')) as string[];
    save = answer[1] ?? '';
  } catch {
    save = undefined; // managed Redis often refuses CONFIG
  }
  return { aof: persistence.aof_enabled === '1', save, maxmemoryPolicy: memory.maxmemory_policy };
}

/** The durability problems of a Redis, one line each. */
export function durabilityProblems(where: string, facts: RedisFacts): string[] {
  const problems: string[] = [];
  const fix = 'or set COUNTERSIGN_ALLOW_VOLATILE_REDIS=1 for a throw-away setup';
  if (!facts.aof && facts.save === undefined) {
    problems.push(
      `Redis at ${where} has AOF off and refused CONFIG GET save, so its RDB snapshots cannot be checked: turn AOF on (appendonly yes) ${fix}`,
    );
  } else if (!facts.aof && (facts.save ?? '').trim() === '') {
    problems.push(
      `Redis at ${where} keeps nothing across a restart (AOF off, no RDB snapshots): runs and decisions would be lost; turn on appendonly yes (or a save schedule) ${fix}`,
    );
  }
  if (facts.maxmemoryPolicy !== undefined && facts.maxmemoryPolicy !== 'noeviction') {
    problems.push(
      `Redis at ${where} evicts keys when full (maxmemory-policy ${facts.maxmemoryPolicy}): set maxmemory-policy noeviction ${fix}`,
    );
  }
  return problems;
}

function parseInfo(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields[line.slice(0, colon)] = line.slice(colon + 1).trim();
  }
  return fields;
}

/** The URL without its password, for messages. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '(an unparsable URL)';
  }
}
