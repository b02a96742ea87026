/** MCP for agents: Countersign's agent API as an MCP server (docs/mcp-server.md) and the MCP gateway (docs/mcp-gateway.md). */
export { type AgentServerOptions, createAgentServer, MAX_WAIT_SECONDS } from './agent-server.ts';
export { createGatewayServer, declaredAnnotations, type GatewayOptions } from './gateway.ts';
export { type McpMode, type McpSettings, type McpSettingsResult, readMcpSettings } from './mcp-env.ts';
export { argsJsonSchema, submitPlanInputSchema } from './plan-schema.ts';
