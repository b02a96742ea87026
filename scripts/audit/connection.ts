/** The audit's Redis: connecting fails fast, and any Redis failure is an `io` error. */
import { Redis } from 'ioredis';
import { AuditError, messageOf } from './audit-error.ts';

/** The URL without its password, for messages. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

/** A connected client, or an `io` error naming the URL (without its password). */
export async function connect(url: string): Promise<Redis> {
  // Fail fast: an audit against an unreachable Redis should say so, not retry forever.
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 5_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // Kept for the message: a refused connection rejects connect() with only "Connection is closed".
  // The listener also keeps ioredis from logging errors we report ourselves.
  let lastError: unknown;
  redis.on('error', (error: unknown) => {
    lastError = error;
  });
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new AuditError(
      `cannot connect to Redis at ${redactUrl(url)}: ${messageOf(lastError ?? error)}`,
      'io',
    );
  }
  return redis;
}

/** Redis failing mid-command (connection lost, a key of the wrong type) is an `io` error, not a crash. */
export async function fromRedis<T>(reply: Promise<T>): Promise<T> {
  try {
    return await reply;
  } catch (error) {
    throw new AuditError(`Redis error: ${messageOf(error)}`, 'io');
  }
}
