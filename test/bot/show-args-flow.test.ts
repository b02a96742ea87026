import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Block,
  type BlockActionInput,
  buttonAction,
  type EmulatedMessage,
} from '../../src/emulator/index.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import { cardAtVersion, editFreight, submitFreight } from '../support/freight-edits.ts';
import { visibleText } from '../support/slack-blocks.ts';

let stack: BotStack;
beforeAll(async () => {
  stack = await botStack('show-args-flow', {
    users: [{ id: 'U0GUEST', name: 'gus', real_name: 'Gus Guest' }],
  });
});
afterAll(() => stack.stop());

/** The `show_args` button of a posted card: s2's, which its tool's preview gives a change set. */
function showArgsButton(card: EmulatedMessage): BlockActionInput {
  return buttonAction(card.blocks as unknown as Block[], 'show_args');
}

/** The modal open for `userId` once it is another than `before`. */
function newModal(userId: string, before: string | undefined) {
  return stack.until(() => {
    const open = stack.modal(userId);
    return open !== undefined && open.id !== before ? open : undefined;
  });
}

describe('the arguments on demand (show_args)', () => {
  it('opens the step’s full arguments in a modal for an operator, and changes nothing', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    const button = showArgsButton(card);

    const answer = await stack.click('U0OP1', card, 'show_args', () => button);
    expect(answer.status).toBe(200);

    const modal = await newModal('U0OP1', undefined);
    expect(modal.title?.text).toBe('Step arguments');
    const text = visibleText(modal.blocks);
    expect(text).toContain(`Run \`${runId}\` · version 1 · step \`s2\`.`);
    expect(text).toContain('*2. Reschedule delivery* · `s2`');
    expect(text).toContain('Delivery: dl_55120');
    expect(text).toContain('New delivery date: Fri 3 Apr 2026');
    expect(text).not.toContain('superseded');
    const run = await stack.countersign.approvals.getRun(runId);
    expect({ status: run?.status, version: run?.version, approvals: run?.approvals.length }).toEqual({
      status: 'pending',
      version: 1,
      approvals: 0,
    });
  });

  it('answers someone the plan does not concern privately, without a modal', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    const button = showArgsButton(card);
    const before = stack.slack.state.ephemerals('C0OPS').length;

    expect((await stack.click('U0GUEST', card, 'show_args', () => button)).status).toBe(200);

    const notice = await stack.until(() => stack.slack.state.ephemerals('C0OPS')[before]);
    expect(notice.user).toBe('U0GUEST');
    expect(notice.text).toMatch(/You can't do that: .*this plan was not sent to you/);
    expect(stack.modal('U0GUEST')).toBeUndefined();
  });

  it('shows the arguments of the version the button was drawn for, saying it was superseded', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    const oldButton = showArgsButton(card);
    await editFreight(stack, 'U0OP2', card, { window: '2026-04-06' });
    const edited = await cardAtVersion(stack, card, 2);

    const before = stack.modal('U0OP2')?.id;
    expect((await stack.click('U0OP2', edited, 'show_args', () => oldButton)).status).toBe(200);
    const old = visibleText((await newModal('U0OP2', before)).blocks);
    expect(old).toContain('version 1 · step `s2`. It was superseded by version 2');
    expect(old).toContain('New delivery date: Fri 3 Apr 2026');

    const current = showArgsButton(edited);
    const shown = stack.modal('U0OP2')?.id;
    expect((await stack.click('U0OP2', edited, 'show_args', () => current)).status).toBe(200);
    const now = visibleText((await newModal('U0OP2', shown)).blocks);
    expect(now).toContain('New delivery date: Mon 6 Apr 2026');
    expect(now).not.toContain('superseded');
  });
});
