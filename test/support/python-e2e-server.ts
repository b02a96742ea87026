/**
 * A real Countersign for the Python client's end-to-end tests (clients/python/tests) and for trying
 * a Python agent by hand: a private redis-server, the Slack stand-in and Countersign with the freight
 * example (test/support/bot-stack.ts), plus a small control endpoint that clicks a card's buttons as
 * Slack would.
 *
 *   npx tsx test/support/python-e2e-server.ts [--exit-on-stdin-eof] [--mcp]
 *
 * Prints one JSON line once everything serves: `{"url", "agent", "secret", "control"}` — Countersign's
 * base URL, the freight agent's name and secret, and the control endpoint:
 *
 *   POST <control>/runs/<runId>/approve[?user=U0OP1]   clicks Approve on the run's card as that user
 *
 * (answers `{"runId", "user", "status"}` with the HTTP status Slack got from the click). With `--mcp`
 * it runs examples/mcp/countersign.config.ts (freight plus the MCP gateway's agent) and the line also
 * has `gatewayAgent` and `gatewaySecret` (docs/mcp-server.md, docs/mcp-gateway.md). Stops
 * everything it started, redis-server included, on SIGINT/SIGTERM/SIGHUP — and with
 * `--exit-on-stdin-eof` when its stdin ends, so it goes when the process that started it with a pipe
 * dies (the pytest fixture), even by SIGKILL.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { FREIGHT_AGENT } from '../../examples/freight/plans.ts';
import mcpConfig from '../../examples/mcp/countersign.config.ts';
import { startRedisServer } from '../../src/devtools/redis-server.ts';
import { botStack } from './bot-stack.ts';
import { FREIGHT_SECRET } from './stack.ts';

const APPROVE = /^\/runs\/([A-Za-z0-9][A-Za-z0-9_-]{0,127})\/approve$/;
const USER = /^U[A-Z0-9]{1,20}$/;

const GATEWAY_AGENT = 'mcp-gateway';
const GATEWAY_SECRET = 'mcp-gateway-test-secret-0123456789';
const withMcp = process.argv.includes('--mcp');

const redis = await startRedisServer();
const stack = await botStack(
  'python-e2e',
  withMcp
    ? { redisUrl: redis.url, config: mcpConfig, secrets: { [GATEWAY_AGENT]: GATEWAY_SECRET } }
    : { redisUrl: redis.url },
);

/** `POST /runs/<runId>/approve?user=<id>`: the click, as the stand-in's interactions send it. */
async function control(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://control');
  const runId = APPROVE.exec(url.pathname)?.[1];
  const user = url.searchParams.get('user') ?? 'U0OP1';
  if (request.method !== 'POST' || runId === undefined || !USER.test(user)) {
    return answer(response, 404, { error: 'POST /runs/<runId>/approve[?user=U…]' });
  }
  const card = await stack.card(runId);
  const click = await stack.click(user, card, 'approve');
  answer(response, 200, { runId, user, status: click.status });
}

function answer(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

const server = createServer((request, response) => {
  control(request, response).catch((error: unknown) =>
    answer(response, 500, { error: error instanceof Error ? error.message : String(error) }),
  );
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const address = server.address();
const controlPort = typeof address === 'object' && address !== null ? address.port : 0;

let stopping: Promise<void> | undefined;
function stop(): Promise<void> {
  stopping ??= (async () => {
    server.closeAllConnections();
    server.close();
    await stack.stop().catch((error: unknown) => console.error('python-e2e-server: stopping:', error));
    await redis.stop();
  })().finally(() => process.exit(0));
  return stopping;
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => void stop());
if (process.argv.includes('--exit-on-stdin-eof')) {
  process.stdin.on('end', () => void stop());
  process.stdin.on('close', () => void stop());
  process.stdin.resume();
}

process.stdout.write(
  `${JSON.stringify({
    url: stack.baseUrl,
    agent: FREIGHT_AGENT,
    secret: FREIGHT_SECRET,
    control: `http://127.0.0.1:${controlPort}`,
    ...(withMcp ? { gatewayAgent: GATEWAY_AGENT, gatewaySecret: GATEWAY_SECRET } : {}),
  })}\n`,
);
