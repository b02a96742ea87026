/**
 * A real-looking journal for the freight run: submitted, validated, posted, approvals, an edit by
 * finance (adds the refund s4, moves the s2 window), a stale click, the decision and an outcome.
 * Records are built with `journalRecord`, exactly as the service writes them.
 */
import { addedRefundStep, freightPlan } from '../../examples/freight/plans.ts';
import { journalRecord, serializeRecord } from '../../src/approvals/journal.ts';
import type { JournalEvent, JournalRecord } from '../../src/approvals/types.ts';
import { diffPlans, type ValidatedPlan } from '../../src/pipeline/index.ts';
import { freightContext, NOW } from './freight.ts';
import { validateNow } from './validate-now.ts';

/** The history: the events in order, the records and their stored texts. */
export interface FreightHistory {
  readonly v1: ValidatedPlan;
  readonly v2: ValidatedPlan;
  readonly events: readonly JournalEvent[];
  readonly records: readonly JournalRecord[];
  readonly texts: string[];
}

function accepted(raw: unknown, ctx = freightContext()): ValidatedPlan {
  const result = validateNow(raw, ctx);
  if (!result.ok) throw new Error(`fixture plan should validate: ${JSON.stringify(result.diagnostics)}`);
  return result.plan;
}

/** The freight run's journal; `runId` changes the run id (and so every plan digest). */
export function freightHistory(runId = 'run-freight-1'): FreightHistory {
  const submission = freightPlan({ runId, now: NOW });
  const raw = JSON.stringify(submission);
  const v1 = accepted(raw);
  const edited = {
    ...submission,
    steps: [
      ...submission.steps.map((step) =>
        step.id === 's2' ? { ...step, args: { ...step.args, window: '2026-04-06' } } : step,
      ),
      { ...addedRefundStep, args: { ...addedRefundStep.args } },
    ],
  };
  const v2 = accepted(edited, freightContext({ edit: { editorId: 'U0FIN1', base: v1 } }));
  const digestOf = (plan: ValidatedPlan, stepId: string) => {
    const step = plan.steps.find((s) => s.id === stepId);
    if (step === undefined) throw new Error(`no step ${stepId}`);
    return step.digest;
  };

  const at = (time: string) => Date.parse(`2026-04-01T${time}Z`);
  const timeline: [number, JournalEvent, string | null][] = [
    [at('10:00:00'), { type: 'submitted', raw, agent: v1.agent, nonce: 'n-0001' }, null],
    [
      at('10:00:00'),
      {
        type: 'validated',
        version: 1,
        steps: v1.steps.map((s) => ({ id: s.id, tool: s.tool, digest: s.digest, route: s.route.kind })),
      },
      v1.digest,
    ],
    [at('10:00:01'), { type: 'posted', version: 1, channel: 'C0OPS', ts: '1775037601.000100' }, v1.digest],
    [
      at('10:01:30'),
      {
        type: 'approval',
        userId: 'U0OP1',
        version: 1,
        stepDigests: [digestOf(v1, 's2'), digestOf(v1, 's3')],
      },
      v1.digest,
    ],
    [
      at('10:02:11'),
      {
        type: 'edited',
        editor: 'U0FIN1',
        baseVersion: 1,
        version: 2,
        before: v1,
        after: v2,
        diff: diffPlans(v1, v2),
      },
      v2.digest,
    ],
    [at('10:02:12'), { type: 'posted', version: 2, channel: 'C0OPS', ts: '1775037732.000200' }, v2.digest],
    [
      at('10:02:40'),
      {
        type: 'refused',
        action: 'approve',
        version: 1,
        userId: 'U0OP2',
        reason: 'stale',
        detail: 'version 2 is current',
      },
      v2.digest,
    ],
    [
      at('10:03:05'),
      { type: 'approval', userId: 'U0OP1', version: 2, stepDigests: [digestOf(v2, 's2')] },
      v2.digest,
    ],
    [
      at('10:04:00'),
      { type: 'approval', userId: 'U0FIN2', version: 2, stepDigests: [digestOf(v2, 's4')] },
      v2.digest,
    ],
    [
      at('10:04:30'),
      { type: 'approval', userId: 'U0FIN3', version: 2, stepDigests: [digestOf(v2, 's4')] },
      v2.digest,
    ],
    [at('10:04:30'), { type: 'approved', version: 2, planDigest: v2.digest, by: 'U0FIN3' }, v2.digest],
    [at('10:04:31'), { type: 'decision_delivered', status: 'approved' }, v2.digest],
    [at('10:06:00'), { type: 'outcome', stepId: 's2', status: 'applied' }, v2.digest],
  ];

  const records: JournalRecord[] = [];
  for (const [time, event, planDigest] of timeline) {
    records.push(journalRecord(records.at(-1) ?? null, event, time, planDigest));
  }
  return { v1, v2, events: timeline.map(([, event]) => event), records, texts: records.map(serializeRecord) };
}
