/**
 * Calls through the MCP gateway (`npm run mcp -- --gateway …`, docs/mcp-gateway.md) in the config.
 * Every downstream tools/call becomes a one-step plan of one registered tool, `mcp_call`, whose args
 * name the downstream tool, carry its arguments as JSON text (editable in Slack, checked to be a JSON
 * object on every version) and the MCP annotations the downstream server declared for it. The
 * pipeline validates it like any step; the policy decides its route with rules from `mcpPolicy`.
 */
import { z } from 'zod';
import { longText, text } from '../pipeline/fields.ts';
import { isJsonObject, type JsonObject } from '../pipeline/json.ts';
import type { PolicyRule } from '../pipeline/policy.ts';
import { defineTool } from '../pipeline/tool.ts';

/** The registered tool every gateway call is planned as. */
export const MCP_CALL_TOOL = 'mcp_call';

/** The MCP tool annotations a rule can match (booleans, as the MCP spec defines them). */
export const MCP_HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;
export type McpHint = (typeof MCP_HINTS)[number];

/** The JSON object in `arguments`, or why it is not one. */
export function parseMcpArguments(
  text: string,
): { ok: true; arguments: JsonObject } | { ok: false; message: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `arguments must be JSON: ${(error as Error).message}` };
  }
  return isJsonObject(value)
    ? { ok: true, arguments: value as JsonObject }
    : { ok: false, message: 'arguments must be a JSON object, e.g. {"id": "r1"}' };
}

const declaredHints = (annotations: { readonly [hint in McpHint]?: boolean | undefined }) =>
  MCP_HINTS.filter((hint) => annotations[hint] === true);

/** A downstream MCP tool's call: register it in `tools` and on the gateway agent's `tools`. */
export const mcpCall = defineTool({
  name: MCP_CALL_TOOL,
  title: 'MCP tool call',
  // The gateway cannot know what a downstream tool does: escalations need an explicit grant for it.
  effect: 'irreversible',
  args: z.strictObject({
    tool: text({ label: 'MCP tool', max: 128 }),
    arguments: longText({ label: 'Arguments (JSON)', max: 10_000 }),
    annotations: z.strictObject({
      readOnlyHint: z.boolean().optional(),
      destructiveHint: z.boolean().optional(),
      idempotentHint: z.boolean().optional(),
      openWorldHint: z.boolean().optional(),
    }),
  }),
  summarize: (args) => {
    const hints = declaredHints(args.annotations);
    return `Call ${args.tool}${hints.length === 0 ? '' : ` (${hints.join(', ')})`}`;
  },
  checks: (args) => {
    const parsed = parseMcpArguments(args.arguments);
    return parsed.ok ? [] : [{ path: ['arguments'], message: parsed.message }];
  },
});

/** Which downstream calls a rule covers: by tool name, by declared annotations, or both (all must hold). */
export interface McpRuleSpec extends Omit<PolicyRule, 'tool' | 'when'> {
  /** Downstream tool names; omitted: any. */
  readonly tools?: readonly string[];
  /**
   * Annotations the downstream tool must declare with these values. A hint the server does not
   * declare matches neither `true` nor `false`: nothing is assumed about an undeclared hint.
   */
  readonly annotations?: Partial<Record<McpHint, boolean>>;
}

/** A policy rule on `mcp_call` matching a downstream tool's name and annotations. */
export function mcpRule(spec: McpRuleSpec): PolicyRule {
  const { tools, annotations, ...rest } = spec;
  const match = { tools: tools ?? null, annotations: annotations ?? {} };
  const when = (args: JsonObject): boolean => {
    if (match.tools !== null && !match.tools.includes(String(args.tool))) return false;
    const declared = isJsonObject(args.annotations) ? args.annotations : {};
    return Object.entries(match.annotations).every(([hint, value]) => declared[hint] === value);
  };
  // The config digest hashes a predicate's source, the same for every mcpRule: this one names its match.
  Object.defineProperty(when, 'toString', { value: () => `mcpRule(${JSON.stringify(match)})` });
  return { ...rest, tool: MCP_CALL_TOOL, when };
}

/**
 * The gateway's policy: `rules` in order, then every call no rule covers is reviewed by `unruled`'s
 * approvers (fail closed: a downstream tool nobody wrote a rule for still needs a person).
 * @example policy: mcpPolicy([{ annotations: { readOnlyHint: true }, route: 'auto' }], { approvers: 'operators' })
 */
export function mcpPolicy(
  rules: readonly McpRuleSpec[],
  unruled: { readonly approvers: string; readonly approvals?: number },
): PolicyRule[] {
  return [...rules.map(mcpRule), { name: 'mcp-unruled', tool: MCP_CALL_TOOL, route: 'review', ...unruled }];
}
