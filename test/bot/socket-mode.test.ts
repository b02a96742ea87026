/**
 * Countersign in Socket Mode end to end: `startCountersign` with an app-level token and no signing
 * secret, pointed at the emulator (SLACK_API_URL), which it must reach for apps.connections.open; every
 * click and submission goes over the bot's WebSocket and is answered in its acknowledgement.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buttonAction, inputValues, stateValue } from '../../src/emulator/index.ts';
import { redisUrl } from '../helpers/redis.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import { submitFreight } from '../support/freight-edits.ts';
import { actionIds, blockIds, submissionAnswer, visibleText } from '../support/slack-blocks.ts';

let stack: BotStack;
beforeAll(async () => {
  stack = await botStack('socket-mode', { socketMode: true });
});
afterAll(() => stack.stop());

describe('Countersign in Socket Mode, on the emulator', () => {
  it('opens its connection at the emulator with the app-level token and is greeted before start resolves', () => {
    expect(stack.slack.socketMode.connections).toBe(1);
    const opened = stack.slack.calls.filter((call) => call.method === 'apps.connections.open');
    expect(opened).toEqual([
      expect.objectContaining({
        status: 200,
        response: { ok: true, url: expect.stringMatching(/^ws:\/\/127\.0\.0\.1:\d+\/socket-mode\?ticket=/) },
      }),
    ]);
  });

  it("posts the card; an operator's approve over the socket updates it and the agent receives approved", async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    // `show_args` on s2 (its change set stands in for its arguments), then the card's own buttons.
    expect(actionIds(card.blocks)).toEqual(['show_args', 'approve', 'reject', 'edit']);

    const answer = await stack.click('U0OP1', card, 'approve');
    expect(answer).toEqual({ status: 200, body: null });

    const decision = await stack.client.waitForDecision(runId, { timeoutMs: 10_000 });
    expect(decision).toMatchObject({ status: 'approved', decidedBy: 'U0OP1' });
    for (const step of decision.plan!.steps)
      expect(await stack.client.verifyStep(decision, step)).toMatchObject({ ok: true });
    const decided = await stack.until(() => {
      const message = stack.slack.state.message(card.channel, card.ts);
      return message !== undefined && actionIds(message.blocks).length === 0 ? message : undefined;
    });
    expect(visibleText(decided.blocks)).toMatch(/Approved\* by Dana Ortiz/);
  });

  it('opens the reject modal from the card; an empty reason comes back in the ack as field errors', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    const modal = await stack.openModal('U0OP1', card, 'reject');
    expect(modal.callback_id).toBe('reject_plan');
    expect(blockIds(modal.blocks)).toContain('reason');

    const answer = await stack.submit('U0OP1', modal, inputValues({ reason: stateValue.plainText('') }));

    expect(answer.status).toBe(200);
    expect(submissionAnswer(answer.body)).toEqual({
      response_action: 'errors',
      errors: { reason: expect.stringMatching(/Say why/) },
    });
    expect((await stack.countersign.approvals.getRun(runId))?.status).toBe('pending');
  });

  it("takes a click from the emulator's page over the socket, as a person using the page makes it", async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    const answer = await fetch(new URL('/page/api/action', stack.slack.pageUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        user: 'U0OP2',
        container: { type: 'message', channel: card.channel, ts: card.ts },
        action: buttonAction(card.blocks, 'approve'),
      }),
    });
    expect(await answer.json()).toEqual({ ok: true, status: 200 });
    const decision = await stack.client.waitForDecision(runId, { timeoutMs: 10_000 });
    expect(decision).toMatchObject({ status: 'approved', decidedBy: 'U0OP2' });
  });

  it('serves /healthz and /metrics on its port beside the socket', async () => {
    const health = await fetch(`${stack.baseUrl}/healthz`);
    expect(await health.json()).toEqual({ ok: true, redis: 'ok', slack: 'ok' });
    const metrics = await (await fetch(`${stack.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/countersign_decisions_total\{status="approved"\} 2/);
  });

  it('closes its WebSocket when stopped', async () => {
    await stack.countersign.stop();
    await expect.poll(() => stack.slack.socketMode.connections).toBe(0);
  });
});

describe('stopping Countersign in Socket Mode', () => {
  const CHILD = fileURLToPath(new URL('../support/socket-mode-child.ts', import.meta.url));

  it('leaves nothing that keeps the process alive: it exits by itself after stop()', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
      env: { ...process.env, REDIS_URL: redisUrl() },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    const exited = once(child, 'exit');
    const deadline = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const [code, signal] = await exited;
    clearTimeout(deadline);
    expect(output).toBe('approved\nstopped\n');
    expect({ code, signal }).toEqual({ code: 0, signal: null });
  }, 30_000);
});
