import { describe, expect, it } from 'vitest';
import { checkMessageBlocks, checkView } from '../../src/emulator/block-kit-limits.ts';
import { type ChangeSet, diffPlans } from '../../src/pipeline/index.ts';
import { buildArgumentsModal } from '../../views/arguments-modal.ts';
import { parseButtonValue } from '../../views/button-value.ts';
import { buildApprovalCard } from '../../views/card.ts';
import { buildDiffMessage } from '../../views/diff-message.ts';
import { buildEscalationMessage } from '../../views/escalation-message.ts';
import { stepLine, stepStanding } from '../../views/step-section.ts';
import { toolOf } from '../../views/view-config.ts';
import {
  largeChangeSet,
  previewTimedOut,
  rescheduleChangeSet,
  withoutChangeSets,
  withStepExtras,
} from './change-set-fixtures.ts';
import {
  FREIGHT_USERS,
  freightConfig,
  freightEdit,
  freightV1,
  mrkdwnTexts,
  NOW,
  runView,
  unescapedMarkup,
} from './fixtures.ts';

type Section = { type: string; text?: { text: string }; accessory?: { action_id: string; value: string } };
const sections = (message: { blocks: readonly unknown[] }) =>
  (message.blocks as Section[]).filter((block) => block.type === 'section');
/** The section of step `id` (its heading, the first line, names it in code marks). */
const stepText = (message: { blocks: readonly unknown[] }, id: string) => {
  const heading = new RegExp(`^(\\*\\d+\\. .*· |.*step )\`${id}\``);
  const found = sections(message).find((block) => heading.test(block.text?.text.split('\n')[0] ?? ''));
  if (found?.text === undefined) throw new Error(`no section for ${id}`);
  return found.text.text;
};
/** The freight card, its steps without the tools' own previews, with `extra` spread into `stepId`. */
const cardWith = (extra: Parameters<typeof withStepExtras>[2], stepId = 's2') => {
  const version = withStepExtras(withoutChangeSets(freightV1()), stepId, extra);
  return buildApprovalCard({ run: runView(version), config: freightConfig, now: NOW });
};

