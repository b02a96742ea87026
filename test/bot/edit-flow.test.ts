import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addedRefundStep } from '../../examples/freight/plans.ts';
import { stateValue } from '../../src/emulator/index.ts';
import { encodeEditMetadata } from '../../views/index.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import {
  cardAtVersion,
  editFreight,
  REFUND,
  submitFreight,
  submittedValues,
} from '../support/freight-edits.ts';
import { blockIds, sectionMatching, selectValues, stepButton, visibleText } from '../support/slack-blocks.ts';

let stack: BotStack;
beforeAll(async () => {
  stack = await botStack('edit-flow');
});
afterAll(() => stack.stop());

describe('editing a plan from its card, over HTTP against the emulator and real Redis', () => {
  it('opens a typed, prefilled modal; add_step offers an operator only the tools operators may write', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);

    const view = await stack.openModal('U0OP1', card, 'edit');
    expect(view.callback_id).toBe('edit_plan');
    expect(blockIds(view.blocks)).toEqual(
      expect.arrayContaining(['arg:s1:note', 'arg:s2:delivery_id', 'arg:s2:window', 'arg:s3:body']),
    );
    expect(JSON.stringify(view.blocks)).toContain('"initial_date":"2026-04-03"');
    const offered = selectValues(view.blocks, 'add_step');
    expect(offered).toEqual(expect.arrayContaining(['reschedule_delivery', 'send_reply', 'add_note']));
    expect(offered).not.toContain('issue_refund');

    // Choosing a tool redraws the modal with the new step's fields.
    const withNote = await stack.select('U0OP1', view, 'add_step', 'add_note');
    expect(blockIds(withNote.blocks)).toEqual(expect.arrayContaining(['arg:s4:ticket_id', 'arg:s4:note']));
  });

  it('an operator whose forged submission adds a refund gets the may_author error at the added step', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    const view = await stack.openModal('U0OP1', card, 'edit');
    // The select never offered the refund: this is what a hand-made request could still send.
    const forged = {
      ...view,
      private_metadata: encodeEditMetadata({
        runId,
        baseVersion: 1,
        added: [{ id: 's4', tool: addedRefundStep.tool }],
      }),
    };
    const values = {
      ...submittedValues(view, { 'arg:s2:window': stateValue.date('2026-04-06') }),
      'arg:s4:invoice_id': { input: stateValue.plainText(REFUND.invoiceId) },
      'arg:s4:amount': { input: stateValue.number(REFUND.amount) },
    };

    const answer = await stack.submit('U0OP1', forged, values);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      response_action: 'errors',
      errors: { 'arg:s4:invoice_id': expect.stringMatching(/may not write issue_refund/) },
    });
    const run = await stack.countersign.approvals.getRun(runId);
    expect(run?.version).toBe(1);
    expect(await stack.countersign.approvals.getVersion(runId, 2)).toBeUndefined();
  });

  it('keeps the modal open with errors next to the fields for a typo or a refund over the balance', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    const view = await stack.select(
      'U0FIN1',
      await stack.openModal('U0FIN1', card, 'edit'),
      'add_step',
      addedRefundStep.tool,
    );
    const submitAmount = (amount: string) =>
      stack.submit(
        'U0FIN1',
        view,
        submittedValues(view, {
          'arg:s4:invoice_id': stateValue.plainText(REFUND.invoiceId),
          'arg:s4:amount': stateValue.number(amount),
        }),
      );

    expect((await submitAmount('14.899')).body).toEqual({
      response_action: 'errors',
      errors: { 'arg:s4:amount': 'USD amounts have at most 2 decimal places (write it like 1489.00)' },
    });
    expect((await submitAmount('1489.01')).body).toEqual({
      response_action: 'errors',
      errors: {
        'arg:s4:amount': expect.stringMatching(/\$1,489\.01 exceeds the invoice balance \$1,489\.00/),
      },
    });
    expect((await stack.countersign.approvals.getRun(runId))?.version).toBe(1);
  });

  it('a finance edit that moves the window and adds the refund becomes version 2 with a diff in the thread', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);

    const { view, answer } = await editFreight(stack, 'U0FIN1', card, {
      window: '2026-04-06',
      addRefund: true,
    });
    expect(blockIds(view.blocks)).toEqual(expect.arrayContaining(['arg:s4:invoice_id', 'arg:s4:amount']));
    expect(answer.status).toBe(200);
    expect(answer.body === null || JSON.stringify(answer.body) === '{"response_action":"clear"}').toBe(true);

    const run = await stack.countersign.approvals.getRun(runId);
    expect(run?.version).toBe(2);
    const refund = run?.current.plan.steps.find((step) => step.id === 's4');
    expect(refund).toMatchObject({ tool: 'issue_refund', args: { invoice_id: 'in_74119', amount: 148_900 } });
    expect(run?.current.plan.steps.find((step) => step.id === 's2')?.args.window).toBe('2026-04-06');

    // The card now shows version 2 and asks for the refund's two finance approvals.
    const updated = await cardAtVersion(stack, card, 2);
    expect(visibleText(updated.blocks)).toMatch(/0 of 2 finance approvals/);
    // Who touched what, and how: the refund was added, the delivery window changed.
    expect(visibleText(updated.blocks)).toMatch(/Issue refund[\s\S]*✏️ added by Sam Lindqvist in v2/);
    expect(visibleText(updated.blocks)).toMatch(/✏️ changed by Sam Lindqvist in v2/);

    // The diff message: the added step set apart from the changed field, with the annotation.
    const diff = await stack.until(() => stack.thread(card)[0]);
    const added = sectionMatching(diff.blocks, /Added step `s4`/);
    const changed = sectionMatching(diff.blocks, /Changed step `s2`/);
    expect(added).toMatch(/\$1,489\.00/);
    expect(added).toMatch(/belongs to Halvorsen Freight/);
    // Its arguments as they are (there was no before); the only before → after is what it changes
    // in the world, from its preview.
    expect(added).toMatch(/^Invoice: in_74119\nAmount: \$1,489\.00$/m);
    expect(added?.split('\n').filter((line) => line.includes('→'))).toEqual([
      '• *balance the customer still owes* (`invoice.balance`): $1,489.00 → $0.00',
    ]);
    expect(changed).toMatch(/Fri 3 Apr 2026 → Mon 6 Apr 2026/);
    expect(changed).not.toMatch(/s4|refund/i);
    expect(visibleText(diff.blocks)).toMatch(
      /Re-approval required for:\* step `s2` \(changed\), step `s4` \(added\)\./,
    );
  });

  it('untouched steps keep their approvals across an edit; touched ones need approving again', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    // v2 adds the refund; the operator approves v2 (s2 and s3); the refund keeps the run pending.
    await editFreight(stack, 'U0FIN1', card, { addRefund: true });
    const v2Card = await cardAtVersion(stack, card, 2);
    await stack.click('U0OP1', v2Card, 'approve');
    const afterApproval = await stack.until(() =>
      stack.slack.state.ephemerals('C0OPS').find((e) => e.user === 'U0OP1' && /recorded/.test(e.text)),
    );
    expect(afterApproval.text).toMatch(/steps `s2` and `s3`/);

    // v3 changes only the window.
    const { answer } = await editFreight(stack, 'U0FIN2', v2Card, { window: '2026-04-07' });
    expect(answer.status).toBe(200);
    const run = await stack.countersign.approvals.getRun(runId);
    expect(run?.version).toBe(3);
    expect(run?.awaiting.map((a) => [a.stepId, a.have, a.need])).toEqual([
      ['s2', 0, 1],
      ['s4', 0, 2],
    ]);
    const s3 = run?.current.plan.steps.find((step) => step.id === 's3');
    expect(run?.approvals.filter((a) => a.stepDigest === s3?.digest).map((a) => a.userId)).toEqual(['U0OP1']);

    const diffV3 = await stack.until(() => stack.thread(card)[1]);
    expect(visibleText(diffV3.blocks)).toMatch(/Re-approval required for:\* step `s2` \(changed\)\./);

    // The rest of the approvals complete it: the agent receives the plan of version 3.
    const v3Card = await cardAtVersion(stack, card, 3);
    expect(sectionMatching(v3Card.blocks, /Reply to customer/)).toMatch(/approved by Dana Ortiz/);
    for (const userId of ['U0OP1', 'U0FIN2', 'U0FIN3']) {
      expect((await stack.click(userId, v3Card, 'approve')).status).toBe(200);
    }
    const decision = await stack.client.waitForDecision(runId, { timeoutMs: 10_000 });
    expect(decision.status).toBe('approved');
    expect(decision.plan?.steps.map((step) => step.id)).toEqual(['s1', 's2', 's3', 's4']);
  });

  it('warns on the diff message and the card that the reply still says Friday 3 April; "Edit s3" opens the form at s3 and the fix clears it', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    await editFreight(stack, 'U0OP1', card, { window: '2026-04-06' });

    const diff = await stack.until(() => stack.thread(card)[0]);
    const warning = /`s3` still says "Friday 3 April"\* \(Reply\); `s2` now says Mon 6 Apr 2026/;
    expect(visibleText(diff.blocks)).toMatch(warning);
    const v2Card = await cardAtVersion(stack, card, 2);
    expect(visibleText(v2Card.blocks)).toMatch(warning);

    // One click on the diff message's "Edit s3": the form for version 2, s3 first, the cursor in it.
    const before = stack.modal('U0OP1')?.id;
    const clicked = await stack.click('U0OP1', diff, 'edit', (blocks) => stepButton(blocks, 'edit', 's3'));
    expect(clicked.status).toBe(200);
    const view = await stack.until(() => {
      const open = stack.modal('U0OP1');
      return open !== undefined && open.id !== before ? open : undefined;
    });
    expect(view.title?.text).toBe('Edit plan v2');
    const inputs = blockIds(view.blocks).filter((id) => id.startsWith('arg:'));
    expect(inputs.slice(0, 2)).toEqual(['arg:s3:ticket_id', 'arg:s3:body']);
    // The cursor in the reply, the field that still quotes the old date.
    expect(JSON.stringify(view.blocks.find((block) => block.block_id === 'arg:s3:body'))).toContain(
      '"focus_on_load":true',
    );
    expect(JSON.stringify(view.blocks).match(/focus_on_load/g)).toHaveLength(1);

    const body =
      'Hi Marta, sorry about the missed delivery. We have rebooked it for Monday 6 April, before noon.';
    const answer = await stack.submit(
      'U0OP1',
      view,
      submittedValues(view, { 'arg:s3:body': stateValue.plainText(body) }),
    );
    expect(answer.status).toBe(200);
    const v3Card = await cardAtVersion(stack, card, 3);
    expect(visibleText(v3Card.blocks)).not.toMatch(/still says/);
    const diffV3 = await stack.until(() => stack.thread(card)[1]);
    expect(visibleText(diffV3.blocks)).not.toMatch(/still says/);
    expect((await stack.countersign.approvals.getRun(runId))?.current.plan.steps[2]?.args.body).toBe(body);
  });

  it('says at each field what is wrong in the person’s terms: letters in the amount, text over its limit', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    const view = await stack.select(
      'U0FIN1',
      await stack.openModal('U0FIN1', card, 'edit'),
      'add_step',
      addedRefundStep.tool,
    );
    // The amount is a text input: what was typed reaches the bot as typed (a number input would drop letters).
    expect(JSON.stringify(view.blocks)).not.toMatch(/number_input|max_length/);
    const submit = (changes: Parameters<typeof submittedValues>[1]) =>
      stack.submit(
        'U0FIN1',
        view,
        submittedValues(view, {
          'arg:s4:invoice_id': stateValue.plainText(REFUND.invoiceId),
          'arg:s4:amount': stateValue.plainText('$1,489.00'),
          ...changes,
        }),
      );

    expect((await submit({ 'arg:s4:amount': stateValue.plainText('1489 dollars') })).body).toEqual({
      response_action: 'errors',
      errors: { 'arg:s4:amount': '"1489 dollars" is not an amount (write it like 1489.00)' },
    });
    expect((await submit({ 'arg:s1:note': stateValue.plainText('n'.repeat(2_001)) })).body).toEqual({
      response_action: 'errors',
      errors: { 'arg:s1:note': 'This is 2,001 characters; it can hold at most 2,000. Shorten it by 1.' },
    });
    // Far past every limit (a hand-made request): still at the field, with no path and nothing in cents.
    const bypass = await submit({ 'arg:s1:note': stateValue.plainText('n'.repeat(10_001)) });
    expect(bypass.body).toEqual({
      response_action: 'errors',
      errors: { 'arg:s1:note': 'This is 10,001 characters; it can hold at most 2,000. Shorten it by 8,001.' },
    });
    expect((await stack.countersign.approvals.getRun(runId))?.version).toBe(1);

    // "$1,489.00" as typed is read exactly.
    const saved = await submit({});
    expect(saved.status).toBe(200);
    const run = await stack.countersign.approvals.getRun(runId);
    expect(run?.current.plan.steps.find((step) => step.id === 's4')?.args.amount).toBe(148_900);
  });
});
