/**
 * Races whose outcome approvals settles and Slack must show: two replicas recording the two approvals
 * of one step at once, and an edit saved at the moment its run expires. Whatever wins, the card ends
 * showing the run's committed state — never an older rendering over a newer one, never live buttons on
 * a decided run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import { stateValue } from '../../src/emulator/index.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import { submittedValues } from '../support/freight-edits.ts';
import { actionIds, visibleText } from '../support/slack-blocks.ts';

let stack: BotStack;
beforeAll(async () => {
  stack = await botStack('converge');
});
afterAll(() => stack.stop());

/** The card as Slack shows it now, once Slack shows the run's committed state. */
async function shownCard(runId: string) {
  await stack.rendered(runId);
  const card = await stack.card(runId);
  return stack.slack.state.message(card.channel, card.ts) ?? card;
}

describe('two replicas', () => {
  it('two approvals of a 2-of-2 refund at once on two replicas: every card ends approved, without buttons', async () => {
    const other = await stack.replica();
    const runIds = await Promise.all(
      Array.from({ length: 12 }, async (_, index) => {
        const { runId } = await stack.client.submit({
          summary: `Refund ${index}`,
          context: freightContext,
          steps: [{ tool: 'issue_refund', args: { invoice_id: 'in_74120', amount: 60_000 } }],
          expiresIn: '2h',
        });
        return runId;
      }),
    );
    await Promise.all(
      runIds.map(async (runId) => {
        const card = await stack.card(runId);
        await Promise.all([stack.click('U0FIN2', card, 'approve'), other.click('U0FIN3', card, 'approve')]);
      }),
    );
    for (const runId of runIds) {
      expect((await stack.countersign.approvals.getRun(runId))?.status).toBe('approved');
      const card = await shownCard(runId);
      expect(actionIds(card.blocks)).toEqual([]);
      expect(visibleText(card.blocks)).toContain('— approved');
    }
    await other.stop();
  }, 60_000);
});

describe('an edit saved as the run expires', () => {
  it('ends with the card showing what was committed, whichever came first', async () => {
    const outcomes = new Set<string>();
    for (const offsetMs of [-150, -50, 0, 50, 150]) {
      const { runId } = await stack.client.submit({
        summary: freightSummary,
        context: freightContext,
        steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
        expiresIn: '3s',
      });
      const run = await stack.countersign.approvals.getRun(runId);
      const expiresAt = Date.parse(run?.current.plan.expiresAt ?? '');
      const card = await stack.card(runId);
      const modal = await stack.openModal('U0OP1', card, 'edit');
      const values = submittedValues(modal, { 'arg:s2:window': stateValue.date('2026-04-07') });
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt + offsetMs - Date.now())));
      await stack.submit('U0OP1', modal, values);
      // Past the expiry, whatever happened: the run is expired (the edit may have made version 2 first).
      let status: string | undefined;
      for (let i = 0; i < 200 && status !== 'expired'; i++) {
        status = (await stack.countersign.approvals.getRun(runId))?.status;
        if (status !== 'expired') await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(status).toBe('expired');
      const shown = await shownCard(runId);
      const committed = await stack.countersign.approvals.getRun(runId);
      outcomes.add(`version ${committed?.version}`);
      expect(actionIds(shown.blocks)).toEqual([]);
      expect(visibleText(shown.blocks)).toContain(`version ${committed?.version}`);
      expect(visibleText(shown.blocks)).toMatch(/expired/i);
      for (const reply of stack.thread(shown)) expect(actionIds(reply.blocks)).toEqual([]);
    }
  }, 90_000);
});
