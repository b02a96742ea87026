import { describe, expect, it } from 'vitest';
import {
  attributeOutcomes,
  changeKind,
  editStats,
  heavilyEdited,
  historyOf,
  insightsReport,
  type RunHistory,
  recurringEdits,
  renderMarkdown,
} from '../../src/approvals/insights/index.ts';
import type { JournalRecord } from '../../src/approvals/types.ts';
import { diffPlans, type JsonObject, stepDigest, type ValidatedPlan } from '../../src/pipeline/index.ts';

interface PlainStep {
  readonly id: string;
  readonly tool: string;
  readonly args: JsonObject;
}

function plan(runId: string, steps: readonly PlainStep[]): ValidatedPlan {
  return {
    runId,
    agent: 'freight',
    expiresAt: '2026-04-01T12:00:00.000Z',
    digest: 'd'.repeat(64),
    steps: steps.map((step) => ({
      ...step,
      digest: stepDigest(step),
      route: { kind: 'auto', rule: 'r' },
      annotations: [],
    })),
  };
}

/** A run's journal: submitted, validated (v1), each edit in turn, then a decision and outcomes. */
function journal(
  runId: string,
  v1: readonly PlainStep[],
  edits: readonly { readonly editor: string; readonly steps: readonly PlainStep[] }[],
  end: {
    readonly status?: 'approved' | 'rejected' | 'expired';
    readonly outcomes?: Readonly<Record<string, { status: 'applied' | 'failed'; metrics?: JsonObject }>>;
    readonly at?: string;
  } = {},
): JournalRecord[] {
  const at = end.at ?? '2026-04-01T10:00:00.000Z';
  const events: JournalRecord['event'][] = [
    { type: 'submitted', raw: '{}', agent: 'freight' },
    {
      type: 'validated',
      version: 1,
      steps: plan(runId, v1).steps.map(({ id, tool, digest }) => ({ id, tool, digest, route: 'auto' })),
    },
  ];
  let before = plan(runId, v1);
  edits.forEach((edit, index) => {
    const after = plan(runId, edit.steps);
    events.push({
      type: 'edited',
      editor: edit.editor,
      baseVersion: index + 1,
      version: index + 2,
      before,
      after,
      diff: diffPlans(before, after),
    } as unknown as JournalRecord['event']);
    before = after;
  });
  if (end.status !== undefined)
    events.push({ type: end.status, version: edits.length + 1 } as unknown as JournalRecord['event']);
  for (const [stepId, outcome] of Object.entries(end.outcomes ?? {})) {
    events.push({ type: 'outcome', stepId, ...outcome } as unknown as JournalRecord['event']);
  }
  const records = events.map((event, index) => ({
    seq: index + 1,
    prev_hash: '0'.repeat(64),
    plan_digest: null,
    event,
    at,
    hash: '0'.repeat(64),
  })) as JournalRecord[];
  return Object.assign(records, { runId });
}

const reschedule = (date: string): PlainStep => ({
  id: 's1',
  tool: 'reschedule_delivery',
  args: { delivery: 'dl_1', date },
});
const refund = (amount: number): PlainStep => ({
  id: 's2',
  tool: 'issue_refund',
  args: { invoice: 'in_1', amount },
});
const reply = (body: string): PlainStep => ({ id: 's3', tool: 'reply_to_customer', args: { body } });
const note: PlainStep = { id: 'n1', tool: 'add_note', args: { note: 'called the customer' } };

function history(records: JournalRecord[] & { readonly runId?: string }): RunHistory {
  const run = historyOf(records.runId ?? 'run', records);
  if (run === undefined) throw new Error('no history');
  return run;
}

