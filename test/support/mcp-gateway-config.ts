/** The config of the MCP gateway's tests: one agent whose every call is an `mcp_call`, routed by annotations. */
import { defineConfig, MCP_CALL_TOOL, mcpCall, mcpPolicy } from '../../src/config/index.ts';

export const GATEWAY_AGENT = 'records-gateway';
export const GATEWAY_SECRET = 'records-gateway-test-secret-0123456789';

export const gatewayConfig = defineConfig({
  tools: [mcpCall],
  agents: { [GATEWAY_AGENT]: { tools: [MCP_CALL_TOOL], channel: 'C0OPS', secret: GATEWAY_SECRET } },
  groups: { operators: ['U0OP1', 'U0OP2'] },
  policy: mcpPolicy(
    [
      { name: 'reads', annotations: { readOnlyHint: true }, route: 'auto' },
      { name: 'no-drop-all', tools: ['drop_all'], route: 'block', reason: 'never through an agent' },
      {
        name: 'destructive',
        annotations: { destructiveHint: true },
        route: 'review',
        approvers: 'operators',
      },
    ],
    { approvers: 'operators' },
  ),
  authoring: { operators: [MCP_CALL_TOOL] },
});
