/**
 * `npm run local-stack` — a real Countersign on this machine for trying an agent (Python, MCP, HTTP)
 * without a Slack account: a private redis-server (or REDIS_URL), the Slack stand-in with its page,
 * and the bot running examples/mcp/countersign.config.ts (the freight example plus the MCP gateway's
 * agent). Agent secrets are made for the run.
 *
 * Prints one JSON line on stdout once everything serves, then stays up until SIGINT (Ctrl-C),
 * SIGTERM or SIGHUP, when it stops everything it started, redis-server included:
 *
 *   {"url", "agent", "secret", "gatewayAgent", "gatewaySecret", "page", "redis", "prefix"}
 *
 * `url` is where agents reach Countersign (COUNTERSIGN_URL); `agent`/`secret` the freight agent's
 * name and secret; `gatewayAgent`/`gatewaySecret` the MCP gateway's; `page` the stand-in's page,
 * where you approve as Dana (operator). The same in words goes to stderr.
 *
 * Environment: REDIS_URL (use that Redis: keys under a fresh prefix, deleted at the end, never
 * flushed); LOCAL_STACK_PORT (the page's port, default any free one).
 */

import { FREIGHT_AGENT } from '../examples/freight/plans.ts';
import mcpConfig from '../examples/mcp/countersign.config.ts';
import { isRedisServerError } from '../src/devtools/redis-server.ts';
import { exitOnSignals, startDemo } from './demo-stack.ts';

const GATEWAY_AGENT = 'mcp-gateway';

async function main(): Promise<void> {
  const port = Number(process.env.LOCAL_STACK_PORT ?? '0');
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    console.error(
      `LOCAL_STACK_PORT must be a port number, got ${JSON.stringify(process.env.LOCAL_STACK_PORT)}`,
    );
    process.exit(2);
  }
  let stack: Awaited<ReturnType<typeof startDemo>>;
  try {
    stack = await startDemo({
      port,
      redisUrl: process.env.REDIS_URL || undefined,
      config: mcpConfig,
      agents: [GATEWAY_AGENT],
    });
  } catch (error) {
    if (!isRedisServerError(error)) throw error;
    console.error(`npm run local-stack: ${error.message}`);
    process.exit(1);
  }
  exitOnSignals(stack, (line) => console.error(`local-stack: ${line}`));

  const ready = {
    url: stack.apiUrl,
    agent: FREIGHT_AGENT,
    secret: stack.secrets[FREIGHT_AGENT],
    gatewayAgent: GATEWAY_AGENT,
    gatewaySecret: stack.secrets[GATEWAY_AGENT],
    page: stack.pageUrl,
    redis: stack.redis.url,
    prefix: stack.prefix,
  };
  process.stdout.write(`${JSON.stringify(ready)}\n`);
  console.error(
    [
      '',
      'Countersign local stack — Slack stand-in, no Slack account needed',
      `  COUNTERSIGN_URL=${ready.url}`,
      `  freight agent:     COUNTERSIGN_AGENT=${ready.agent} COUNTERSIGN_AGENT_SECRET=${ready.secret}`,
      `  MCP gateway agent: COUNTERSIGN_AGENT=${ready.gatewayAgent} COUNTERSIGN_AGENT_SECRET=${ready.gatewaySecret}`,
      `  Slack stand-in:    ${ready.page} (approve as Dana, operator)`,
      `  Redis:             ${stack.redis.private ? `private redis-server at ${stack.redis.url}` : `${stack.redis.url}, keys under ${stack.prefix}:`}`,
      '  Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
}

await main();
