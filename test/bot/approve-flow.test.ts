import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';

let stack: BotStack;
beforeAll(async () => {
  stack = await botStack('approve-flow');
});
afterAll(() => stack.stop());

const submitFreight = () =>
  stack.client.submit({
    summary: freightSummary,
    context: freightContext,
    steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
    expiresIn: '2h',
  });

function actionIds(blocks: readonly unknown[]): string[] {
  const ids: string[] = [];
  for (const block of blocks as {
    elements?: { action_id?: string }[];
    accessory?: { action_id?: string };
  }[]) {
    for (const element of [...(block.elements ?? []), block.accessory])
      if (element?.action_id) ids.push(element.action_id);
  }
  return ids;
}

describe('the freight plan over HTTP, with real signing, the emulator and real Redis', () => {
  it('posts a card with the public action ids; an operator approves; the agent receives approved and verifies each step', async () => {
    const { runId } = await submitFreight();
    const card = await stack.until(() =>
      stack
        .cards()
        .find((message) => message.text.length > 0 && JSON.stringify(message.metadata ?? {}).includes(runId)),
    );
    // `show_args` on s2: its preview gives it a change set, and its arguments are a click away.
    expect(actionIds(card.blocks)).toEqual(['show_args', 'approve', 'reject', 'edit']);
    expect(card.metadata).toMatchObject({
      event_type: 'countersign_card',
      event_payload: { run_id: runId },
    });

    const answer = await stack.click('U0OP1', card, 'approve');
    expect(answer.status).toBe(200);
    const decision = await stack.client.waitForDecision(runId, { timeoutMs: 10_000 });
    expect(decision.status).toBe('approved');
    expect(decision.decidedBy).toBe('U0OP1');
    for (const step of decision.plan!.steps)
      expect(await stack.client.verifyStep(decision, step)).toMatchObject({ ok: true });

    const updated = await stack.until(() => {
      const message = stack.slack.state.message(card.channel, card.ts);
      return message !== undefined && actionIds(message.blocks).length === 0 ? message : undefined;
    });
    expect(JSON.stringify(updated.blocks)).toMatch(/[Aa]pproved/);
  });

  it('an unauthorized approver gets a private explanation and nothing changes', async () => {
    const { runId } = await submitFreight();
    const card = await stack.until(() =>
      stack.cards().find((message) => JSON.stringify(message.metadata ?? {}).includes(runId)),
    );
    const before = stack.slack.state.ephemerals('C0OPS').length;
    expect((await stack.click('U0FIN1', card, 'approve')).status).toBe(200);
    const notice = await stack.until(() => stack.slack.state.ephemerals('C0OPS')[before]);
    expect(notice.user).toBe('U0FIN1');
    expect(notice.text).toMatch(/operators/);
    expect((await stack.countersign.approvals.getRun(runId))?.approvals).toEqual([]);
  });

  it('refuses a forged signature with 401 and a request older than 5 minutes', async () => {
    const { runId } = await submitFreight();
    const card = await stack.until(() =>
      stack.cards().find((message) => JSON.stringify(message.metadata ?? {}).includes(runId)),
    );
    const { buildBlockActionsPayload, buttonAction, postInteraction } = await import(
      '../../src/emulator/index.ts'
    );
    const payload = buildBlockActionsPayload({
      user: { id: 'U0OP1' },
      container: { type: 'message', channel: { id: card.channel }, message: card },
      action: buttonAction(card.blocks, 'approve'),
    });
    expect((await postInteraction(stack.eventsUrl, 'not-the-secret', payload)).status).toBe(401);
    const old = Math.floor(Date.now() / 1000) - 6 * 60;
    expect(
      (
        await postInteraction(stack.eventsUrl, 'test-signing-secret-0123456789abcdef', payload, {
          timestamp: old,
        })
      ).status,
    ).toBe(401);
    expect((await stack.countersign.approvals.getRun(runId))?.status).toBe('pending');
  });

  it('refuses an invalid plan at submission, keeps its decision, and counts it in the metrics by phase', async () => {
    const refused = await stack.client
      .submit({ steps: [{ tool: 'issue_refund', args: { invoice_id: 'in_74119', amount: 'twenty' } }] })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toMatchObject({ code: 'invalid_submission', checkedBy: 'server', phase: 'type' });
    const { runId } = refused as { runId: string };
    const decision = await stack.client.waitForDecision(runId, { timeoutMs: 10_000 });
    expect(decision).toMatchObject({ status: 'invalid', phase: 'type' });
    let metrics = '';
    for (let attempt = 0; attempt < 100 && !/rejections_total\{phase="type"\}/.test(metrics); attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      metrics = await (await fetch(`${stack.baseUrl}/metrics`)).text();
    }
    expect(metrics).toMatch(/countersign_validation_rejections_total\{phase="type"\} 1/);
    expect(metrics).toMatch(/countersign_decisions_total\{status="invalid"\} 1/);
  });

  it('serves /healthz and /metrics', async () => {
    const health = await fetch(`${stack.baseUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true, redis: 'ok', slack: 'ok' });
    const metrics = await (await fetch(`${stack.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/countersign_decisions_total\{status="approved"\} [1-9]/);
  });
});
