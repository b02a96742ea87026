import { Redis } from 'ioredis';
import { consoleOutageLog, RedisOutages } from './redis-outage.ts';

/**
 * What a connection is for. BullMQ workers block on Redis and must retry commands forever
 * (`maxRetriesPerRequest: null`, which BullMQ enforces); clients — producers, the approvals
 * service, readers — should fail a command after a few reconnect attempts, so a Redis outage
 * surfaces as an error instead of a hang.
 */
export type ConnectionRole = 'worker' | 'client';

export interface ConnectionOptions {
  readonly role: ConnectionRole;
  /** Shown by `CLIENT LIST`, e.g. `countersign:intake`. */
  readonly name?: string;
  /**
   * Queue commands while disconnected (ioredis' default). Off for a probe: a command then fails at
   * once while Redis is unreachable.
   */
  readonly offlineQueue?: boolean;
  /**
   * Where the connection's errors go: one line when an outage starts, one when it ends (default: a
   * tracker of its own writing plain lines to stderr).
   */
  readonly outages?: RedisOutages;
}

/** Retries per command before a client-role connection gives up (ioredis' default). */
const CLIENT_RETRIES_PER_REQUEST = 20;

/**
 * Opens an ioredis connection for a role. The caller owns it and closes it (`quit()`); BullMQ leaves
 * a connection it was given open.
 * @example
 * const connection = createRedisConnection(env.REDIS_URL, { role: 'worker', name: 'countersign:intake' });
 */
export function createRedisConnection(url: string, options: ConnectionOptions): Redis {
  const connection = new Redis(url, {
    maxRetriesPerRequest: options.role === 'worker' ? null : CLIENT_RETRIES_PER_REQUEST,
    ...(options.name === undefined ? {} : { connectionName: options.name }),
    ...(options.offlineQueue === false ? { enableOfflineQueue: false, maxRetriesPerRequest: 0 } : {}),
  });
  const outages = options.outages ?? new RedisOutages(consoleOutageLog);
  outages.watch(connection, options.name ?? 'redis');
  return connection;
}