describe('a step with a change set on the card', () => {
  it('shows warnings, then the target and before → after with labels beside paths, then one line of arguments', () => {
    const card = cardWith({ changeSet: rescheduleChangeSet });
    expect(checkMessageBlocks(card.blocks)).toEqual([]);
    expect(stepText(card, 's2')).toMatchInlineSnapshot(`
      "*2. Reschedule delivery* · \`s2\`
      ⚠️ *Breaks:* delivery stays inside the customer's booked window — booked window ends Fri 3 Apr; new date Mon 6 Apr
      ❔ *Unknown whether it keeps:* the depot is open that day
      ❔ *Unknown impact on* Customer cu_9 (observed in the data)
      🎯 *Delivery dl_55120* · read at version \`7\`
      • *delivery date used for the driver's route* (\`delivery.date\`): Fri 3 Apr → Mon 6 Apr
      • *note for the driver* (\`delivery.driver_note\`): _(none)_ → Call ahead
      • *morning slot* (\`delivery.slot\`): yes → _(removed)_
      _Also touches:_
      • Monday route rt_88 — written (declared by the tool): the driver's route for Monday is rebuilt
      • Ticket 74991 — event sent (observed in the data)
      ✅ Keeps: driver hours stay within limits
      📝 Move delivery dl_55120 to Fri 3 Apr
      👥 0 of 1 operators approval"
    `);
  });

  it('puts the full arguments behind a show_args button naming run, version and step', () => {
    const card = cardWith({ changeSet: rescheduleChangeSet });
    const s2 = sections(card).find((block) => block.accessory?.action_id === 'show_args');
    expect(s2?.text?.text).toContain('`s2`');
    expect(parseButtonValue(s2?.accessory?.value ?? '')).toEqual({
      ok: true,
      value: { runId: freightV1().plan.runId, version: 1, stepId: 's2' },
    });
    // Only the step with a change set has one.
    expect(sections(card).filter((block) => block.accessory !== undefined)).toHaveLength(1);
  });

  it('shows every argument, and no button, once the card is decided', () => {
    const version = withStepExtras(freightV1(), 's2', { changeSet: rescheduleChangeSet });
    const run = runView(version, { status: 'rejected', decidedBy: 'U0OP1', decidedAt: NOW, reason: 'no' });
    const card = buildApprovalCard({ run, config: freightConfig, now: NOW });
    const text = stepText(card, 's2');
    expect(text).toContain('🎯 *Delivery dl_55120* · read at version `7`');
    expect(text).toContain('Delivery: dl_55120\nNew delivery date: Fri 3 Apr 2026');
    expect(sections(card).filter((block) => block.accessory !== undefined)).toEqual([]);
  });

  it('renders every other step exactly as without change sets', () => {
    const plain = buildApprovalCard({
      run: runView(withoutChangeSets(freightV1())),
      config: freightConfig,
      now: NOW,
    });
    const card = cardWith({ changeSet: rescheduleChangeSet });
    expect(stepText(card, 's1')).toBe(stepText(plain, 's1'));
    expect(stepText(card, 's3')).toBe(stepText(plain, 's3'));
    expect(card.blocks.length).toBe(plain.blocks.length);
  });

  it('shows "(none)" for a field that did not exist and "(removed)" for one the step removes', () => {
    const text = stepText(cardWith({ changeSet: rescheduleChangeSet }), 's2');
    expect(text).toContain('• *note for the driver* (`delivery.driver_note`): _(none)_ → Call ahead');
    expect(text).toContain('• *morning slot* (`delivery.slot`): yes → _(removed)_');
  });

  it('warns first about a preview that could not verify the step, and keeps its arguments', () => {
    const text = stepText(cardWith({ unverified: previewTimedOut }), 's2');
    const lines = text.split('\n');
    expect(lines[1]).toBe(
      "⚠️ *Could not verify:* preview timed out after 2 s (the tool's `preview` hook) — a person must review this step",
    );
    expect(text).toContain('New delivery date: Fri 3 Apr 2026');
  });

  it('lists violated and unknown invariants and unknown impact above the change, each once as a warning', () => {
    const text = stepText(cardWith({ changeSet: rescheduleChangeSet, unverified: previewTimedOut }), 's2');
    const at = (needle: string) => text.indexOf(needle);
    expect(at('⚠️ *Could not verify:*')).toBeLessThan(at('⚠️ *Breaks:*'));
    expect(at('⚠️ *Breaks:*')).toBeLessThan(at('❔ *Unknown whether it keeps:*'));
    expect(at('❔ *Unknown impact on* Customer cu_9')).toBeLessThan(at('🎯 *Delivery dl_55120*'));
    expect(text.match(/booked window ends Fri 3 Apr/g)).toHaveLength(1);
  });
});

describe('escaping preview text', () => {
  const hostile: ChangeSet = {
    target: { type: 'delivery', id: 'dl_1', label: '<!here> Delivery & co', version: '<@U0FIN1>' },
    changes: [
      {
        path: 'a.<!channel>',
        label: '<!channel> *urgent*',
        before: '<https://evil.example|your bank>',
        after: { note: '<!everyone>' },
      },
      { path: 'b', label: 'b', before: 1, after: 2, beforeText: '<@U0LEAD1>', afterText: '&amp; <#C0OPS>' },
    ],
    related: [
      {
        entity: { type: 'x', id: '<!subteam^S1>' },
        impact: 'unknown',
        source: 'observed',
        note: '<!channel>',
      },
    ],
    invariants: [
      { name: 'n', label: '<!channel> rule', status: 'violated', evidence: '<https://x|y>' },
      { name: 'm', label: '<!here> kept', status: 'preserved' },
    ],
  };

  it('escapes labels, values, entities, notes and evidence on the card, the diff and the escalation', () => {
    const card = cardWith({
      changeSet: hostile,
      unverified: [{ hook: 'preview', reason: '<!channel> down' }],
    });
    const edit = freightEdit();
    const current = withStepExtras(edit.current, 's2', { changeSet: hostile });
    const diff = buildDiffMessage({
      ...edit,
      diff: diffPlans(edit.previous.plan, current.plan),
      current,
      runId: current.plan.runId,
      editorId: 'U0FIN1',
      config: freightConfig,
      now: NOW,
    });
    const escalation = buildEscalationMessage({
      run: runView(withStepExtras(freightV1(), 's2', { changeSet: hostile })),
      step: { kind: 'escalation', level: 1 },
      notified: ['U0LEAD1'],
      config: freightConfig,
      now: NOW,
    });
    for (const message of [card, diff, escalation]) {
      for (const { at, text } of mrkdwnTexts(message)) {
        expect({ at, problems: unescapedMarkup(text, FREIGHT_USERS) }).toEqual({ at, problems: [] });
      }
    }
    // Each message did render the hostile change set (escaped).
    for (const message of [card, diff, escalation]) {
      expect(stepText(message, 's2')).toContain('• *&lt;!channel&gt; \u200B*\u200Burgent\u200B*\u200B*');
    }
    const text = stepText(card, 's2');
    expect(text).toContain('&lt;!channel&gt;');
    expect(text).toContain('&amp;amp; &lt;#C0OPS&gt;');
    expect(text).not.toContain('<@U0LEAD1>');
  });
});

