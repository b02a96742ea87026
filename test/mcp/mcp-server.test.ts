/** `npm run mcp` (scripts/mcp.ts) driven by the MCP SDK's client over stdio, against a real Countersign. */
import { spawn } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import { inputValues, stateValue } from '../../src/emulator/index.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import { connectMcp, freightMcpEnv, MCP_SCRIPT, ROOT, toolBody } from '../support/mcp-client.ts';

let stack: BotStack;
let mcp: Client;
beforeAll(async () => {
  stack = await botStack('mcp-server');
  mcp = await connectMcp(freightMcpEnv(stack.baseUrl));
}, 60_000);
afterAll(async () => {
  await mcp?.close();
  await stack?.stop();
});

const freightPlan = (): { summary: string; context: object; steps: Record<string, unknown>[] } => ({
  summary: freightSummary,
  context: freightContext,
  steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
});

async function submit(plan: Record<string, unknown>): Promise<string> {
  const { isError, body } = toolBody(await mcp.callTool({ name: 'submit_plan', arguments: plan }));
  expect({ isError, body }).toMatchObject({ isError: false, body: { status: 'pending' } });
  return body.run_id as string;
}

describe('the MCP server (npm run mcp)', () => {
  it('lists submit_plan with a step per freight tool and its real argument types, get_decision and report_outcome', async () => {
    const { tools } = await mcp.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['submit_plan', 'get_decision', 'report_outcome']);
    const submitPlan = tools[0]!;
    const steps = (submitPlan.inputSchema.properties as Record<string, { items: { oneOf: unknown[] } }>)
      .steps!;
    const branches = steps.items.oneOf as {
      properties: { tool: { const: string }; args: { properties: Record<string, Record<string, unknown>> } };
    }[];
    expect(branches.map((branch) => branch.properties.tool.const).sort()).toEqual([
      'add_note',
      'issue_refund',
      'reschedule_delivery',
      'send_reply',
    ]);
    const args = (tool: string) => branches.find((b) => b.properties.tool.const === tool)!.properties.args;
    expect(args('issue_refund').properties.amount).toMatchObject({ type: 'integer', minimum: 1 });
    expect(args('reschedule_delivery').properties.window).toMatchObject({ type: 'string', format: 'date' });
    expect(args('add_note')).toMatchObject({ required: ['ticket_id', 'note'], additionalProperties: false });
  });

  it('submits the freight plan; once an operator approves it in Slack, get_decision answers approved with the verified steps', async () => {
    const runId = await submit(freightPlan());
    const card = await stack.card(runId);
    expect((await stack.click('U0OP1', card, 'approve')).status).toBe(200);

    const { isError, body } = toolBody(
      await mcp.callTool({ name: 'get_decision', arguments: { run_id: runId, wait_seconds: 10 } }),
    );
    expect(isError).toBe(false);
    expect(body).toMatchObject({ approved: true, run_id: runId, decided_by: 'U0OP1' });
    expect((body.steps as { id: string }[]).map((step) => step.id)).toEqual(['s1', 's2', 's3']);

    const claim = toolBody(
      await mcp.callTool({
        name: 'report_outcome',
        arguments: { run_id: runId, step_id: 's1', status: 'applying' },
      }),
    );
    expect(claim).toMatchObject({ isError: false, body: { ok: true } });
    const again = toolBody(
      await mcp.callTool({
        name: 'report_outcome',
        arguments: { run_id: runId, step_id: 's1', status: 'applying' },
      }),
    );
    expect(again).toMatchObject({ isError: true, body: { ok: false, reason: 'already_claimed' } });
  });

  it('answers an invalid plan with the phase and a message per step, as a tool error', async () => {
    const plan = freightPlan();
    plan.steps[1] = {
      id: 's2',
      tool: 'reschedule_delivery',
      args: { delivery_id: 'dl_55120', window: 20260403 },
    };
    const { isError, body } = toolBody(await mcp.callTool({ name: 'submit_plan', arguments: plan }));
    expect(isError).toBe(true);
    expect(body).toMatchObject({
      error: 'plan_refused',
      phase: 'type',
      diagnostics: [expect.objectContaining({ step_id: 's2', message: expect.any(String) })],
    });
  });

  it('refuses input outside its schema (a misspelt key) before anything is submitted', async () => {
    const { isError, body } = toolBody(
      await mcp.callTool({ name: 'submit_plan', arguments: { ...freightPlan(), expiresIn: '2h' } }),
    );
    expect({ isError, body }).toMatchObject({
      isError: true,
      body: { error: 'invalid_input', message: expect.stringContaining('expiresIn') },
    });
  });

  it('says not approved for a pending run with wait_seconds 0', async () => {
    const runId = await submit(freightPlan());
    const { isError, body } = toolBody(
      await mcp.callTool({ name: 'get_decision', arguments: { run_id: runId, wait_seconds: 0 } }),
    );
    expect({ isError, body }).toEqual({
      isError: true,
      body: { approved: false, run_id: runId, status: 'pending', reason: 'nobody has decided yet' },
    });
  });

  it('says not approved, with the reason, for a run rejected in Slack', async () => {
    const runId = await submit(freightPlan());
    const card = await stack.card(runId);
    const modal = await stack.openModal('U0OP1', card, 'reject');
    await stack.submit('U0OP1', modal, inputValues({ reason: stateValue.plainText('Wrong customer.') }));

    const { isError, body } = toolBody(
      await mcp.callTool({ name: 'get_decision', arguments: { run_id: runId, wait_seconds: 10 } }),
    );
    expect({ isError, body }).toMatchObject({
      isError: true,
      body: { approved: false, status: 'rejected', reason: 'Wrong customer.' },
    });
  });

  it('exits 2 naming every missing setting', async () => {
    const {
      COUNTERSIGN_URL: _url,
      COUNTERSIGN_AGENT: _agent,
      COUNTERSIGN_AGENT_SECRET: _secret,
      COUNTERSIGN_CONFIG: _config,
      ...env
    } = process.env;
    const child = spawn(process.execPath, ['--import', 'tsx', MCP_SCRIPT], {
      env: { ...env, COUNTERSIGN_URL: stack.baseUrl },
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('COUNTERSIGN_AGENT is not set');
    expect(stderr).toContain('COUNTERSIGN_AGENT_SECRET is not set');
    expect(stderr).toContain('COUNTERSIGN_CONFIG is not set');
    expect(stderr).not.toContain('COUNTERSIGN_URL is not set');
  }, 30_000);
});
