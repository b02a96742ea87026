/**
 * Slack faults, from the Slack stand-in's fault switch: what people see converges to what approvals
 * committed — a post answered 500 after it happened is not posted again, a post that timed out and
 * landed late is turned into a duplicate notice, a form Slack cannot open in time is answered at once,
 * and no form waits behind rate-limit back-off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freightContext, freightSummary } from '../../examples/freight/plans.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import { submitFreight } from '../support/freight-edits.ts';
import { actionIds, cardRunId, visibleText } from '../support/slack-blocks.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let stack: BotStack;
beforeAll(async () => {
  // Slack calls give up after 500 ms here (10 s by default), and overdue renderings are repaired every 300 ms.
  stack = await botStack('slack-faults', { slackTimeoutMs: 500, repairEveryMs: 300 });
});
afterAll(() => stack.stop());

/** Every top-level message carrying `runId`'s card metadata (the card, and any copy of it). */
const copiesOf = (runId: string) => stack.slack.state.messages('C0OPS').filter((m) => cardRunId(m) === runId);

describe('posting is never blindly retried', () => {
  it('posts each card once when Slack answers 500 after posting it, and each card is live', async () => {
    stack.slack.faults.inject({ method: 'chat.postMessage', kind: 'error-after', times: 8 });
    const runIds = await Promise.all(Array.from({ length: 8 }, () => submitFreight(stack)));
    for (const runId of runIds) await stack.rendered(runId);
    expect(stack.slack.faults.triggered.filter((fault) => fault.kind === 'error-after')).toHaveLength(8);
    for (const runId of runIds) {
      const copies = copiesOf(runId);
      expect(copies).toHaveLength(1);
      expect(actionIds(copies[0]?.blocks ?? [])).toEqual(['show_args', 'approve', 'reject', 'edit']);
      expect((await stack.countersign.messages.all(runId)).recorded.card?.ts).toBe(copies[0]?.ts);
    }
    stack.slack.faults.clear();
  });

  it('turns a post that timed out and landed later into a duplicate notice pointing to the card', async () => {
    // The first post is held 3 s: the bot gives up after 500 ms, finds nothing, posts again; then the
    // held one lands.
    stack.slack.faults.inject({ method: 'chat.postMessage', kind: 'hang', hangMs: 3_000 });
    const runId = await submitFreight(stack);
    const duplicate = await stack.until(
      () => copiesOf(runId).find((message) => visibleText(message.blocks).includes('Duplicate')),
      15_000,
    );
    const card = (await stack.countersign.messages.all(runId)).recorded.card;
    expect(copiesOf(runId)).toHaveLength(2);
    expect(duplicate.ts).not.toBe(card?.ts);
    expect(actionIds(duplicate.blocks)).toEqual([]);
    expect(visibleText(duplicate.blocks)).toContain(card?.ts);
    const live = copiesOf(runId).find((message) => message.ts === card?.ts);
    expect(actionIds(live?.blocks ?? [])).toEqual(['show_args', 'approve', 'reject', 'edit']);
    stack.slack.faults.clear();
  });
});

describe('forms open within Slack’s window or say so', () => {
  it('answers "Slack is busy" at once when views.open is rate limited, and opens no form', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    stack.slack.faults.inject({ method: 'views.open', kind: '429', retryAfterSeconds: 30 });
    const answer = await stack.click('U0OP1', card, 'reject');
    expect(answer.status).toBe(200);
    const notice = await stack.until(() =>
      stack.slack.state
        .ephemerals('C0OPS')
        .find((message) => message.user === 'U0OP1' && message.text.includes('Slack is busy')),
    );
    expect(notice.text).toContain('click Reject again');
    await sleep(500);
    expect(stack.modal('U0OP1')).toBeUndefined();
    expect((await stack.countersign.approvals.getRun(runId))?.status).toBe('pending');
    stack.slack.faults.clear();
  });

  it('does not open a form late when views.open hangs past the trigger’s 3 s', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    stack.slack.faults.inject({ method: 'views.open', kind: 'hang', hangMs: 3_500 });
    await stack.click('U0OP2', card, 'edit');
    await stack.until(() =>
      stack.slack.state
        .ephemerals('C0OPS')
        .find((message) => message.user === 'U0OP2' && message.text.includes('edit form')),
    );
    await sleep(4_000); // the held call lands now: Slack refuses its expired trigger id
    expect(stack.modal('U0OP2')).toBeUndefined();
    stack.slack.faults.clear();
  });

  it('opens the reject form at once while card updates wait out a 429', async () => {
    const first = await submitFreight(stack);
    const second = await submitFreight(stack);
    const firstCard = await stack.card(first);
    const secondCard = await stack.card(second);
    await stack.rendered(second);
    // Slack rate limits chat.update for 10 s: the approval's card update waits behind that back-off.
    stack.slack.faults.inject({ method: 'chat.update', kind: '429', retryAfterSeconds: 10 });
    await stack.click('U0OP1', firstCard, 'approve');
    await stack.until(() => stack.slack.faults.triggered.length > 0);
    const clicked = Date.now();
    const modal = await stack.openModal('U0OP2', secondCard, 'reject');
    expect(Date.now() - clicked).toBeLessThan(3_000);
    expect(modal.title?.text).toMatch(/Reject/);
    stack.slack.faults.clear();
    // …and the approved card gets there once the back-off is over.
    await stack.until(() => {
      const shown = stack.slack.state.message(firstCard.channel, firstCard.ts);
      return shown !== undefined && actionIds(shown.blocks).length === 0 ? shown : undefined;
    }, 20_000);
  });
});

describe('a click is answered after its commit', () => {
  it('has committed the approval by the time Slack gets the answer to the click', async () => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const { runId } = await stack.client.submit({
        summary: freightSummary,
        context: freightContext,
        steps: [{ tool: 'send_reply', args: { ticket_id: '74991', body: 'On its way.' } }],
        expiresIn: '2h',
      });
      const card = await stack.card(runId);
      const answer = await stack.click('U0OP1', card, 'approve');
      expect(answer.status).toBe(200);
      expect((await stack.countersign.approvals.getRun(runId))?.status).toBe('approved');
    }
  });
});
