import { defineConfig, MCP_CALL_TOOL, mcpCall, mcpPolicy } from '../../src/config/index.ts';
import { freightConfigInput } from '../freight/countersign.config.ts';

/**
 * The freight example plus an MCP gateway agent (docs/mcp-gateway.md): `mcp-gateway` may only make
 * `mcp_call`s. Read-only tools pass straight through, `drop_all` is never allowed, destructive tools
 * need an operator, and a tool no rule covers is reviewed by an operator too (fail closed).
 * Operators may edit a call's arguments in Slack.
 */
export default defineConfig({
  ...freightConfigInput,
  tools: [...freightConfigInput.tools, mcpCall],
  agents: {
    ...freightConfigInput.agents,
    'mcp-gateway': { tools: [MCP_CALL_TOOL], channel: 'C0OPS', secret: { env: 'MCP_GATEWAY_SECRET' } },
  },
  policy: [
    ...freightConfigInput.policy,
    ...mcpPolicy(
      [
        { name: 'mcp-reads', annotations: { readOnlyHint: true }, route: 'auto' },
        { name: 'mcp-no-drop-all', tools: ['drop_all'], route: 'block', reason: 'never through an agent' },
        {
          name: 'mcp-destructive',
          annotations: { destructiveHint: true },
          route: 'review',
          approvers: 'operators',
        },
      ],
      { approvers: 'operators' },
    ),
  ],
  authoring: {
    ...freightConfigInput.authoring,
    operators: [...(freightConfigInput.authoring.operators as readonly string[]), MCP_CALL_TOOL],
  },
});
