/**
 * `npm run mcp -- --gateway <records server>` driven by the MCP SDK's client over stdio, in front of
 * a small MCP server (examples/mcp/records-server.ts), against a real Countersign and Slack stand-in.
 */
import { spawn } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import gatewayConfig from '../../examples/mcp/countersign.config.ts';
import { inputValues, stateValue } from '../../src/emulator/index.ts';
import type { EmulatedMessage } from '../../src/emulator/slack-objects.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import { cardAtVersion, submittedValues } from '../support/freight-edits.ts';
import { connectMcp, freightMcpEnv, MCP_SCRIPT, ROOT } from '../support/mcp-client.ts';
import { cardRunId, visibleText } from '../support/slack-blocks.ts';

const GATEWAY_AGENT = 'mcp-gateway';
const GATEWAY_SECRET = 'mcp-gateway-test-secret-0123456789';

let stack: BotStack;
let mcp: Client;
/** The gateway's environment against this stack, waiting `wait` for people. */
function gatewayEnv(wait: string): Record<string, string> {
  const { COUNTERSIGN_CONFIG: _config, ...env } = freightMcpEnv(stack.baseUrl);
  return {
    ...env,
    COUNTERSIGN_AGENT: GATEWAY_AGENT,
    COUNTERSIGN_AGENT_SECRET: GATEWAY_SECRET,
    COUNTERSIGN_GATEWAY_WAIT: wait,
  };
}
const GATEWAY_ARGS = ['--gateway', process.execPath, '--import', 'tsx', 'examples/mcp/records-server.ts'];

beforeAll(async () => {
  stack = await botStack('mcp-gateway', {
    config: gatewayConfig,
    secrets: { [GATEWAY_AGENT]: GATEWAY_SECRET },
  });
  mcp = await connectMcp(gatewayEnv('30s'), GATEWAY_ARGS);
}, 60_000);
afterAll(async () => {
  await mcp?.close();
  await stack?.stop();
});

const text = (result: unknown) =>
  (result as CallToolResult).content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');

/** Calls `name` through the gateway and resolves with the card it posted once the card is up. */
async function callWithCard(
  name: string,
  args: Record<string, unknown>,
): Promise<{ result: Promise<unknown>; card: EmulatedMessage; runId: string }> {
  const before = stack.cards().length;
  const result = mcp.callTool({ name, arguments: args });
  const posted = await stack.until(() => stack.cards()[before]);
  const runId = cardRunId(posted);
  if (runId === undefined) throw new Error('the card names no run');
  return { result, card: await stack.card(runId), runId };
}

