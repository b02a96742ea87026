/**
 * One outage, two lines: every connection of a process reports its errors here, and Redis going away
 * is logged once when the first connection loses it ("Redis unreachable") and once when every
 * connection that lost it is ready again ("Redis reachable again", with how long it lasted). The
 * retries in between (ioredis reconnects every ≤ 2 s) are logged at `debug` only. Without a listener,
 * ioredis would print `[ioredis] Unhandled error event` and a stack per retry. The connections BullMQ
 * duplicates for blocking reads are not watched here: their errors reach the workers' `error` events,
 * which src/main.ts logs at `debug` when they only say Redis is unreachable.
 */
import type { Redis } from 'ioredis';

/** Where outage lines go: a level, the line's fields, its message (pino's `logger[level](fields, msg)`). */
export type OutageLog = (
  level: 'debug' | 'info' | 'warn',
  fields: Readonly<Record<string, unknown>>,
  message: string,
) => void;

export const REDIS_UNREACHABLE = 'Redis unreachable';
export const REDIS_REACHABLE_AGAIN = 'Redis reachable again';

/** The outages of one process's connections. */
export class RedisOutages {
  /** Connections that lost Redis and are not ready again. */
  private readonly down = new Set<string>();
  private since: number | undefined;

  constructor(
    private readonly log: OutageLog,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Reports `connection`'s errors and recoveries under `name`. */
  watch(connection: Redis, name: string): void {
    connection.on('error', (error: Error) => this.lost(name, error));
    connection.on('ready', () => this.back(name));
    // Closed for good (quit, or closed while Redis was away): no longer waited for.
    connection.on('end', () => {
      this.down.delete(name);
      if (this.down.size === 0) this.since = undefined;
    });
  }

  private lost(name: string, error: Error): void {
    if (this.since === undefined) {
      this.since = this.clock();
      this.down.add(name);
      this.log('warn', { connection: name, err: error }, REDIS_UNREACHABLE);
      return;
    }
    this.down.add(name);
    this.log('debug', { connection: name, err: error }, 'Redis still unreachable');
  }

  private back(name: string): void {
    if (!this.down.delete(name) || this.down.size > 0 || this.since === undefined) return;
    this.log('info', { connection: name, downForMs: this.clock() - this.since }, REDIS_REACHABLE_AGAIN);
    this.since = undefined;
  }
}

/** The default for a connection created without a tracker: plain lines on stderr (scripts, tests). */
export const consoleOutageLog: OutageLog = (level, fields, message) => {
  if (level === 'debug') return;
  const error = fields.err instanceof Error ? `: ${fields.err.message}` : '';
  console.error(`countersign: ${message} (${String(fields.connection)})${error}`);
};

/** A Redis connection error (refused, reset, closed, retries exhausted): expected during an outage. */
export function isRedisConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  return (
    error.name === 'MaxRetriesPerRequestError' ||
    /^Connection is closed\.?$|Stream isn't writeable|enableOfflineQueue options is false/.test(error.message)
  );
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
