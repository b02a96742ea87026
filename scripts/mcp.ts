/**
 * `npm run mcp` — Countersign as an MCP server on stdio, for one agent (docs/mcp-server.md).
 *
 * Environment: COUNTERSIGN_URL, COUNTERSIGN_AGENT, COUNTERSIGN_AGENT_SECRET, COUNTERSIGN_CONFIG (the
 * deployment's config, for its tool registry). stdout is the MCP channel: everything else goes to stderr.
 * Exits 2 when a setting is missing or wrong, naming each.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { AgentClient } from '../src/client/index.ts';
import { type CountersignConfig, isConfigError } from '../src/config/index.ts';
import { loadConfig } from '../src/config/load.ts';
import { createAgentServer, readMcpSettings } from '../src/mcp/index.ts';

function refuse(problems: readonly string[]): never {
  console.error(`countersign mcp cannot start:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  process.exit(2);
}

async function main(): Promise<void> {
  const read = readMcpSettings(process.env);
  if (!read.ok) refuse(read.problems);
  const { settings } = read;
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
  const client = new AgentClient({
    url: settings.url,
    agent: settings.agent,
    secret: settings.secret,
    onError: (error) => console.error('countersign mcp:', error instanceof Error ? error.message : error),
  });
  const server = createAgentServer({ client, registry: config.pipeline.tools, agentTools: agent.tools });
  server.onclose = () => {
    void client.close().finally(() => process.exit(0));
  };
  await server.connect(new StdioServerTransport());
}

main().catch((error: unknown) => {
  console.error('countersign mcp failed:', error);
  process.exit(1);
});