describe('the MCP gateway (npm run mcp -- --gateway …)', () => {
  it("lists the downstream server's tools with their annotations", async () => {
    const { tools } = await mcp.listTools();
    expect(tools.map((tool) => [tool.name, tool.annotations ?? null])).toEqual([
      ['read_status', { readOnlyHint: true }],
      ['delete_record', { readOnlyHint: false, destructiveHint: true }],
      ['unknown_tool', null],
      ['drop_all', { destructiveHint: true }],
    ]);
  });

  it('passes a read-only call straight through (auto-approved by the rule on readOnlyHint)', async () => {
    const result = await mcp.callTool({ name: 'read_status', arguments: { id: 'r1' } });
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe('read_status ran with {"id":"r1"}');
  });

  it('holds a destructive call until an operator approves it in Slack, then forwards the arguments as edited there', async () => {
    const { result, card, runId } = await callWithCard('delete_record', { id: 'r1' });
    expect(visibleText(card.blocks)).toContain('delete_record');

    const view = await stack.openModal('U0OP1', card, 'edit');
    const edited = await stack.submit(
      'U0OP1',
      view,
      submittedValues(view, { 'arg:s1:arguments': stateValue.plainText('{"id":"r2"}') }),
    );
    expect(edited.status).toBe(200);
    const v2 = await cardAtVersion(stack, card, 2);
    expect((await stack.countersign.approvals.getRun(runId))?.status).toBe('pending');
    expect((await stack.click('U0OP1', v2, 'approve')).status).toBe(200);

    const answer = await result;
    expect((answer as CallToolResult).isError).toBeFalsy();
    expect(text(answer)).toContain('delete_record ran with {"id":"r2"}');
    expect(text(answer)).toContain('approved this call with edited arguments');
    const run = await stack.countersign.approvals.getRun(runId);
    expect(run?.status).toBe('approved');
  });

  it('answers a destructive call rejected in Slack with an error, and never forwards it', async () => {
    const { result, card } = await callWithCard('delete_record', { id: 'r3' });
    const modal = await stack.openModal('U0OP1', card, 'reject');
    await stack.submit('U0OP1', modal, inputValues({ reason: stateValue.plainText('Keep r3.') }));

    const answer = (await result) as CallToolResult;
    expect(answer.isError).toBe(true);
    expect(JSON.parse(text(answer))).toMatchObject({
      error: 'not_approved',
      status: 'rejected',
      reason: 'Keep r3.',
      forwarded: false,
    });
    expect(text(answer)).not.toContain('ran with');
  });

  it('reviews a tool no rule covers (fail closed): forwarded only once an operator approves', async () => {
    const { result, card } = await callWithCard('unknown_tool', { anything: 1 });
    expect(visibleText(card.blocks)).toContain('unknown_tool');
    expect((await stack.click('U0OP1', card, 'approve')).status).toBe(200);
    const answer = (await result) as CallToolResult;
    expect(answer.isError).toBeFalsy();
    expect(text(answer)).toBe('unknown_tool ran with {"anything":1}');
  });

  it('refuses a call the policy blocks with the reason, posting no card and never forwarding it', async () => {
    const before = stack.cards().length;
    const answer = (await mcp.callTool({ name: 'drop_all', arguments: {} })) as CallToolResult;
    expect(answer.isError).toBe(true);
    const body = JSON.parse(text(answer)) as { run_id: string };
    expect(body).toMatchObject({
      error: 'blocked',
      reason: 'step s1: never through an agent',
      forwarded: false,
    });
    expect(text(answer)).not.toContain('ran with');
    // Refused at submission: the run is invalid, and the Slack stand-in got nothing.
    expect((await stack.countersign.approvals.getDecision(body.run_id))?.status).toBe('invalid');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(stack.cards()).toHaveLength(before);
  });

  it('stops waiting when the client cancels the call, and never forwards it even when approved later', async () => {
    const controller = new AbortController();
    const before = stack.cards().length;
    const result = mcp
      .callTool({ name: 'delete_record', arguments: { id: 'r7' } }, undefined, { signal: controller.signal })
      .catch((error: unknown) => error);
    const posted = await stack.until(() => stack.cards()[before]);
    const runId = cardRunId(posted);
    if (runId === undefined) throw new Error('the card names no run');
    const card = await stack.card(runId);
    controller.abort('the user pressed stop');
    expect(await result).toBeInstanceOf(Error);
    // Give the gateway the cancellation, then approve: nothing may run.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await stack.click('U0OP1', card, 'approve')).status).toBe(200);
    await stack.rendered(runId);
    expect((await stack.countersign.approvals.getRun(runId))?.status).toBe('approved');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await stack.countersign.approvals.getOutcomes(runId)).toEqual([]);
    // The gateway still serves calls after a cancelled one.
    const read = await mcp.callTool({ name: 'read_status', arguments: { id: 'r7' } });
    expect(text(read)).toBe('read_status ran with {"id":"r7"}');
  });

  it('answers a call nobody decides within COUNTERSIGN_GATEWAY_WAIT with an error, never forwarding it', async () => {
    const impatient = await connectMcp(gatewayEnv('2s'), GATEWAY_ARGS);
    try {
      const answer = (await impatient.callTool({
        name: 'delete_record',
        arguments: { id: 'r9' },
      })) as CallToolResult;
      expect(answer.isError).toBe(true);
      expect(JSON.parse(text(answer))).toMatchObject({ error: 'not_approved', forwarded: false });
      expect(text(answer)).not.toContain('ran with');
    } finally {
      await impatient.close();
    }
  }, 30_000);

  it('exits, with its downstream server, when its client closes stdin', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', MCP_SCRIPT, ...GATEWAY_ARGS], {
      env: gatewayEnv('30s'),
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    // Started once it answers initialize; then the client goes away.
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } })}\n`,
    );
    await new Promise((resolve) => child.stdout.once('data', resolve));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.stdin.end();
    expect(await exited).toBe(0);
  }, 30_000);
});
