/**
 * The MCP SDK's own client over stdio, spawning `scripts/mcp.ts` (node --import tsx) as the freight
 * agent against a Countersign the test started, and reading a tool result's JSON body.
 */
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { FREIGHT_AGENT } from '../../examples/freight/plans.ts';
import { FREIGHT_SECRET } from './stack.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const MCP_SCRIPT = fileURLToPath(new URL('../../scripts/mcp.ts', import.meta.url));

/** The environment `npm run mcp` needs to act as the freight agent against `url`. */
export function freightMcpEnv(url: string): Record<string, string> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  return {
    ...env,
    COUNTERSIGN_URL: url,
    COUNTERSIGN_AGENT: FREIGHT_AGENT,
    COUNTERSIGN_AGENT_SECRET: FREIGHT_SECRET,
    COUNTERSIGN_CONFIG: 'examples/freight/countersign.config.ts',
  };
}

/** An SDK client connected to `node --import tsx scripts/mcp.ts …args` with `env`. */
export async function connectMcp(env: Record<string, string>, args: readonly string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', MCP_SCRIPT, ...args],
    env,
    cwd: ROOT,
    stderr: 'inherit',
  });
  const client = new Client({ name: 'countersign-test', version: '0.0.0' });
  await client.connect(transport);
  return client;
}

/** The JSON body of a tool result (its first text content) and whether it is an error. */
export function toolBody(result: unknown): { isError: boolean; body: Record<string, unknown> } {
  const { content, isError } = result as CallToolResult;
  const first = content[0];
  if (first?.type !== 'text') throw new Error(`expected a text result, got ${JSON.stringify(result)}`);
  return { isError: isError === true, body: JSON.parse(first.text) as Record<string, unknown> };
}
