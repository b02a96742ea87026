/**
 * Plans with dependencies on messages and in the edit form: the graph (`s3` ← `s2`), steps released
 * before the plan was decided and what the agent reported for them, what each other step waits for,
 * a change of dependencies in the diff message, and choosing dependencies in the edit form.
 */
import { describe, expect, it } from 'vitest';
import { freightPlan } from '../../examples/freight/plans.ts';
import type { RunView, StepOutcome, StoredVersion } from '../../src/approvals/types.ts';
import { checkMessageBlocks, checkView, stateValue } from '../../src/emulator/index.ts';
import { diagnostic, diffPlans, type ValidatedStep } from '../../src/pipeline/index.ts';
import { buildApprovalCard } from '../../views/card.ts';
import { buildDiffMessage } from '../../views/diff-message.ts';
import { diagnosticsToModalErrors } from '../../views/edit-errors.ts';
import { buildEditModal } from '../../views/edit-modal.ts';
import { readEditSubmission } from '../../views/edit-submission.ts';
import { buildEscalationMessage } from '../../views/escalation-message.ts';
import {
  agentVersion,
  approval,
  freightConfig,
  mrkdwnTexts,
  NOW,
  runView,
  untouchedState,
  validPlan,
} from './fixtures.ts';

const textOf = (message: { blocks: readonly unknown[] }) =>
  mrkdwnTexts(message.blocks)
    .map((t) => t.text)
    .join('\n');
const MINUTE = 60_000;

/** The freight plan where the reply (s3) needs the note and the reschedule, and the reschedule the note. */
function dependentV1(dependsOn: Record<string, string[]> = { s2: ['s1'], s3: ['s1', 's2'] }): StoredVersion {
  const raw = freightPlan({ now: NOW });
  return agentVersion(
    validPlan({
      ...raw,
      steps: raw.steps.map((step) =>
        dependsOn[step.id] === undefined ? step : { ...step, dependsOn: dependsOn[step.id] },
      ),
    }),
  );
}

/** `ids` marked `continue`, as a policy rule would (the policy itself is approvals' to decide). */
function withContinue(version: StoredVersion, ids: readonly string[]): StoredVersion {
  const continues = (step: ValidatedStep): ValidatedStep =>
    ids.includes(step.id) && step.route.kind !== 'block'
      ? { ...step, route: { ...step.route, continue: true } }
      : step;
  return { ...version, plan: { ...version.plan, steps: version.plan.steps.map(continues) } };
}

/**
 * A run whose note (s1) was released and applied, the reschedule (s2) approved, released and applying, while
 * the reply (s3) waits for its approvals, for s2 to be applied and for the whole plan.
 */
function partlyReleased(status: RunView['status'] = 'pending'): {
  run: RunView;
  outcomes: StepOutcome[];
} {
  const version = withContinue(dependentV1(), ['s1', 's2']);
  const projected = runView(version, {
    // The reschedule needs an operator's approval to be released.
    approvals: [approval(version.plan.steps[1]!, 'U0OP2')],
    status,
    ...(status === 'pending' ? {} : { decidedBy: 'U0OP1', decidedAt: NOW + 30 * MINUTE }),
    ...(status === 'rejected' ? { reason: 'Customer asked us to wait.' } : {}),
  });
  const run: RunView = {
    ...projected,
    released: { s1: { at: NOW + MINUTE, version: 1 }, s2: { at: NOW + 3 * MINUTE, version: 1 } },
    waiting: status === 'pending' ? { s3: { approvals: true, dependencies: ['s2'], plan: true } } : {},
  };
  const outcomes: StepOutcome[] = [
    { stepId: 's1', status: 'applied', at: NOW + 2 * MINUTE },
    { stepId: 's2', status: 'applying', at: NOW + 4 * MINUTE },
  ];
  return { run, outcomes };
}

