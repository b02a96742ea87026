import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freightSteps } from '../../examples/freight/plans.ts';
import type { EmulatedMessage } from '../../src/emulator/index.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import { cardAtVersion, editFreight, submitFreight } from '../support/freight-edits.ts';
import { actionIds, sectionMatching, stepButton, visibleText } from '../support/slack-blocks.ts';

let stack: BotStack;
beforeAll(async () => {
  stack = await botStack('diff-actions');
});
afterAll(() => stack.stop());

/** A run at version 2 (finance moved the window and added the refund), with its card and diff message. */
async function editedRun(): Promise<{ runId: string; card: EmulatedMessage; diff: EmulatedMessage }> {
  const runId = await submitFreight(stack);
  const card = await stack.card(runId);
  await editFreight(stack, 'U0FIN1', card, { window: '2026-04-06', addRefund: true });
  await cardAtVersion(stack, card, 2);
  const diff = await stack.until(() => stack.thread(card)[0]);
  return { runId, card, diff };
}

const plainSteps = (steps: readonly { id: string; tool: string; args: unknown }[]) =>
  steps.map(({ id, tool, args }) => ({ id, tool, args }));

describe('the diff message buttons, each producing a new version', () => {
  it('offers remove_step on the added step, revert_step on the changed one, approve and discard_edit', async () => {
    const { diff } = await editedRun();
    // `edit` is the consistency warning's "Edit s3": the reply still says Friday 3 April.
    expect(actionIds(diff.blocks).sort()).toEqual([
      'approve',
      'discard_edit',
      'edit',
      'remove_step',
      'revert_step',
    ]);
  });

  it('remove_step takes the added refund out again: version 3 keeps the new window (a double click makes one)', async () => {
    const { runId, card, diff } = await editedRun();
    const before = stack.slack.state.ephemerals('C0OPS').length;
    const removeRefund = () =>
      stack.click('U0FIN1', diff, 'remove_step', (blocks) => stepButton(blocks, 'remove_step', 's4'));
    const answers = await Promise.all([removeRefund(), removeRefund()]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    // The second click aimed at version 2, which the first replaced.
    const notice = await stack.until(() => stack.slack.state.ephemerals('C0OPS')[before]);
    expect(notice.text).toMatch(/version 3 is current/);
    const v3Card = await cardAtVersion(stack, card, 3);

    const run = await stack.countersign.approvals.getRun(runId);
    expect(run?.version).toBe(3);
    expect(run?.current.plan.steps.map((step) => step.id)).toEqual(['s1', 's2', 's3']);
    expect(run?.current.plan.steps[1]?.args.window).toBe('2026-04-06');
    expect(visibleText(v3Card.blocks)).toMatch(/freight-ops plan, 3 steps/);
    expect(visibleText(v3Card.blocks)).not.toMatch(/Issue refund/);
    const diffV3 = await stack.until(() => stack.thread(card)[1]);
    expect(sectionMatching(diffV3.blocks, /Removed step `s4`/)).toBeDefined();
    expect(await stack.countersign.approvals.getVersion(runId, 4)).toBeUndefined();
    expect(stack.thread(card)).toHaveLength(2);
  });

  it('revert_step puts the changed step back as it was: version 3 keeps the refund', async () => {
    const { runId, card, diff } = await editedRun();
    expect(
      (await stack.click('U0OP1', diff, 'revert_step', (blocks) => stepButton(blocks, 'revert_step', 's2')))
        .status,
    ).toBe(200);
    const v3Card = await cardAtVersion(stack, card, 3);

    const run = await stack.countersign.approvals.getRun(runId);
    const v1 = await stack.countersign.approvals.getVersion(runId, 1);
    expect(run?.current.plan.steps.map((step) => step.id)).toEqual(['s1', 's2', 's3', 's4']);
    expect(run?.current.plan.steps[1]?.digest).toBe(v1?.plan.steps[1]?.digest);
    expect(run?.current.plan.steps[1]?.args.window).toBe('2026-04-03');
    // s2's change set moves the delivery to Friday again, not to Monday 6 April.
    expect(visibleText(v3Card.blocks)).toMatch(/\(`delivery\.date`\): Thu 2 Apr → Fri 3 Apr$/m);
    expect(visibleText(v3Card.blocks)).not.toMatch(/Mon 6 Apr/);
    expect(visibleText(v3Card.blocks)).toMatch(/Issue refund/);
  });

  it('discard_edit goes back to the plan before the edit, as version 3', async () => {
    const { runId, card, diff } = await editedRun();
    expect((await stack.click('U0OP1', diff, 'discard_edit')).status).toBe(200);
    const v3Card = await cardAtVersion(stack, card, 3);

    const run = await stack.countersign.approvals.getRun(runId);
    expect(run?.version).toBe(3);
    expect(plainSteps(run?.current.plan.steps ?? [])).toEqual(plainSteps(freightSteps));
    expect(visibleText(v3Card.blocks)).toMatch(/freight-ops plan, 3 steps/);
    // The v2 diff message no longer offers its buttons; it points to the newer version.
    const oldDiff = await stack.until(() => {
      const message = stack.slack.state.message(diff.channel, diff.ts);
      return message !== undefined && actionIds(message.blocks).length === 0 ? message : undefined;
    });
    expect(visibleText(oldDiff.blocks)).toMatch(/Superseded by version 3/);
  });
});