describe('a long change set', () => {
  it('is cut within a section, saying how many fields, related entities and warnings were left out', () => {
    const changeSet = largeChangeSet({ fields: 200, related: 80, violated: 60 });
    const card = cardWith({ changeSet });
    expect(checkMessageBlocks(card.blocks)).toEqual([]);
    const text = stepText(card, 's2');
    expect(text.length).toBeLessThanOrEqual(3000);
    const fields = /… (\d+) more fields/.exec(text);
    const shownFields = text.split('\n').filter((line) => line.includes('(`delivery.stops.'));
    expect(Number(fields?.[1]) + shownFields.length).toBe(200);
    expect(text).toMatch(/… 80 more related entities/);
    const warnings = /…and (\d+) more warnings/.exec(text);
    const shownWarnings = text.split('\n').filter((line) => line.startsWith('⚠️ *Breaks:*'));
    expect(Number(warnings?.[1]) + shownWarnings.length).toBe(60);
    // The step still says where it stands with its approvers.
    expect(text).toContain('0 of 1 operators approval');
  });

  it('keeps a card of 45 steps with large change sets within Slack’s limits', () => {
    const v1 = freightV1();
    const steps = Array.from({ length: 45 }, (_, i) => ({
      ...v1.plan.steps[1]!,
      id: `s${i + 1}`,
      changeSet: largeChangeSet({ fields: 40, related: 10, violated: 5 }),
    }));
    const version = { ...v1, plan: { ...v1.plan, steps }, provenance: {} };
    const card = buildApprovalCard({ run: runView(version), config: freightConfig, now: NOW });
    expect(checkMessageBlocks(card.blocks)).toEqual([]);
    expect(card.blocks.length).toBeLessThanOrEqual(50);
  });

  it('is shown in full in the arguments modal, with the arguments', () => {
    const version = withStepExtras(freightV1(), 's2', { changeSet: largeChangeSet({ fields: 120 }) });
    const step = version.plan.steps[1]!;
    const modal = buildArgumentsModal({
      runId: version.plan.runId,
      version,
      currentVersion: 1,
      step,
      config: freightConfig,
    });
    expect(checkView(modal)).toEqual([]);
    const text = mrkdwnTexts(modal.blocks)
      .map((entry) => entry.text)
      .join('\n');
    expect(text).toContain('Delivery: dl_55120');
    expect(text).toContain('New delivery date: Fri 3 Apr 2026');
    expect(text.match(/\(`delivery\.stops\.\d+\.eta`\)/g)).toHaveLength(120);
  });
});

