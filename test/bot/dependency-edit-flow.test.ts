/**
 * Editing a plan's dependencies from its card, over HTTP against the Slack stand-in and real Redis:
 * the form shows and edits each step's dependencies, the edited plan carries them, the card and the
 * diff message show the change, and removing a step others depend on is refused at the form.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StateValue, stateValue } from '../../src/emulator/index.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import { cardAtVersion, submitFreight, submittedValues } from '../support/freight-edits.ts';
import { sectionMatching, visibleText } from '../support/slack-blocks.ts';

let stack: BotStack;
beforeAll(async () => {
  stack = await botStack('dependency-edit-flow');
});
afterAll(() => stack.stop());

const pick = (...ids: string[]): StateValue =>
  stateValue.multiStaticSelect(ids.map((id) => ({ text: id, value: id })));

describe('editing dependencies in the edit form', () => {
  it('an operator makes the reply wait for the reschedule: version 2 carries it, the card and the diff message show it', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    const view = await stack.openModal('U0OP1', card, 'edit');
    const reply = (view.blocks as { block_id?: string; element?: { options?: { value: string }[] } }[]).find(
      (block) => block.block_id === 'deps:s3',
    );
    expect(reply?.element?.options?.map((o) => o.value)).toEqual(['s1', 's2']);

    const answer = await stack.submit('U0OP1', view, submittedValues(view, { 'deps:s3': pick('s2') }));
    expect(answer.status).toBe(200);
    expect(answer.body === null || JSON.stringify(answer.body) === '{"response_action":"clear"}').toBe(true);

    const run = await stack.countersign.approvals.getRun(runId);
    expect(run?.version).toBe(2);
    expect(run?.current.plan.steps.map((step) => step.dependsOn)).toEqual([undefined, undefined, ['s2']]);
    expect(run?.current.provenance.s3).toMatchObject({ by: 'user', userId: 'U0OP1', change: 'changed' });

    const updated = await cardAtVersion(stack, card, 2);
    expect(visibleText(updated.blocks)).toContain('🔗 `s3` ← `s2` — runs only once it is applied');

    const diff = await stack.until(() => stack.thread(card)[0]);
    expect(sectionMatching(diff.blocks, /Changed step `s3`/)).toContain('Depends on: _(nothing)_ → `s2`');
    expect(visibleText(diff.blocks)).toMatch(/Re-approval required for:\* step `s3` \(changed\)\./);

    // The next form shows the dependency chosen; a new step may depend on an existing one.
    const next = await stack.select(
      'U0OP1',
      await stack.openModal('U0OP1', updated, 'edit'),
      'add_step',
      'add_note',
    );
    expect(JSON.stringify(next.blocks)).toMatch(
      /"block_id":"deps:s3".*"initial_options":\[\{[^\]]*"value":"s2"\}\]/,
    );
    const withNote = await stack.submit(
      'U0OP1',
      next,
      submittedValues(next, {
        'arg:s4:ticket_id': stateValue.plainText('74991'),
        'arg:s4:note': stateValue.plainText('Told the customer.'),
        'deps:s4': pick('s3'),
      }),
    );
    expect(withNote.status).toBe(200);
    const v3 = await stack.countersign.approvals.getRun(runId);
    expect(v3?.version).toBe(3);
    expect(v3?.current.plan.steps.find((step) => step.id === 's4')?.dependsOn).toEqual(['s3']);
  });

  it('removing a step another depends on is an error at that step’s field, and nothing changes', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    const first = await stack.openModal('U0OP1', card, 'edit');
    await stack.submit('U0OP1', first, submittedValues(first, { 'deps:s3': pick('s2') }));
    const v2 = await cardAtVersion(stack, card, 2);

    const view = await stack.openModal('U0OP1', v2, 'edit');
    const removeS2 = stateValue.checkboxes([{ text: 's2', value: 's2' }]);
    const answer = await stack.submit('U0OP1', view, submittedValues(view, { remove_steps: removeS2 }));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      response_action: 'errors',
      errors: { 'deps:s2': 's3 depends on this step; remove that dependency first.' },
    });
    expect((await stack.countersign.approvals.getRun(runId))?.version).toBe(2);

    // A circle is refused at the field too.
    const circle = await stack.submit('U0OP1', view, submittedValues(view, { 'deps:s2': pick('s3') }));
    expect(circle.body).toEqual({
      response_action: 'errors',
      errors: {
        'deps:s2':
          'These steps would wait for each other forever: s2 → s3 → s2. Remove one of these dependencies.',
      },
    });

    // Dropping the dependency in the same form lets the step go.
    const both = await stack.submit(
      'U0OP1',
      view,
      submittedValues(view, { remove_steps: removeS2, 'deps:s3': pick() }),
    );
    expect(both.status).toBe(200);
    const run = await stack.countersign.approvals.getRun(runId);
    expect(run?.version).toBe(3);
    expect(run?.current.plan.steps.map((step) => [step.id, step.dependsOn])).toEqual([
      ['s1', undefined],
      ['s3', undefined],
    ]);
  });
});
