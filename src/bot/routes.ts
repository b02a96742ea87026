/**
 * The bot's own HTTP routes beside Slack's: `GET /healthz` (Redis and Slack, answered within 1 s) and
 * `GET /metrics` (Prometheus text; behind a bearer token when one is configured).
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CustomRoute } from '@slack/bolt';
import type { Redis } from 'ioredis';
import type { Metrics } from './metrics.ts';
import type { SlackAuth } from './slack-auth.ts';

type Response = ServerResponse<IncomingMessage>;

/** How long `/healthz` waits for Redis's PONG: the probe answers within 1 s either way. */
export const HEALTH_PING_TIMEOUT_MS = 500;

export interface RouteDeps {
  /**
   * A connection of its own without an offline queue: while Redis is down a PING fails at once instead
   * of waiting in line behind the reconnect.
   */
  readonly healthRedis: Redis;
  readonly slackAuth: SlackAuth;
  readonly metrics: Metrics;
  /** When set, `/metrics` answers only `Authorization: Bearer <token>`. */
  readonly metricsToken?: string;
}

/** The routes, for Bolt's `customRoutes` (served in HTTP and in Socket Mode). */
export function botRoutes(deps: RouteDeps): CustomRoute[] {
  return [
    { path: '/healthz', method: ['GET'], handler: (_req, res) => void health(deps, res) },
    { path: '/metrics', method: ['GET'], handler: (req, res) => void metrics(deps, req, res) },
  ];
}

async function health(deps: RouteDeps, res: Response): Promise<void> {
  const redis = await pingWithin(deps.healthRedis, HEALTH_PING_TIMEOUT_MS);
  const auth = deps.slackAuth.current();
  const slack = auth.ok ? 'ok' : auth.reason === 'checking' ? 'checking' : `auth.test failed: ${auth.reason}`;
  const ok = redis === 'ok' && auth.ok;
  res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify({ ok, redis, slack }));
}

/** `ok`, or why not in a few words. */
async function pingWithin(redis: Redis, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no PONG within ${timeoutMs} ms`), timeoutMs);
  });
  const pong = redis.ping().then(
    () => 'ok',
    (error: unknown) =>
      `unreachable (${redis.status}): ${error instanceof Error ? error.message : String(error)}`,
  );
  try {
    return await Promise.race([pong, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function metrics(deps: RouteDeps, req: IncomingMessage, res: Response): Promise<void> {
  if (deps.metricsToken !== undefined && !bearerMatches(req.headers.authorization, deps.metricsToken)) {
    res.writeHead(401, { 'content-type': 'text/plain; charset=utf-8', 'www-authenticate': 'Bearer' });
    res.end('This endpoint needs Authorization: Bearer <METRICS_TOKEN>.\n');
    return;
  }
  const rendered = await deps.metrics.render();
  res.writeHead(200, { 'content-type': rendered.contentType });
  res.end(rendered.body);
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(/^Bearer (.+)$/.exec(header ?? '')?.[1] ?? '');
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