describe('the arguments modal', () => {
  it('names run, version and step, and says when the version was superseded', () => {
    const version = withStepExtras(freightV1(), 's2', { changeSet: rescheduleChangeSet });
    const modal = buildArgumentsModal({
      runId: version.plan.runId,
      version,
      currentVersion: 3,
      step: version.plan.steps[1]!,
      config: freightConfig,
    });
    expect(modal).toMatchInlineSnapshot(`
      {
        "blocks": [
          {
            "elements": [
              {
                "text": "Run \`run-freight-1\` · version 1 · step \`s2\`. It was superseded by version 3: the card shows the current plan.",
                "type": "mrkdwn",
              },
            ],
            "type": "context",
          },
          {
            "text": {
              "text": "*2. Reschedule delivery* · \`s2\`
      ⚠️ *Breaks:* delivery stays inside the customer's booked window — booked window ends Fri 3 Apr; new date Mon 6 Apr
      ❔ *Unknown whether it keeps:* the depot is open that day
      ❔ *Unknown impact on* Customer cu_9 (observed in the data)",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "text": {
              "text": "*Arguments*
      Delivery: dl_55120
      New delivery date: Fri 3 Apr 2026",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "text": {
              "text": "*What it changes:* Delivery dl_55120 · read at version \`7\`
      • *delivery date used for the driver's route* (\`delivery.date\`): Fri 3 Apr → Mon 6 Apr
      • *note for the driver* (\`delivery.driver_note\`): _(none)_ → Call ahead
      • *morning slot* (\`delivery.slot\`): yes → _(removed)_
      _Also touches:_
      • Monday route rt_88 — written (declared by the tool): the driver's route for Monday is rebuilt
      • Customer cu_9 — *unknown* impact (observed in the data)
      • Ticket 74991 — event sent (observed in the data)
      ✅ Keeps: driver hours stay within limits",
              "type": "mrkdwn",
            },
            "type": "section",
          },
        ],
        "close": {
          "emoji": true,
          "text": "Close",
          "type": "plain_text",
        },
        "title": {
          "emoji": true,
          "text": "Step arguments",
          "type": "plain_text",
        },
        "type": "modal",
      }
    `);
  });
});

describe('the diff message and the escalation message', () => {
  it('show a touched step’s warnings and change set before the fields the edit changed', () => {
    const edit = freightEdit();
    const current = withStepExtras(edit.current, 's2', { changeSet: rescheduleChangeSet });
    const diff = buildDiffMessage({
      ...edit,
      diff: diffPlans(edit.previous.plan, current.plan),
      current,
      runId: current.plan.runId,
      editorId: 'U0FIN1',
      config: freightConfig,
      now: NOW,
    });
    expect(checkMessageBlocks(diff.blocks)).toEqual([]);
    const text = stepText(diff, 's2');
    expect(text.indexOf('⚠️ *Breaks:*')).toBeLessThan(
      text.indexOf('🎯 *Delivery dl_55120* · read at version `7`'),
    );
    expect(text.indexOf('🎯')).toBeLessThan(
      text.indexOf('New delivery date: Fri 3 Apr 2026 → Sat 4 Apr 2026'),
    );
    // The diff's own button stays: revert.
    const s2 = sections(diff).find((block) => block.text?.text === text);
    expect(s2?.accessory?.action_id).toBe('revert_step');
  });

  it('shows every step with a change set in the escalation, with its warnings and a show_args button', () => {
    const version = withStepExtras(freightV1(), 's1', { changeSet: rescheduleChangeSet });
    const message = buildEscalationMessage({
      run: runView(version),
      step: { kind: 'escalation', level: 1 },
      notified: ['U0LEAD1'],
      config: freightConfig,
      now: NOW,
    });
    expect(checkMessageBlocks(message.blocks)).toEqual([]);
    // s1 needs nobody (a note, auto) but changes the world: it is shown in full.
    const text = stepText(message, 's1');
    expect(text.split('\n')[1]).toMatch(/^⚠️ \*Breaks:\* delivery stays inside/);
    expect(text).toContain(
      "• *delivery date used for the driver's route* (`delivery.date`): Fri 3 Apr → Mon 6 Apr",
    );
    const s1 = sections(message).find((block) => block.text?.text === text);
    expect(s1?.accessory?.action_id).toBe('show_args');
  });
});

describe('a step listed in one line', () => {
  it('counts its warnings, so a step cut from the card still says it has some', () => {
    const version = withStepExtras(freightV1(), 's2', {
      changeSet: rescheduleChangeSet,
      unverified: previewTimedOut,
    });
    const step = version.plan.steps[1]!;
    const line = stepLine({
      step,
      position: 2,
      tool: toolOf(freightConfig, step.tool),
      standing: stepStanding(step),
    });
    expect(line).toBe(
      '2. Reschedule delivery · `s2` · ⚠️ 4 warnings: Move delivery dl_55120 to Fri 3 Apr — 0 of 1 operators',
    );
  });
});
