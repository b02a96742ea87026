/** `mcp_call`, `mcpRule` and `mcpPolicy` (src/config/mcp-call.ts) through the real pipeline and config digest. */
import { describe, expect, it } from 'vitest';
import mcpConfig from '../../examples/mcp/countersign.config.ts';
import { defineConfig, MCP_CALL_TOOL, mcpCall, mcpPolicy } from '../../src/config/index.ts';
import { validate } from '../../src/pipeline/index.ts';
import { NOW } from '../support/freight.ts';

/** A one-step gateway plan calling `tool` with `args`, as the gateway submits it. */
function gatewayPlan(tool: string, annotations: Record<string, boolean>, args = '{"id":"r1"}') {
  return {
    runId: 'run-mcp-1',
    agent: 'mcp-gateway',
    expiresAt: new Date(NOW + 600_000).toISOString(),
    steps: [{ id: 's1', tool: MCP_CALL_TOOL, args: { tool, arguments: args, annotations } }],
  };
}

async function routeOf(tool: string, annotations: Record<string, boolean>) {
  const result = await validate(gatewayPlan(tool, annotations), { config: mcpConfig.pipeline, now: NOW });
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.diagnostics)}`);
  const route = result.plan.steps[0]?.route;
  return route === undefined ? undefined : { kind: route.kind, rule: route.rule };
}

describe('MCP gateway calls in the policy', () => {
  it('routes by declared annotations and tool names, first match wins', async () => {
    expect(await routeOf('read_status', { readOnlyHint: true })).toEqual({ kind: 'auto', rule: 'mcp-reads' });
    expect(await routeOf('delete_record', { readOnlyHint: false, destructiveHint: true })).toEqual({
      kind: 'review',
      rule: 'mcp-destructive',
    });
    expect(await routeOf('drop_all', { destructiveHint: true })).toEqual({
      kind: 'block',
      rule: 'mcp-no-drop-all',
    });
  });

  it('reviews a tool no rule covers, and assumes nothing about a hint the server did not declare', async () => {
    expect(await routeOf('unknown_tool', {})).toEqual({ kind: 'review', rule: 'mcp-unruled' });
    expect(await routeOf('maybe_read', { destructiveHint: false })).toEqual({
      kind: 'review',
      rule: 'mcp-unruled',
    });
  });

  it('refuses arguments that are not a JSON object, in the authorize phase, at the arguments field', async () => {
    for (const text of ['{"id": ', '[1, 2]']) {
      const result = await validate(gatewayPlan('delete_record', { destructiveHint: true }, text), {
        config: mcpConfig.pipeline,
        now: NOW,
      });
      expect(result).toMatchObject({
        ok: false,
        phase: 'authorize',
        diagnostics: [{ code: 'check_failed', stepId: 's1', path: ['arguments'] }],
      });
    }
  });

  it('gives configs whose rules match different annotations different digests', () => {
    const configWith = (annotations: { readOnlyHint: boolean }) =>
      defineConfig({
        tools: [mcpCall],
        agents: {
          gateway: { tools: [MCP_CALL_TOOL], channel: 'C0OPS', secret: 'gateway-secret-0123456789abcdef' },
        },
        groups: { operators: ['U0OP1'] },
        policy: mcpPolicy([{ name: 'auto', annotations, route: 'auto' }], { approvers: 'operators' }),
        authoring: { operators: [MCP_CALL_TOOL] },
      });
    expect(configWith({ readOnlyHint: true }).digest).not.toBe(configWith({ readOnlyHint: false }).digest);
  });
});
