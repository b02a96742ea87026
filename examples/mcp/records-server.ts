/**
 * A small MCP server on stdio to put behind the gateway (docs/mcp-gateway.md, and its tests): records
 * with a read (`readOnlyHint`), a destructive delete (`destructiveHint`), a tool that declares no
 * annotations and one the example policy blocks. Each tool only answers with the arguments it was
 * called with, so you see exactly what was forwarded.
 *
 *   npm run mcp -- --gateway npx tsx examples/mcp/records-server.ts
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';

const byId: Tool['inputSchema'] = {
  type: 'object',
  properties: { id: { type: 'string' } },
  required: ['id'],
  additionalProperties: false,
};

const TOOLS: Tool[] = [
  {
    name: 'read_status',
    description: "A record's status",
    inputSchema: byId,
    annotations: { readOnlyHint: true },
  },
  {
    name: 'delete_record',
    description: 'Delete a record',
    inputSchema: byId,
    annotations: { readOnlyHint: false, destructiveHint: true },
  },
  {
    name: 'unknown_tool',
    description: 'Does something nobody wrote a rule for',
    inputSchema: { type: 'object' },
  },
  {
    name: 'drop_all',
    description: 'Delete every record',
    inputSchema: { type: 'object' },
    annotations: { destructiveHint: true },
  },
];

const server = new Server({ name: 'records', version: '0.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
server.setRequestHandler(CallToolRequestSchema, (request) => {
  const { name, arguments: args = {} } = request.params;
  if (!TOOLS.some((tool) => tool.name === name)) {
    return { content: [{ type: 'text', text: `no tool ${name}` }], isError: true };
  }
  return { content: [{ type: 'text', text: `${name} ran with ${JSON.stringify(args)}` }] };
});
await server.connect(new StdioServerTransport());
