/** MCP for agents: Countersign's agent API as an MCP server (docs/mcp-server.md). */
export { type AgentServerOptions, createAgentServer, MAX_WAIT_SECONDS } from './agent-server.ts';
export { type McpSettings, type McpSettingsResult, readMcpSettings } from './mcp-env.ts';
export { argsJsonSchema, submitPlanInputSchema } from './plan-schema.ts';