describe('the card of a plan with dependencies', () => {
  it('shows each step with dependencies as `s3` ← `s2` and nothing about releases when no step may run early', () => {
    const card = buildApprovalCard({ run: runView(dependentV1()), config: freightConfig, now: NOW });
    expect(checkMessageBlocks(card.blocks)).toEqual([]);
    const text = textOf(card);
    expect(text).toContain('🔗 `s2` ← `s1` — runs only once it is applied');
    expect(text).toContain('🔗 `s3` ← `s1`, `s2` — runs only once they are applied');
    expect(text).not.toContain('🔗 `s1`');
    expect(text).not.toContain('Waits for');
    expect(text).not.toContain('Released');
  });

  it('shows released steps with what the agent reported, and what each other step waits for', () => {
    const { run, outcomes } = partlyReleased();
    const card = buildApprovalCard({ run, config: freightConfig, now: NOW + 5 * MINUTE, outcomes });
    expect(checkMessageBlocks(card.blocks)).toEqual([]);
    const [, status, , , s1, s2, s3] = card.blocks as { text?: { text: string } }[];
    expect(status?.text?.text).toContain('🟢 *Released so far:* `s1` (✔️ applied), `s2` (⏳ applying).');
    expect(s1?.text?.text).toContain('🟢 *Released* at 10:01 UTC, before the whole plan was decided');
    expect(s1?.text?.text).toContain('✔️ *Applied* at 10:02 UTC');
    expect(s2?.text?.text).toContain('🟢 *Released* at 10:03 UTC');
    expect(s2?.text?.text).toContain('⏳ *Applying* since 10:04 UTC');
    expect(s3?.text?.text).toContain(
      '⏸️ *Waits for* its approvals · `s2` to be applied · the whole plan to be approved',
    );
    expect(s3?.text?.text).not.toContain('Released');
  });

  it('a step that may run early but waits says only what it still waits for', () => {
    const version = withContinue(dependentV1(), ['s1', 's2', 's3']);
    const run: RunView = {
      ...runView(version, { approvals: [approval(version.plan.steps[2]!, 'U0OP1')] }),
      released: { s1: { at: NOW + MINUTE, version: 1 } },
      waiting: {
        s2: { approvals: false, dependencies: ['s1'], plan: false },
        s3: { approvals: false, dependencies: ['s1', 's2'], plan: false },
      },
    };
    const text = textOf(buildApprovalCard({ run, config: freightConfig, now: NOW + 2 * MINUTE }));
    expect(text).toContain('⏸️ *Waits for* `s1` to be applied');
    expect(text).toContain('⏸️ *Waits for* `s1`, `s2` to be applied');
    // Released, nothing reported yet.
    expect(text).toContain('`s1` (not reported yet)');
    expect(text).toContain('◻️ Not reported yet');
  });

  it('a rejected card lists what had been released and applied, and that every other step was revoked', () => {
    const { run, outcomes } = partlyReleased('rejected');
    const card = buildApprovalCard({ run, config: freightConfig, now: NOW + 40 * MINUTE, outcomes });
    expect(checkMessageBlocks(card.blocks)).toEqual([]);
    const text = textOf(card);
    expect(text).toContain(
      '❌ *Rejected* by <@U0OP1> at Wed 1 Apr 2026, 10:30 UTC — no other step will be executed.',
    );
    expect(text).toContain(
      '🟢 *Released before it was rejected:* `s1` (✔️ applied), `s2` (⏳ applying). Every other step was revoked and will not run.',
    );
    expect(text).not.toContain('nothing will be executed');
    expect(text).not.toContain('Waits for');
  });

  it('an expired card says the same; one without releases still says nothing was executed', () => {
    const { run, outcomes } = partlyReleased('expired');
    const text = textOf(
      buildApprovalCard({ run, config: freightConfig, now: NOW + 3 * 60 * MINUTE, outcomes }),
    );
    expect(text).toContain('— no other step will be executed.');
    expect(text).toContain('🟢 *Released before it expired:* `s1` (✔️ applied)');
    const plain = runView(dependentV1(), { status: 'expired', decidedAt: NOW + 2 * 60 * MINUTE });
    expect(textOf(buildApprovalCard({ run: plain, config: freightConfig, now: NOW }))).toContain(
      '— nothing was executed.',
    );
  });

  it('an approved card says which steps ran before the approval', () => {
    const { run, outcomes } = partlyReleased('approved');
    const text = textOf(buildApprovalCard({ run, config: freightConfig, now: NOW + 40 * MINUTE, outcomes }));
    expect(text).toContain(
      '🟢 *Released before the plan was approved:* `s1` (✔️ applied), `s2` (⏳ applying).',
    );
    expect(text).toContain('◻️ Not reported yet'); // s3, approved, not run yet
  });

  it('a superseded version says nothing about releases (the current card does)', () => {
    const { run } = partlyReleased();
    const text = textOf(
      buildApprovalCard({
        run: { ...run, version: 2 },
        version: run.current,
        config: freightConfig,
        now: NOW,
      }),
    );
    expect(text).not.toContain('Released');
    expect(text).not.toContain('Waits for');
  });
});