describe('run history from a journal', () => {
  it('attributes each final step to the agent, the person who changed it or the person who added it', () => {
    const run = history(
      journal(
        'run',
        [reschedule('2026-04-03'), refund(100), reply('Sorry')],
        [
          { editor: 'U_ANA', steps: [reschedule('2026-04-06'), refund(100), note, reply('Sorry')] },
          {
            editor: 'U_BO',
            steps: [reschedule('2026-04-06'), refund(100), { ...note, args: { note: 'x' } }, reply('Sorry')],
          },
        ],
        { status: 'approved' },
      ),
    );
    expect(run.finalSteps.map((s) => [s.id, s.authorship])).toEqual([
      ['s1', { by: 'user', userId: 'U_ANA', change: 'changed' }],
      ['s2', { by: 'agent' }],
      // Changed later by someone else, it is still a person's added step.
      ['n1', { by: 'user', userId: 'U_BO', change: 'added' }],
      ['s3', { by: 'agent' }],
    ]);
    expect(run.status).toBe('approved');
    expect(run.edits.map((e) => e.touched)).toEqual([2, 1]);
    // v1 → final: s1 changed, n1 added, of the four ids either plan has.
    expect([run.touchedSteps, run.totalSteps]).toEqual([2, 4]);
    expect(heavilyEdited(run)).toBe(false);
  });

  it('does not count a change an edit reverted later', () => {
    const run = history(
      journal(
        'run',
        [reschedule('2026-04-03'), refund(100)],
        [
          { editor: 'U_ANA', steps: [reschedule('2026-04-06'), refund(200)] },
          { editor: 'U_ANA', steps: [reschedule('2026-04-03'), refund(200)] },
        ],
      ),
    );
    expect([run.touchedSteps, run.totalSteps]).toEqual([1, 2]);
    expect(heavilyEdited(run)).toBe(false);
  });

  it('has nothing for a run whose plan never passed validation', () => {
    const records = journal('run', [refund(1)], []).filter((r) => r.event.type === 'submitted');
    expect(historyOf('run', records)).toBeUndefined();
  });
});

describe('recurring edits', () => {
  // A corpus with known patterns: 14 of 20 edited plans get a note added before the reply; 5 get the
  // refund raised; 3 get the delivery moved later; 1 has its reply rewritten (not recurring).
  const corpus: RunHistory[] = [];
  for (let i = 0; i < 30; i++) {
    const v1 = [reschedule('2026-04-03'), refund(100), reply('Sorry')];
    if (i >= 20) {
      corpus.push(history(journal(`r${i}`, v1, [])));
      continue;
    }
    const steps = [...v1];
    if (i < 14) steps.splice(2, 0, note);
    if (i >= 14 && i < 19) steps[1] = refund(150);
    if (i >= 17 && i < 20) steps[0] = reschedule('2026-04-07');
    if (i === 19) steps[steps.length - 1] = reply('We are very sorry');
    corpus.push(history(journal(`r${i}`, v1, [{ editor: i % 2 === 0 ? 'U_ANA' : 'U_BO', steps }])));
  }

  it('groups by tool, path and kind, counts each plan once, and suggests in plain words', () => {
    const groups = recurringEdits(corpus);
    expect(groups.map((g) => [g.pattern.key, g.plans, g.editedPlans])).toEqual([
      ['added_before:add_note:reply_to_customer', 14, 20],
      ['raised:issue_refund:amount', 5, 20],
      ['later:reschedule_delivery:date', 3, 20],
    ]);
    expect(groups[0]?.suggestion).toContain(
      'in 14 of 20 edited plans an operator added `add_note` before `reply_to_customer`',
    );
    expect(groups[0]?.editors).toBe(2);
    expect(groups[0]?.examples).toHaveLength(3);
    expect(groups[1]?.examples[0]?.text).toBe('`issue_refund` amount: 100 → 150');
  });

  it('classifies value changes', () => {
    expect(changeKind(1, 2)).toBe('raised');
    expect(changeKind(2, 1)).toBe('lowered');
    expect(changeKind('2026-04-03', '2026-04-06')).toBe('later');
    expect(changeKind('2026-04-03T10:00:00Z', '2026-04-03T09:00:00Z')).toBe('earlier');
    expect(changeKind('Sorry', 'Sorry. Your refund is on its way.')).toBe('appended');
    expect(changeKind('refund', 'Full refund')).toBe('prepended');
    expect(changeKind('yes', 'no')).toBe('rewritten');
  });
});

