export { choice, isoDate, longText, money, text } from '../pipeline/fields.ts';
export { formatMoney } from '../pipeline/money.ts';
export { rule } from '../pipeline/policy.ts';
export { defineTool } from '../pipeline/tool.ts';
export { ConfigError, isConfigError } from './config-error.ts';
export type * from './config-types.ts';
export { rateLimitOf } from './config-types.ts';
export { defineConfig } from './define-config.ts';
export { DEFAULT_EDIT_WINDOW, driftTargets } from './drift.ts';
export { formatDuration, parseDuration } from './duration.ts';
export {
  MCP_CALL_TOOL,
  MCP_HINTS,
  type McpHint,
  type McpRuleSpec,
  mcpCall,
  mcpPolicy,
  mcpRule,
  parseMcpArguments,
} from './mcp-call.ts';
export { resolveSecret, type SecretSource } from './secret-source.ts';