describe('the escalation message of a plan with dependencies', () => {
  it('shows what the waiting step waits for and the graph', () => {
    const { run } = partlyReleased();
    const message = buildEscalationMessage({
      run,
      step: { kind: 'reminder' },
      notified: [],
      config: freightConfig,
      now: NOW + 20 * MINUTE,
    });
    expect(checkMessageBlocks(message.blocks)).toEqual([]);
    const text = textOf(message);
    expect(text).toContain('🔗 `s3` ← `s1`, `s2`');
    expect(text).toContain(
      '⏸️ *Waits for* its approvals · `s2` to be applied · the whole plan to be approved',
    );
    // Listed one line each: the graph there too.
    expect(text).toContain('`s2` ← `s1`');
  });
});

describe('the diff message of an edit that changed dependencies', () => {
  it('shows the change of a step’s dependencies as a change of that step, which needs approval again', () => {
    const previous = dependentV1({ s3: ['s1'] });
    const plan = validPlan(
      {
        ...freightPlan({ now: NOW }),
        steps: previous.plan.steps.map(({ id, tool, args }) =>
          id === 's3' ? { id, tool, args, dependsOn: ['s1', 's2'] } : { id, tool, args },
        ),
      },
      { edit: { editorId: 'U0OP1', base: previous.plan } },
    );
    const current: StoredVersion = {
      version: 2,
      plan,
      provenance: {
        ...previous.provenance,
        s3: { by: 'user', userId: 'U0OP1', version: 2, change: 'changed' },
      },
      createdBy: 'U0OP1',
      createdAt: NOW + 10 * MINUTE,
      baseVersion: 1,
    };
    const diff = diffPlans(previous.plan, current.plan);
    const message = buildDiffMessage({
      runId: plan.runId,
      previous,
      current,
      diff,
      editorId: 'U0OP1',
      config: freightConfig,
      now: NOW + 10 * MINUTE,
    });
    expect(checkMessageBlocks(message.blocks)).toEqual([]);
    const text = textOf(message);
    expect(text).toContain('edited the plan: 1 step changed → version 2');
    expect(text).toContain('✏️ *Changed step `s3` — Reply to customer*');
    expect(text).toContain('Depends on: `s1` → `s1`, `s2`');
    expect(text).toContain('🔁 *Re-approval required for:* step `s3` (changed)');
    // Dropping every dependency reads "→ (nothing)".
    const back = diffPlans(current.plan, previous.plan);
    const dropped = validPlan({
      ...freightPlan({ now: NOW }),
      steps: previous.plan.steps.map(({ id, tool, args }) => ({ id, tool, args })),
    });
    const undone = diffPlans(previous.plan, dropped);
    expect(back.touchedStepIds).toEqual(['s3']);
    const droppedText = textOf(
      buildDiffMessage({
        runId: plan.runId,
        previous,
        current: { ...current, plan: dropped },
        diff: undone,
        editorId: 'U0OP1',
        config: freightConfig,
        now: NOW,
      }),
    );
    expect(droppedText).toContain('Depends on: `s1` → _(nothing)_');
  });
});

