/**
 * `npm run mcp` — Countersign over MCP on stdio, as one agent.
 *
 *   npm run mcp                                   the MCP server: submit_plan, get_decision, report_outcome (docs/mcp-server.md)
 *   npm run mcp -- --gateway <command> [args…]    the gateway in front of another MCP server (docs/mcp-gateway.md)
 *   node dist/scripts/mcp.js [--gateway …]         the same, compiled by `npm run build` (production: no tsx)
 *
 * Environment: COUNTERSIGN_URL, COUNTERSIGN_AGENT, COUNTERSIGN_AGENT_SECRET; COUNTERSIGN_CONFIG (the
 * deployment's config, for its tool registry; the server only); COUNTERSIGN_GATEWAY_WAIT (how long a
 * gateway call waits for people, default 10m). stdout is the MCP channel: everything else goes to
 * stderr. Exits 2 when a setting is missing or wrong, naming each.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { AgentClient } from '../src/client/index.ts';
import { type CountersignConfig, isConfigError } from '../src/config/index.ts';
import { loadConfig } from '../src/config/load.ts';
import {
  createAgentServer,
  createGatewayServer,
  type McpSettings,
  readMcpSettings,
} from '../src/mcp/index.ts';

function refuse(problems: readonly string[]): never {
  console.error(`countersign mcp cannot start:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  process.exit(2);
}

async function agentServer(settings: McpSettings, client: AgentClient): Promise<Server> {
  let config: CountersignConfig;
  try {
    config = await loadConfig(settings.configPath);
  } catch (error) {
    if (isConfigError(error)) refuse(error.problems);
    throw error;
  }
  const agent = config.pipeline.agents[settings.agent];
  if (agent === undefined) {
    refuse([
      `COUNTERSIGN_AGENT: ${settings.configPath} has no agent ${JSON.stringify(settings.agent)} (it has ${Object.keys(config.agents).join(', ')})`,
    ]);
  }
  return createAgentServer({ client, registry: config.pipeline.tools, agentTools: agent.tools });
}

async function gatewayServer(
  settings: McpSettings,
  client: AgentClient,
  command: readonly string[],
): Promise<{ server: Server; downstream: Client }> {
  const [program, ...args] = command;
  if (program === undefined) refuse(['--gateway needs the command of the MCP server to sit in front of']);
  // The downstream server gets this environment without the agent's secret: it must not sign plans.
  const { COUNTERSIGN_AGENT_SECRET: _secret, ...inherited } = process.env;
  const env = Object.fromEntries(
    Object.entries(inherited).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const downstream = new Client({ name: 'countersign-gateway', version: '0.1.0' });
  try {
    await downstream.connect(new StdioClientTransport({ command: program, args, env, stderr: 'inherit' }));
  } catch (error) {
    // A command that does not start, or exits before answering initialize (a typo, not an MCP server).
    const code = (error as { code?: unknown }).code;
    const why =
      code === 'ENOENT'
        ? 'no such command'
        : code === ErrorCode.ConnectionClosed
          ? 'it exited before answering initialize'
          : String(error);
    console.error(`countersign mcp: the downstream MCP server (${command.join(' ')}) did not start: ${why}`);
    process.exit(1);
  }
  downstream.onclose = () => {
    console.error('countersign mcp: the downstream MCP server exited');
    process.exit(1);
  };
  return {
    server: createGatewayServer({
      client,
      downstream,
      waitMs: settings.gatewayWaitMs,
      log: (line) => console.error(`countersign mcp: ${line}`),
    }),
    downstream,
  };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const gateway = argv[0] === '--gateway';
  const read = readMcpSettings(process.env, gateway ? 'gateway' : 'server');
  if (!read.ok) refuse(read.problems);
  const { settings } = read;
  const client = new AgentClient({
    url: settings.url,
    agent: settings.agent,
    secret: settings.secret,
    onError: (error) => console.error('countersign mcp:', error instanceof Error ? error.message : error),
  });
  const { server, downstream } = gateway
    ? await gatewayServer(settings, client, argv.slice(1))
    : { server: await agentServer(settings, client), downstream: undefined };
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    if (downstream !== undefined) downstream.onclose = () => undefined;
    void Promise.allSettled([client.close(), downstream?.close()]).finally(() => process.exit(0));
  };
  server.onclose = stop;
  // The stdio transport does not close when its client goes away: stdin ending means it has.
  process.stdin.once('end', stop);
  process.stdin.once('close', stop);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, stop);
  await server.connect(new StdioServerTransport());
}

main().catch((error: unknown) => {
  console.error('countersign mcp failed:', error);
  process.exit(1);
});
