import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import { editFreight, submitFreight } from '../support/freight-edits.ts';
import { visibleText } from '../support/slack-blocks.ts';

let stack: BotStack;
beforeAll(async () => {
  stack = await botStack('shutdown');
});
afterAll(() => stack.stop());

describe('stopping the bot', () => {
  it('finishes the work of an interaction it already answered: what it committed is shown, after a restart at the latest', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    const { answer } = await editFreight(stack, 'U0FIN1', card, { window: '2026-04-06', addRefund: true });
    expect(answer.status).toBe(200);

    // The modal closed with the answer; the card update and the diff message come after it — from
    // this process's render queue if it gets there before it stops, else from the next one's.
    await stack.countersign.stop();
    const next = await stack.restart();
    expect((await next.approvals.getRun(runId))?.version).toBe(2);
    await stack.rendered(runId);
    const shown = stack.slack.state.message(card.channel, card.ts);
    expect(visibleText(shown?.blocks ?? [])).toContain(' · version 2 · ');
    expect(stack.thread(card)).toHaveLength(1);
  });
});
