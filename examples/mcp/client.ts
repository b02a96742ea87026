/**
 * A minimal MCP client on the command line, for trying `npm run mcp` and the gateway without an MCP
 * host (docs/mcp-server.md, docs/mcp-gateway.md). It starts the server command after `--` on stdio
 * (with this process's environment), then lists its tools or calls one, and prints the answer.
 *
 *   npx tsx examples/mcp/client.ts list -- npm run -s mcp
 *   npx tsx examples/mcp/client.ts call get_decision '{"run_id":"…","wait_seconds":0}' -- npm run -s mcp
 *
 * stdout is the answer alone (each text item on its own line), so a JSON answer can be piped to a
 * file and parsed. Exits 0, or 1 when the tool answered an error (`isError`), said on stderr.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const argv = process.argv.slice(2);
const separator = argv.indexOf('--');
const [action, name, json] = separator === -1 ? argv : argv.slice(0, separator);
const [command, ...args] = separator === -1 ? [] : argv.slice(separator + 1);
if (command === undefined || (action !== 'list' && (action !== 'call' || name === undefined))) {
  console.error(
    "usage: client.ts list -- <server command…>\n       client.ts call <tool> '<json arguments>' -- <server command…>",
  );
  process.exit(2);
}
const env = Object.fromEntries(
  Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
);
const client = new Client({ name: 'countersign-example-client', version: '0.1.0' });
await client.connect(new StdioClientTransport({ command, args, env, stderr: 'inherit' }));
let failed = false;
if (action === 'list') {
  const { tools } = await client.listTools();
  console.log(JSON.stringify(tools, null, 2));
} else {
  // A gateway call may wait for people for minutes: no request timeout of our own.
  const result = await client.callTool(
    { name: name ?? '', arguments: JSON.parse(json ?? '{}') as Record<string, unknown> },
    undefined,
    { timeout: 24 * 3_600_000 },
  );
  failed = result.isError === true;
  for (const item of result.content as { type: string; text?: string }[]) {
    console.log(item.type === 'text' ? item.text : JSON.stringify(item));
  }
  if (failed) console.error('(isError: true)');
}
await client.close();
process.exit(failed ? 1 : 0);
