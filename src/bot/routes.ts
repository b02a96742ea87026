/** The bot's own HTTP routes beside Slack's: `GET /healthz` (Redis and Slack reachable) and `GET /metrics`. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CustomRoute } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { Redis } from 'ioredis';
import type { Metrics } from './metrics.ts';

type Response = ServerResponse<IncomingMessage>;

/** The routes, for Bolt's `customRoutes` (served in HTTP and in Socket Mode). */
export function botRoutes(deps: { redis: Redis; client: () => WebClient; metrics: Metrics }): CustomRoute[] {
  return [
    { path: '/healthz', method: ['GET'], handler: (_req, res) => void health(deps, res) },
    { path: '/metrics', method: ['GET'], handler: (_req, res) => void metrics(deps.metrics, res) },
  ];
}

async function health(deps: { redis: Redis; client: () => WebClient }, res: Response): Promise<void> {
  const reach = (probe: Promise<unknown>) =>
    probe.then(
      () => 'ok',
      (error: unknown) => `unreachable: ${error instanceof Error ? error.message : String(error)}`,
    );
  const [redis, slack] = await Promise.all([reach(deps.redis.ping()), reach(deps.client().auth.test())]);
  const ok = redis === 'ok' && slack === 'ok';
  res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ ok, redis, slack }));
}

async function metrics(source: Metrics, res: Response): Promise<void> {
  const rendered = await source.render();
  res.writeHead(200, { 'content-type': rendered.contentType });
  res.end(rendered.body);
}
