/**
 * Early releases on the card, through Bolt, Redis and the Slack stand-in: a `continue` note is released
 * at submission, the card says so and what the other steps wait for; once the agent reports it applied
 * the card shows that; a rejection afterwards lists what had been released and applied.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import type { PlanStepInput } from '../../src/client/index.ts';
import { inputValues, stateValue } from '../../src/emulator/index.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import { earlyNotesConfig } from '../support/early-notes-config.ts';
import { visibleText } from '../support/slack-blocks.ts';

let stack: BotStack;
beforeAll(async () => {
  // Notes are internal and may run before the plan is decided.
  stack = await botStack('release-card', { config: earlyNotesConfig() });
});
afterAll(() => stack.stop());

describe('a card whose plan runs a step early', () => {
  it('shows the released note, what the reply waits for, the applied report, and after a rejection what had run', async () => {
    const steps: PlanStepInput[] = freightSteps.map((step) => ({
      ...step,
      args: { ...step.args },
      ...(step.id === 's3' ? { dependsOn: ['s1', 's2'] } : {}),
    }));
    const { runId } = await stack.client.submit({
      summary: freightSummary,
      context: freightContext,
      steps,
      expiresIn: '2h',
    });
    const card = await stack.card(runId);
    const released = await stack.until(() => {
      const message = stack.slack.state.message(card.channel, card.ts);
      return message !== undefined && visibleText(message.blocks).includes('Released so far')
        ? message
        : undefined;
    });
    const text = visibleText(released.blocks);
    expect(text).toContain('🟢 *Released so far:* `s1` (not reported yet).');
    expect(text).toContain('🔗 `s3` ← `s1`, `s2`');
    expect(text).toMatch(
      /⏸️ \*Waits for\* its approvals · `s1`, `s2` to be applied · the whole plan to be approved/,
    );

    expect((await stack.client.reportOutcome(runId, 's1', { status: 'applied' })).ok).toBe(true);
    const applied = await stack.until(() => {
      const message = stack.slack.state.message(card.channel, card.ts);
      return message !== undefined && visibleText(message.blocks).includes('`s1` (✔️ applied)')
        ? message
        : undefined;
    });
    expect(visibleText(applied.blocks)).toMatch(/✔️ \*Applied\* at/);
    expect(visibleText(applied.blocks)).toMatch(/⏸️ \*Waits for\* its approvals · `s2` to be applied/);

    const modal = await stack.openModal('U0OP1', applied, 'reject');
    await stack.submit('U0OP1', modal, inputValues({ reason: stateValue.plainText('Not this week.') }));
    const rejected = await stack.until(() => {
      const message = stack.slack.state.message(card.channel, card.ts);
      return message !== undefined && visibleText(message.blocks).includes('Rejected') ? message : undefined;
    });
    const after = visibleText(rejected.blocks);
    expect(after).toContain('— no other step will be executed.');
    expect(after).toContain(
      '🟢 *Released before it was rejected:* `s1` (✔️ applied). Every other step was revoked and will not run.',
    );
    expect(after).not.toContain('Waits for');
  });
});