describe('dependencies in the edit form', () => {
  const run = runView(dependentV1({ s3: ['s2'] }));
  type Input = {
    block_id?: string;
    type: string;
    element?: Record<string, unknown>;
    label?: { text: string };
  };
  const inputOf = (view: { blocks: readonly unknown[] }, blockId: string) =>
    (view.blocks as Input[]).find((block) => block.block_id === blockId);

  it('shows each step’s dependencies as a multi-select of the other steps, prefilled, within Slack’s limits', () => {
    const view = buildEditModal({ run, config: freightConfig, editorId: 'U0OP1', addedTool: 'add_note' });
    expect(checkView(view)).toEqual([]);
    const s3 = inputOf(view, 'deps:s3');
    expect(s3?.label?.text).toBe('Step s3 runs after');
    expect(s3?.element).toMatchObject({
      type: 'multi_static_select',
      action_id: 'input',
      initial_options: [{ value: 's2' }],
    });
    expect(((s3?.element?.options ?? []) as { value: string }[]).map((o) => o.value)).toEqual([
      's1',
      's2',
      's4',
    ]);
    expect(inputOf(view, 'deps:s1')?.element).not.toHaveProperty('initial_options');
    // The new step may depend on the existing ones.
    const s4 = inputOf(view, 'deps:s4');
    expect(
      ((s4?.element?.options ?? []) as { text: { text: string }; value: string }[]).map((o) => o.text.text),
    ).toEqual(['1. Add internal note (s1)', '2. Reschedule delivery (s2)', '3. Reply to customer (s3)']);
  });

  it('a one-step plan offers no dependencies', () => {
    const one = freightPlan({ now: NOW });
    const single = runView(agentVersion(validPlan({ ...one, steps: one.steps.slice(0, 1) })));
    const view = buildEditModal({ run: single, config: freightConfig, editorId: 'U0OP1' });
    expect(inputOf(view, 'deps:s1')).toBeUndefined();
  });

  const submit = (overrides: Record<string, Record<string, unknown>>, addedTool?: string) => {
    const view = buildEditModal({
      run,
      config: freightConfig,
      editorId: 'U0OP1',
      ...(addedTool === undefined ? {} : { addedTool }),
    });
    return readEditSubmission({
      run,
      config: freightConfig,
      stateValues: untouchedState(view, overrides),
      privateMetadata: view.private_metadata!,
    });
  };
  const pick = (...ids: string[]) => stateValue.multiStaticSelect(ids.map((id) => ({ text: id, value: id })));

  it('keeps dependencies left alone, and reads changed ones into the edited plan, sorted', () => {
    const untouched = submit({});
    expect(untouched.ok && untouched.steps.map((step) => step.dependsOn)).toEqual([
      undefined,
      undefined,
      ['s2'],
    ]);
    const changed = submit({ 'deps:s3': pick('s2', 's1'), 'deps:s2': pick() });
    expect(changed.ok && changed.steps.find((step) => step.id === 's3')?.dependsOn).toEqual(['s1', 's2']);
    const cleared = submit({ 'deps:s3': pick() });
    expect(cleared.ok && cleared.steps.find((step) => step.id === 's3')).not.toHaveProperty('dependsOn');
    // A form that sent no dependency input (drawn before they could be edited) keeps them.
    const view = buildEditModal({ run, config: freightConfig, editorId: 'U0OP1' });
    const { 'deps:s3': _sent, ...older } = untouchedState(view);
    const kept = readEditSubmission({
      run,
      config: freightConfig,
      stateValues: older,
      privateMetadata: view.private_metadata!,
    });
    expect(kept.ok && kept.steps.find((step) => step.id === 's3')?.dependsOn).toEqual(['s2']);
  });

  it('lets a new step depend on existing ones', () => {
    const read = submit(
      {
        'deps:s4': pick('s3'),
        'arg:s4:ticket_id': stateValue.plainText('74991'),
        'arg:s4:note': stateValue.plainText('Done.'),
      },
      'add_note',
    );
    expect(read.ok && read.steps.at(-1)).toMatchObject({ id: 's4', tool: 'add_note', dependsOn: ['s3'] });
  });

  it('refuses at the form to remove a step others depend on, naming them, at that step’s field', () => {
    const read = submit({ remove_steps: stateValue.checkboxes([{ text: 's2', value: 's2' }]) });
    expect(read).toEqual({
      ok: false,
      reason: 'fields',
      errors: { 'deps:s2': 's3 depends on this step; remove that dependency first.' },
    });
    // Removing the dependency too, or the dependent step too, is fine.
    expect(
      submit({ remove_steps: stateValue.checkboxes([{ text: 's2', value: 's2' }]), 'deps:s3': pick() }).ok,
    ).toBe(true);
    expect(
      submit({
        remove_steps: stateValue.checkboxes([
          { text: 's2', value: 's2' },
          { text: 's3', value: 's3' },
        ]),
      }).ok,
    ).toBe(true);
  });

  it('says at the field when steps would wait for each other in a circle, or name a step not in the plan', () => {
    expect(submit({ 'deps:s2': pick('s3') })).toEqual({
      ok: false,
      reason: 'fields',
      errors: {
        'deps:s2':
          'These steps would wait for each other forever: s2 → s3 → s2. Remove one of these dependencies.',
      },
    });
    expect(submit({ 'deps:s1': pick('s9') })).toEqual({
      ok: false,
      reason: 'fields',
      errors: { 'deps:s1': 's9 is not a step of this plan any more; pick again.' },
    });
  });

  it('puts the pipeline’s dependency diagnostics at the dependency input of the step', () => {
    const cycle = diagnostic(
      'parse',
      'dependency_cycle',
      'the steps depend on each other in a circle: s2 → s3 → s2',
      {
        stepId: 's2',
        path: ['steps', 1, 'dependsOn'],
      },
    );
    const unknown = diagnostic(
      'parse',
      'unknown_dependency',
      'step s3 depends on s7, which is not a step of this plan',
      {
        stepId: 's3',
        path: ['steps', 2, 'dependsOn', 0],
      },
    );
    expect(
      diagnosticsToModalErrors(
        [cycle, unknown],
        ['arg:s1:note', 'deps:s2', 'deps:s3', 'remove_steps'],
        ['s1', 's2', 's3'],
      ),
    ).toEqual({
      'deps:s2':
        'These steps would wait for each other forever: s2 → s3 → s2. Remove one of these dependencies.',
      'deps:s3': 's7 is not a step of this plan any more; pick again.',
    });
  });
});