describe('outcomes by authorship', () => {
  it('compares agent-written, edited and added steps with sums and medians of named numbers', () => {
    const runs = [
      history(
        journal('a', [refund(100), reply('x')], [], {
          status: 'approved',
          outcomes: { s2: { status: 'applied', metrics: { refund_cents: 100 } }, s3: { status: 'applied' } },
        }),
      ),
      history(
        journal(
          'b',
          [refund(100), reply('x')],
          [{ editor: 'U_ANA', steps: [refund(300), note, reply('x')] }],
          {
            status: 'approved',
            outcomes: {
              s2: { status: 'applied', metrics: { refund_cents: 300 } },
              n1: { status: 'failed' },
              s3: { status: 'applied' },
            },
          },
        ),
      ),
      history(
        journal('c', [refund(100), reply('x')], [{ editor: 'U_BO', steps: [refund(500), reply('x')] }], {
          status: 'approved',
          outcomes: { s2: { status: 'failed', metrics: { refund_cents: 500 } } },
        }),
      ),
      // Rejected and never run: not counted.
      history(journal('d', [refund(100)], [], { status: 'rejected' })),
    ];
    const groups = attributeOutcomes(runs);
    expect(groups.map((g) => [g.tool, g.authorship, g.steps, g.reported, g.applied, g.failed])).toEqual([
      ['add_note', 'added', 1, 1, 0, 1],
      ['issue_refund', 'agent', 1, 1, 1, 0],
      ['issue_refund', 'edited', 2, 2, 1, 1],
      // Run c's reply was approved but never reported on: a step, not a report.
      ['reply_to_customer', 'agent', 3, 2, 2, 0],
    ]);
    expect(groups[2]?.metrics).toEqual({ refund_cents: { count: 2, sum: 800, median: 400 } });
  });
});

describe('edit statistics and the report', () => {
  it('counts plans, edits, steps touched and heavily edited plans, most edited first', () => {
    const runs = [
      history(
        journal(
          'light',
          [refund(1), reply('x'), reschedule('2026-04-03')],
          [{ editor: 'U', steps: [refund(2), reply('x'), reschedule('2026-04-03')] }],
        ),
      ),
      history(journal('heavy', [refund(1), reply('x')], [{ editor: 'U', steps: [refund(2), reply('y')] }])),
      history(journal('untouched', [refund(1)], [])),
    ];
    const stats = editStats('freight', runs);
    expect(stats).toMatchObject({ plans: 3, edited: 2, edits: 2, heavilyEdited: 1 });
    expect(stats.heavyShare).toBeCloseTo(1 / 3);
    expect(stats.touchedPerEdit).toEqual({ mean: 1.5, median: 1.5, max: 2 });
    expect(stats.mostEdited.map((r) => r.runId)).toEqual(['heavy', 'light']);
    const report = insightsReport(runs, { since: 0, now: Date.parse('2026-04-02T00:00:00Z') });
    const text = renderMarkdown(report);
    expect(text).toContain('## Agent `freight`');
    expect(text).toContain('More than half of the steps added, changed or removed: 1 of 3 plans (33.3%)');
    expect(text).toContain('Most edited: `heavy` (2 of 2 steps), `light` (1 of 3 steps)');
  });

  it('keeps to the period and the agent asked for', () => {
    const runs = [
      history(journal('old', [refund(1)], [], { at: '2026-03-01T00:00:00.000Z' })),
      history(journal('new', [refund(1)], [], { at: '2026-04-01T00:00:00.000Z' })),
    ];
    const report = insightsReport(runs, { since: Date.parse('2026-03-15T00:00:00Z'), now: 0 });
    expect(report.runs).toBe(1);
    expect(insightsReport(runs, { since: 0, now: 0, agent: 'other' }).agents).toEqual([]);
  });
});
