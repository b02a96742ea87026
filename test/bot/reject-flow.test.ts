import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inputValues, stateValue } from '../../src/emulator/index.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import { submitFreight } from '../support/freight-edits.ts';
import { actionIds, blockIds, submissionAnswer, visibleText } from '../support/slack-blocks.ts';

let stack: BotStack;
beforeAll(async () => {
  stack = await botStack('reject-flow');
});
afterAll(() => stack.stop());

const REASON = 'Do not promise Friday: the depot is closed for Easter. Offer Tuesday instead.';

describe('rejecting a plan from its card', () => {
  it('opens the reject modal; the reason reaches the agent in a rejected decision; the card shows it', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);

    const modal = await stack.openModal('U0OP1', card, 'reject');
    expect(modal.callback_id).toBe('reject_plan');
    expect(blockIds(modal.blocks)).toContain('reason');

    const answer = await stack.submit('U0OP1', modal, inputValues({ reason: stateValue.plainText(REASON) }));
    expect(answer.status).toBe(200);
    expect(answer.body).toBeNull(); // the modal closes

    const decision = await stack.client.waitForDecision(runId, { timeoutMs: 10_000 });
    expect(decision).toMatchObject({ status: 'rejected', decidedBy: 'U0OP1', reason: REASON });

    const decided = await stack.until(() => {
      const message = stack.slack.state.message(card.channel, card.ts);
      return message !== undefined && actionIds(message.blocks).length === 0 ? message : undefined;
    });
    const text = visibleText(decided.blocks);
    expect(text).toMatch(/Rejected\* by Dana Ortiz/);
    expect(text).toContain('Do not promise Friday: the depot is closed for Easter.');
  });

  it('keeps the modal open with an error when the reason is empty, rejecting nothing', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    const modal = await stack.openModal('U0OP1', card, 'reject');

    const answer = await stack.submit('U0OP1', modal, inputValues({ reason: stateValue.plainText('  ') }));
    expect(submissionAnswer(answer.body)).toEqual({
      response_action: 'errors',
      errors: { reason: expect.stringMatching(/Say why/) },
    });
    expect((await stack.countersign.approvals.getRun(runId))?.status).toBe('pending');
  });

  it('refuses a reject by someone who may approve none of the steps at the click, privately, without a form', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    const before = stack.slack.state.ephemerals('C0OPS').length;
    expect((await stack.click('U0FIN1', card, 'reject')).status).toBe(200);

    const notice = await stack.until(() => stack.slack.state.ephemerals('C0OPS')[before]);
    expect(notice.user).toBe('U0FIN1');
    expect(notice.text).toMatch(/operators/);
    expect(stack.modal('U0FIN1')).toBeUndefined();
    expect((await stack.countersign.approvals.getRun(runId))?.status).toBe('pending');
  });

  it('still refuses, in the form, a reject by someone whose rights went away while it was open', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    const modal = await stack.openModal('U0OP1', card, 'reject');
    // The form was opened for an operator; what comes back is checked again (here: sent as finance).
    const answer = await stack.submit('U0FIN1', modal, inputValues({ reason: stateValue.plainText(REASON) }));

    const { response_action, view } = submissionAnswer(answer.body);
    expect(response_action).toBe('update');
    expect(visibleText(view?.blocks ?? [])).toMatch(/You can't do that: .*operators.*Nothing was changed/s);
    expect((await stack.countersign.approvals.getRun(runId))?.status).toBe('pending');
  });
});
