/**
 * The card tells the whole story (issue 17), through the real Bolt app, Redis, the render queue and
 * the Slack stand-in: who may act, by name; a confirm dialog on an Approve that covers an irreversible
 * step; everyone whose approval counted; and each step's outcome as the agent reports it over HTTP,
 * drawn in place — including a claim never finished, which turns `uncertain` with no report at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freightConfigInput } from '../../examples/freight/countersign.config.ts';
import { freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import { defineConfig } from '../../src/config/index.ts';
import type { EmulatedMessage } from '../../src/emulator/slack-objects.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';

/** A claim left `applying` reads as uncertain after this long. */
const UNCERTAIN_AFTER_MS = 2_000;

let stack: BotStack;
beforeAll(async () => {
  stack = await botStack('card-story', {
    config: defineConfig({
      ...freightConfigInput,
      defaults: { ...freightConfigInput.defaults, uncertainAfter: `${UNCERTAIN_AFTER_MS}ms` },
    }),
  });
});
afterAll(() => stack.stop());

const submitFreight = () =>
  stack.client.submit({
    summary: freightSummary,
    context: freightContext,
    steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
    expiresIn: '2h',
  });

/** Every text the message shows, zero-width spaces removed (views/ put them beside formatting marks). */
function shownText(message: EmulatedMessage | undefined): string {
  return JSON.stringify(message?.blocks ?? []).replaceAll('\u200B', '');
}

function approveButton(message: EmulatedMessage) {
  for (const block of message.blocks as { type: string; elements?: { action_id?: string }[] }[]) {
    const found = block.elements?.find((element) => element.action_id === 'approve');
    if (found !== undefined)
      return found as { confirm?: { title: { text: string }; text: { text: string } } };
  }
  return undefined;
}

const cardNow = (card: EmulatedMessage) => stack.slack.state.message(card.channel, card.ts);

describe('the card tells the whole story', () => {
  it('names who may act, confirms an irreversible approval, names who approved, and shows every outcome and the tally in place', async () => {
    const { runId } = await submitFreight();
    const card = await stack.card(runId);
    // Display names from users.info, not the config group's name.
    expect(shownText(card)).toContain('Waiting for* Dana Ortiz or U0OP2 to approve `s2`, `s3`');
    // s3 replies to the customer: irreversible, marked, and its approval asks first.
    expect(shownText(card)).toContain('*3. Reply to customer* · `s3` · ⚠️ *Irreversible*');
    expect(approveButton(card)?.confirm?.title.text).toBe('Approve an irreversible step?');
    expect(approveButton(card)?.confirm?.text.text).toBe('Reply on ticket #74991 — cannot be undone');

    expect((await stack.click('U0OP1', card, 'approve')).status).toBe(200);
    const decision = await stack.client.waitForDecision(runId, { timeoutMs: 10_000 });
    expect(decision.status).toBe('approved');
    const approved = await stack.until(() => {
      const message = cardNow(card);
      return shownText(message).includes('Approved* by Dana Ortiz') ? message : undefined;
    });
    expect(shownText(approved)).not.toMatch(/expires|\(in \d/);
    expect(shownText(approved)).toContain('◻️ Not reported yet');

    await stack.client.reportOutcome(runId, 's1', { status: 'applying' });
    await stack.until(() => shownText(cardNow(card)).includes('⏳ *Applying* since'));
    await stack.client.reportOutcome(runId, 's1', { status: 'applied', detail: 'note *8812* added' });
    for (const stepId of ['s2', 's3']) {
      await stack.client.reportOutcome(runId, stepId, { status: 'applying' });
      await stack.client.reportOutcome(runId, stepId, { status: 'applied' });
    }
    const done = await stack.until(() => {
      const message = cardNow(card);
      return shownText(message).includes('3 of 3 applied') ? message : undefined;
    });
    const text = shownText(done);
    expect(text).toContain('✔️ *Applied* at');
    // The agent's detail, verbatim: its asterisks shown, not bold.
    expect(text).toContain('note *8812* added');
    expect(text).not.toContain('Applying');
    expect(text).not.toContain('Not reported yet');
  });

  it('draws a step claimed and never finished as uncertain once uncertainAfter passes, with no report', async () => {
    const { runId } = await submitFreight();
    const card = await stack.card(runId);
    expect((await stack.click('U0OP1', card, 'approve')).status).toBe(200);
    await stack.client.waitForDecision(runId, { timeoutMs: 10_000 });
    await stack.client.reportOutcome(runId, 's1', { status: 'applying' });
    await stack.until(() => shownText(cardNow(card)).includes('⏳ *Applying* since'));
    const uncertain = await stack.until(() => {
      const message = cardNow(card);
      return shownText(message).includes('Uncertain — needs reconciliation, will not be re-run')
        ? message
        : undefined;
    }, UNCERTAIN_AFTER_MS + 8_000);
    expect(shownText(uncertain)).toContain('0 of 3 applied · 1 uncertain · 2 not reported');
  });
});
