import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotStack, botStack, SIGNING_SECRET } from '../support/bot-stack.ts';
import { cardAtVersion, editFreight, submitFreight, submittedValues } from '../support/freight-edits.ts';
import { submissionAnswer, visibleText } from '../support/slack-blocks.ts';

let stack: BotStack;
beforeAll(async () => {
  stack = await botStack('stale-version');
});
afterAll(() => stack.stop());

describe('clicks and edits aimed at a version that is no longer current', () => {
  it('refuses approve on the version 1 card after version 2 exists, privately, approving nothing', async () => {
    const runId = await submitFreight(stack);
    // Slack keeps showing what a person loaded: a copy of the v1 card, before it is updated in place.
    const v1Card = structuredClone(await stack.card(runId));
    await editFreight(stack, 'U0FIN1', v1Card, { window: '2026-04-06' });
    await cardAtVersion(stack, v1Card, 2);

    const before = stack.slack.state.ephemerals('C0OPS').length;
    expect((await stack.click('U0OP1', v1Card, 'approve')).status).toBe(200);
    const notice = await stack.until(() => stack.slack.state.ephemerals('C0OPS')[before]);
    expect(notice.user).toBe('U0OP1');
    expect(notice.text).toMatch(/version 2 is current/);
    expect(notice.text).toMatch(/Nothing was changed/);
    const run = await stack.countersign.approvals.getRun(runId);
    expect(run?.status).toBe('pending');
    expect(run?.approvals).toEqual([]);
  });

  it('answers an edit submitted from a version 1 modal with "the plan changed", merging nothing', async () => {
    const runId = await submitFreight(stack);
    const card = structuredClone(await stack.card(runId));
    // The operator opens Edit on v1 and starts typing; meanwhile finance saves version 2.
    const operatorModal = await stack.openModal('U0OP1', card, 'edit');
    await editFreight(stack, 'U0FIN1', card, { window: '2026-04-06' });
    await cardAtVersion(stack, card, 2);

    const answer = await stack.submit(
      'U0OP1',
      operatorModal,
      submittedValues(operatorModal, {
        'arg:s3:body': { type: 'plain_text_input', value: 'Hi Marta, rebooked for Tuesday.' },
      }),
    );
    expect(answer.status).toBe(200);
    const { response_action, view } = submissionAnswer(answer.body);
    expect(response_action).toBe('update');
    expect(view?.title?.text).toBe('The plan changed');
    expect(visibleText(view?.blocks ?? [])).toMatch(
      /You were editing version 1; version 2 is current now\. Nothing you typed was applied/,
    );

    const run = await stack.countersign.approvals.getRun(runId);
    expect(run?.version).toBe(2);
    expect(run?.current.plan.steps.find((step) => step.id === 's3')?.args.body).not.toMatch(/Tuesday/);
    expect(await stack.countersign.approvals.getVersion(runId, 3)).toBeUndefined();
  });

  it('opens the "plan changed" modal, pointing at the current version, for Edit on the version 1 card', async () => {
    const runId = await submitFreight(stack);
    const v1Card = structuredClone(await stack.card(runId));
    await editFreight(stack, 'U0FIN1', v1Card, { window: '2026-04-06' });
    await cardAtVersion(stack, v1Card, 2);

    const modal = await stack.openModal('U0OP1', v1Card, 'edit');
    expect(modal.title?.text).toBe('The plan changed');
    expect(modal.submit).toBeUndefined();
    expect(JSON.stringify(modal.blocks)).toContain(`{\\"r\\":\\"${runId}\\",\\"v\\":2}`);

    // Its button replaces the notice with the form for version 2, in the same modal.
    const { buildBlockActionsPayload, buttonAction, postInteraction } = await import(
      '../../src/emulator/index.ts'
    );
    const payload = buildBlockActionsPayload({
      user: { id: 'U0OP1' },
      container: { type: 'view', view: modal },
      action: buttonAction(modal.blocks, 'edit'),
    });
    expect((await postInteraction(stack.eventsUrl, SIGNING_SECRET, payload)).status).toBe(200);
    const form = await stack.until(() => {
      const updated = stack.slack.state.view(modal.id);
      return updated !== undefined && updated.hash !== modal.hash ? updated : undefined;
    });
    expect(form.callback_id).toBe('edit_plan');
    expect(JSON.stringify(form.blocks)).toContain('arg:s2:window');
    expect(stack.modal('U0OP1')?.id).toBe(modal.id);
  });
});
