/**
 * The agent gateway (docs/http-api.md): agents reach Countersign over HTTP only, on the bot's port.
 * Every `/v1` request except the OpenAPI document is signed with the agent's secret; a request is
 * matched, read (size-limited), authenticated, rate-limited, then handed to one handler that calls
 * approvals and answers JSON. Refusals are counted and never reach a journal, so a flood of them grows
 * nothing without bound.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CustomRoute } from '@slack/bolt';
import { jwksOf } from '../pipeline/index.ts';
import { verifySignedRequest } from '../protocol/index.ts';
import type { AgentRequest, GatewayDeps } from './context.ts';
import { decisionFeed, runDecision } from './decisions.ts';
import { readBody, sendError, sendJson } from './http.ts';
import { openApiDocument } from './openapi.ts';
import { reportOutcome } from './outcomes.ts';
import { runReleases } from './releases.ts';
import { runStatus, submitRun } from './runs.ts';

export type { GatewayDeps, GatewayMetrics, ReleaseReads } from './context.ts';
export { DecisionWaiters } from './decision-waiters.ts';
export { RateLimiter } from './rate-limit.ts';

type Handler = (deps: GatewayDeps, request: AgentRequest) => Promise<void>;

interface Route {
  readonly name: string;
  readonly method: 'GET' | 'POST';
  readonly pattern: RegExp;
  readonly params: readonly string[];
  readonly handler: Handler;
  /** The largest body the route reads. */
  readonly maxBody: (deps: GatewayDeps) => number;
}

const SMALL_BODY = 16 * 1024;
const SEGMENT = '([^/]+)';
const ROUTES: readonly Route[] = [
  {
    name: 'submit',
    method: 'POST',
    pattern: /^\/v1\/runs$/,
    params: [],
    handler: submitRun,
    // The plan's own limit, plus room for what parse would refuse with a clear diagnostic.
    maxBody: (deps) => deps.config.pipeline.limits.maxPlanBytes + 1024,
  },
  {
    name: 'run',
    method: 'GET',
    pattern: new RegExp(`^/v1/runs/${SEGMENT}$`),
    params: ['runId'],
    handler: runStatus,
    maxBody: () => SMALL_BODY,
  },
  {
    name: 'decision',
    method: 'GET',
    pattern: new RegExp(`^/v1/runs/${SEGMENT}/decision$`),
    params: ['runId'],
    handler: runDecision,
    maxBody: () => SMALL_BODY,
  },
  {
    name: 'releases',
    method: 'GET',
    pattern: new RegExp(`^/v1/runs/${SEGMENT}/releases$`),
    params: ['runId'],
    handler: runReleases,
    maxBody: () => SMALL_BODY,
  },
  {
    name: 'outcome',
    method: 'POST',
    pattern: new RegExp(`^/v1/runs/${SEGMENT}/steps/${SEGMENT}/outcome$`),
    params: ['runId', 'stepId'],
    handler: reportOutcome,
    maxBody: () => SMALL_BODY,
  },
  {
    name: 'feed',
    method: 'GET',
    pattern: /^\/v1\/decisions$/,
    params: [],
    handler: decisionFeed,
    maxBody: () => SMALL_BODY,
  },
];

export interface Gateway {
  /** For Bolt's `customRoutes`: served on the bot's port in HTTP and in Socket Mode. */
  readonly routes: CustomRoute[];
  /** Handles one request (what the routes call). */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

export function createGateway(deps: GatewayDeps): Gateway {
  const openapi = JSON.stringify(openApiDocument());
  const jwks = jwksOf(deps.publicKeys);
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://countersign.invalid');
    const method = (req.method ?? 'GET').toUpperCase();
    if (method === 'GET' && url.pathname === '/v1/openapi.json') {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(openapi);
      return;
    }
    if (method === 'GET' && url.pathname === '/.well-known/jwks.json')
      return sendJson(res, 200, jwks, { 'cache-control': 'max-age=300' });
    const matched = match(url.pathname);
    if (matched === undefined)
      return sendError(res, 'not_found', `no such endpoint: ${url.pathname.slice(0, 200)}`);
    const route = matched.routes.find((candidate) => candidate.method === method);
    if (route === undefined) {
      return sendError(
        res,
        'method_not_allowed',
        `${url.pathname} takes ${matched.routes.map((r) => r.method).join(', ')}`,
        {
          headers: { allow: matched.routes.map((r) => r.method).join(', ') },
        },
      );
    }
    const refuse = (reason: string, send: () => void) => {
      deps.metrics.refused(reason);
      deps.metrics.request(route.name, 0);
      send();
    };
    const body = await readBody(req, route.maxBody(deps));
    if (!body.ok)
      return refuse('too_large', () =>
        sendError(res, 'too_large', `the body is over ${route.maxBody(deps)} bytes`),
      );
    const auth = verifySignedRequest({
      header: (name) => {
        const value = req.headers[name];
        return Array.isArray(value) ? value[0] : value;
      },
      method,
      pathWithQuery: req.url ?? '/',
      body: body.text,
      now: deps.clock(),
      secretOf: deps.secretOf,
    });
    if (!auth.ok) return refuse(auth.reason, () => sendError(res, 'unauthorized', auth.message));
    const allowed = deps.rateLimit.take(auth.agent);
    if (!allowed.ok) {
      return refuse('rate_limited', () =>
        sendError(
          res,
          'rate_limited',
          `agent ${auth.agent} is over its request rate; retry after ${allowed.retryAfterSeconds} s`,
          {
            headers: { 'retry-after': String(allowed.retryAfterSeconds) },
          },
        ),
      );
    }
    const closed = new AbortController();
    res.on('close', () => closed.abort());
    try {
      await route.handler(deps, {
        agent: auth.agent,
        params: matched.params(route),
        query: url.searchParams,
        body: body.text,
        req,
        res,
        closed: closed.signal,
      });
    } catch (error) {
      const { runId } = matched.params(route);
      deps.onError(error, `the gateway's ${route.name} for agent ${auth.agent}`, {
        agent: auth.agent,
        ...(runId === undefined ? {} : { runId }),
      });
      sendError(res, 'internal', 'Countersign could not finish this request; it is safe to retry');
    }
    deps.metrics.request(route.name, res.statusCode);
  };
  const all = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
  const wrapped = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((error: unknown) => {
      deps.onError(error, 'the gateway');
      sendError(res, 'internal', 'Countersign could not finish this request; it is safe to retry');
    });
  };
  return {
    handle,
    routes: [
      { path: '/v1/*rest', method: all, handler: wrapped },
      { path: '/.well-known/jwks.json', method: ['GET'], handler: wrapped },
    ],
  };
}

/** The routes whose pattern matches a path (one per method), and the path's parameters for a route. */
function match(path: string) {
  const routes = ROUTES.filter((route) => route.pattern.test(path));
  if (routes.length === 0) return undefined;
  return {
    routes,
    params: (route: Route): Record<string, string> => {
      const found = route.pattern.exec(path) ?? [];
      return Object.fromEntries(
        route.params.map((name, index) => [name, safeDecode(found[index + 1] ?? '')]),
      );
    },
  };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
