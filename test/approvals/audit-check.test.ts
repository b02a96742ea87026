import { describe, expect, it } from 'vitest';
import { checkRunState, type StoredRunState } from '../../src/approvals/audit-check.ts';
import { journalRecord } from '../../src/approvals/journal.ts';
import { approvalEntry } from '../../src/approvals/run-commit.ts';
import type { ApprovalRecord, JournalEvent, JournalRecord } from '../../src/approvals/types.ts';
import {
  type Decision,
  type DecisionStatus,
  diffPlans,
  signDecision,
  type ValidatedPlan,
} from '../../src/pipeline/index.ts';
import { freightHistory } from '../support/journal-history.ts';
import { testSigning } from '../support/stack.ts';

// The freight run: v1 (s1 auto, s2 + s3 for operators), finance's edit to v2 (s2 moved, refund s4
// added for two finance approvers), U0OP1's approvals of v1 and of s2 in v2, U0FIN2 and U0FIN3 on s4.
const history = freightHistory();
const { v1, v2 } = history;
const AT = Date.parse('2026-04-01T10:04:30Z');

function digestOf(plan: ValidatedPlan, stepId: string): string {
  const step = plan.steps.find((candidate) => candidate.id === stepId);
  if (step === undefined) throw new Error(`no step ${stepId}`);
  return step.digest;
}

const planOf = (version: number) => (version === 1 ? v1 : v2);

/** Chains events the way the service does (times and plan digests do not matter to the check). */
function chain(events: readonly JournalEvent[]): JournalRecord[] {
  const records: JournalRecord[] = [];
  for (const [index, event] of events.entries()) {
    records.push(journalRecord(records.at(-1) ?? null, event, AT + index * 1000, v2.digest));
  }
  return records;
}

/** The fixture's history as the service writes it today: each approval names step ids and digests. */
function boundEvents(): JournalEvent[] {
  return history.events.map((event) => {
    if (event.type !== 'approval' || event.stepDigests === undefined) return event;
    const plan = planOf(event.version);
    return {
      type: 'approval',
      userId: event.userId,
      version: event.version,
      steps: event.stepDigests.map((digest) => ({
        id: plan.steps.find((step) => step.digest === digest)?.id ?? '?',
        digest,
      })),
    };
  });
}

/** The approvals the history's clicks stored: [userId, version, stepId]. */
const CLICKS: readonly [string, number, string][] = [
  ['U0OP1', 1, 's2'],
  ['U0OP1', 1, 's3'],
  ['U0OP1', 2, 's2'],
  ['U0FIN2', 2, 's4'],
  ['U0FIN3', 2, 's4'],
];

function bound(userId: string, version: number, stepId: string): Record<string, string> {
  const approval: ApprovalRecord = {
    stepId,
    stepDigest: digestOf(planOf(version), stepId),
    userId,
    version,
    at: AT,
  };
  return approvalEntry(approval);
}

/** An approvals entry as stored before approvals were bound to step ids. */
function legacy(userId: string, version: number, stepId: string): Record<string, string> {
  const stepDigest = digestOf(planOf(version), stepId);
  return { [`${stepDigest}|${userId}`]: JSON.stringify({ stepDigest, userId, version, at: AT }) };
}

/** The signed decision for v2, with the approvals it counts per step id. */
function decisionText(
  counted: Readonly<Record<string, readonly string[]>>,
  overrides: { status?: DecisionStatus; version?: number; decidedBy?: string; plan?: ValidatedPlan } = {},
): string {
  const plan = overrides.plan ?? v2;
  const decision: Decision = signDecision(
    {
      runId: plan.runId,
      agent: plan.agent,
      status: overrides.status ?? 'approved',
      version: overrides.version ?? 2,
      plan: {
        runId: plan.runId,
        agent: plan.agent,
        expiresAt: plan.expiresAt,
        digest: plan.digest,
        steps: plan.steps.map((step) => ({
          id: step.id,
          tool: step.tool,
          args: step.args,
          digest: step.digest,
          route: step.route.kind,
          approvals: (counted[step.id] ?? []).map((userId) => ({ userId, at: new Date(AT).toISOString() })),
          provenance: { by: 'agent', userId: null, version: 1, change: null },
        })),
      },
      decidedAt: new Date(AT).toISOString(),
      decidedBy: overrides.decidedBy ?? 'U0FIN3',
      reason: null,
      phase: null,
      diagnostics: [],
      configDigest: 'c'.repeat(64),
    },
    testSigning.signer,
  );
  return JSON.stringify(decision);
}

const COUNTED = { s2: ['U0OP1'], s3: ['U0OP1'], s4: ['U0FIN2', 'U0FIN3'] };

function state(overrides: Partial<StoredRunState> = {}): StoredRunState {
  return {
    run: { rev: '12', status: 'approved', decided_by: 'U0FIN3', version: '2' },
    approvals: Object.assign({}, ...CLICKS.map((click) => bound(...click))),
    decision: decisionText(COUNTED),
    ...overrides,
  };
}

const boundRecords = chain(boundEvents());
const legacyRecords = history.records;
const s4 = digestOf(v2, 's4');

function messages(records: readonly JournalRecord[], stored: StoredRunState): string[] {
  return checkRunState(records, stored).findings.map((finding) => `${finding.code}: ${finding.message}`);
}

describe('checkRunState: state the service wrote', () => {
  it('finds nothing when every approval, the decision and the status have their journal records', () => {
    expect(checkRunState(boundRecords, state())).toEqual({
      findings: [],
      approvals: 5,
      decision: { status: 'approved', version: 2, by: 'U0FIN3', planDigest: v2.digest },
      status: 'approved',
    });
  });

  it('finds nothing for approvals stored before they named step ids, with their digest-only records', () => {
    const approvals = Object.assign({}, ...CLICKS.map((click) => legacy(...click)));
    expect(checkRunState(legacyRecords, state({ approvals })).findings).toEqual([]);
  });

  it('finds nothing for a run that kept older approvals and took new ones after an upgrade', () => {
    // v1's approvals were stored the old way; v2's with step ids.
    const today = boundEvents();
    const events = history.events.map((event, index) =>
      event.type === 'approval' && event.version === 2 ? today[index]! : event,
    );
    const approvals = Object.assign(
      {},
      ...CLICKS.map(([userId, version, stepId]) =>
        version === 1 ? legacy(userId, version, stepId) : bound(userId, version, stepId),
      ),
    );
    expect(checkRunState(chain(events), state({ approvals })).findings).toEqual([]);
  });

  it('finds nothing for a pending run and for a journal with no stored state beside it', () => {
    const pending = boundEvents().slice(0, 8); // up to U0OP1's approval of v2
    const approvals = Object.assign(
      {},
      bound('U0OP1', 1, 's2'),
      bound('U0OP1', 1, 's3'),
      bound('U0OP1', 2, 's2'),
    );
    expect(
      checkRunState(chain(pending), { run: { rev: '6', status: 'pending' }, approvals, decision: null }),
    ).toEqual({ findings: [], approvals: 3, decision: null, status: 'pending' });
    expect(checkRunState(boundRecords, { run: {}, approvals: {}, decision: null })).toEqual({
      findings: [],
      approvals: 0,
      decision: null,
      status: null,
    });
  });

  it.each([
    ['rejected', { type: 'rejected', version: 2, userId: 'U0OP2', reason: 'wrong invoice' }, 'U0OP2'],
    ['expired', { type: 'expired', version: 2 }, 'timer'],
  ] as const)('finds nothing for a run that ended %s', (status, terminal, by) => {
    const events = [...boundEvents().slice(0, 9), terminal];
    const approvals = Object.assign({}, ...CLICKS.slice(0, 4).map((click) => bound(...click)));
    const decision = decisionText(
      { s2: ['U0OP1'], s3: ['U0OP1'], s4: ['U0FIN2'] },
      { status, decidedBy: by },
    );
    expect(
      checkRunState(chain(events), { run: { rev: '9', status, decided_by: by }, approvals, decision })
        .findings,
    ).toEqual([]);
  });

  it('finds nothing for a submission decided invalid', () => {
    const records = chain([
      { type: 'submitted', raw: '{}', agent: 'freight-ops' },
      { type: 'invalid', phase: 'parse', diagnostics: [] },
    ]);
    const decision = JSON.stringify({
      ...JSON.parse(decisionText({})),
      status: 'invalid',
      version: null,
      plan: null,
      decidedBy: null,
    });
    expect(
      checkRunState(records, { run: { rev: '1', status: 'invalid' }, approvals: {}, decision }).findings,
    ).toEqual([]);
  });
});

describe('checkRunState: approvals written around the service', () => {
  it('reports a forged approvals entry, naming the user, the step, its digest, the version and the field', () => {
    const forged = bound('U0FIN1', 2, 's4');
    expect(messages(boundRecords, state({ approvals: { ...state().approvals, ...forged } }))).toEqual([
      `approval_without_record: approval by U0FIN1 of step s4 (digest ${s4.slice(0, 12)}…) at version 2 has no journal record (approvals field "s4|${s4}|U0FIN1")`,
    ]);
  });

  it('reports a forged entry in the old format, naming the steps it stands for', () => {
    const forged = legacy('U0FIN1', 2, 's4');
    expect(messages(legacyRecords, state({ approvals: { ...state().approvals, ...forged } }))).toContain(
      `approval_without_record: approval by U0FIN1 of step s4 (digest ${s4.slice(0, 12)}…), a record without a step id, at version 2 has no journal record (approvals field "${s4}|U0FIN1")`,
    );
  });

  it.each([
    ['another user', { stepId: 's4', stepDigest: s4, userId: 'U0FIN1', version: 2 }],
    ['another version', { stepId: 's4', stepDigest: s4, userId: 'U0FIN2', version: 3 }],
    ['another step id with the same digest', { stepId: 's5', stepDigest: s4, userId: 'U0FIN2', version: 2 }],
    [
      'the same step at another digest',
      { stepId: 's2', stepDigest: digestOf(v1, 's2'), userId: 'U0OP1', version: 2 },
    ],
  ])('does not let a journal record for %s vouch for an entry', (_, approval) => {
    const forged = approvalEntry({ ...approval, at: AT });
    const findings = checkRunState(boundRecords, state({ approvals: forged })).findings;
    expect(findings.map((finding) => finding.code)).toEqual(['approval_without_record']);
  });

  it('does not let a record that names step ids vouch for an entry in the old format, nor the reverse', () => {
    expect(
      messages(boundRecords, state({ approvals: legacy('U0FIN2', 2, 's4') })).map((m) => m.split(':')[0]),
    ).toEqual(['approval_without_record']);
    expect(
      messages(legacyRecords, state({ approvals: bound('U0FIN2', 2, 's4') })).map((m) => m.split(':')[0]),
    ).toEqual(['approval_without_record']);
  });

  it('reports each counted approval of the decision that has no journal record', () => {
    const decision = decisionText({ ...COUNTED, s4: ['U0FIN2', 'U0FIN1'] });
    expect(messages(boundRecords, state({ decision }))).toEqual([
      `decision_approval_without_record: the decision counts an approval by U0FIN1 of step s4 (digest ${s4.slice(0, 12)}…) at 2026-04-01T10:04:30.000Z that has no journal record`,
    ]);
  });

  it('does not count an approval of a step at an earlier digest for the step as decided', () => {
    // U0OP1's v2 approval of s2 removed: only the v1 one (s2's old window) remains.
    const events = boundEvents().filter(
      (event) => !(event.type === 'approval' && event.userId === 'U0OP1' && event.version === 2),
    );
    expect(messages(chain(events), state()).map((m) => m.split(':')[0])).toEqual([
      'approval_without_record', // the stored v2 entry
      'decision_approval_without_record', // s2 in the decision
    ]);
  });

  it('binds a digest-only approval record to the step ids its version had at that digest', () => {
    // A step s5 identical to s4 but added in v3 shares s4's digest; U0FIN2 approved s4 in v2 only.
    const s5 = { ...v2.steps.find((step) => step.id === 's4')!, id: 's5' };
    const v3: ValidatedPlan = { ...v2, digest: '3'.repeat(64), steps: [...v2.steps, s5] };
    const events: JournalEvent[] = [
      ...history.events.slice(0, 10),
      {
        type: 'edited',
        editor: 'U0FIN1',
        baseVersion: 2,
        version: 3,
        before: v2,
        after: v3,
        diff: diffPlans(v2, v3),
      },
      { type: 'approved', version: 3, planDigest: v3.digest, by: 'U0FIN3' },
    ];
    const decision = decisionText({ ...COUNTED, s5: ['U0FIN2', 'U0FIN3'] }, { version: 3, plan: v3 });
    const approvals = Object.assign({}, ...CLICKS.map((click) => legacy(...click)));
    expect(
      messages(chain(events), state({ approvals, decision })).map((m) => m.replace(/\(digest \w+…\)/, '(…)')),
    ).toEqual([
      'decision_approval_without_record: the decision counts an approval by U0FIN2 of step s5 (…) at 2026-04-01T10:04:30.000Z that has no journal record',
      'decision_approval_without_record: the decision counts an approval by U0FIN3 of step s5 (…) at 2026-04-01T10:04:30.000Z that has no journal record',
    ]);
  });
});

describe('checkRunState: the decision and the status', () => {
  it.each([
    ['another status', { status: 'rejected', decidedBy: 'U0FIN3' }, 'rejected v2 by U0FIN3'],
    ['another decider', { decidedBy: 'U0OP1' }, `approved v2 by U0OP1 (plan ${v2.digest.slice(0, 12)}…)`],
    ['another version', { version: 3 }, `approved v3 by U0FIN3 (plan ${v2.digest.slice(0, 12)}…)`],
    ['another plan', { plan: v1, version: 2 }, `approved v2 by U0FIN3 (plan ${v1.digest.slice(0, 12)}…)`],
  ] as const)('reports a stored decision with %s than the journal records', (_, overrides, described) => {
    const decision = decisionText({}, overrides);
    const findings = messages(boundRecords, state({ decision })).filter((m) =>
      m.startsWith('decision_without_record'),
    );
    expect(findings).toEqual([
      `decision_without_record: the stored decision (${described}) has no journal record: the journal records approved v2 by U0FIN3 (plan ${v2.digest.slice(0, 12)}…) (#11)`,
    ]);
  });

  it('reports a decision when the journal records none', () => {
    const events = boundEvents().filter((event) => event.type !== 'approved');
    expect(messages(chain(events), state()).filter((m) => m.startsWith('decision_'))).toEqual([
      `decision_without_record: the stored decision (approved v2 by U0FIN3 (plan ${v2.digest.slice(0, 12)}…)) has no journal record: the journal records no decision`,
    ]);
  });

  it('reports a run-hash status the journal does not record, and a pending status after a decision', () => {
    const undecided = chain(boundEvents().slice(0, 10));
    expect(messages(undecided, state({ decision: null }))).toEqual([
      'status_without_record: the run hash says status approved (decided by U0FIN3), which has no journal record: the journal records no decision',
    ]);
    expect(messages(boundRecords, state({ run: { rev: '13', status: 'pending' }, decision: null }))).toEqual([
      `status_without_record: the run hash says status pending, but the journal records approved v2 by U0FIN3 (plan ${v2.digest.slice(0, 12)}…) (#11)`,
    ]);
    expect(
      messages(boundRecords, state({ run: { rev: '13', status: 'approved', decided_by: 'U0OP1' } })),
    ).toEqual([
      `status_without_record: the run hash says status approved (decided by U0OP1), which has no journal record: the journal records approved v2 by U0FIN3 (plan ${v2.digest.slice(0, 12)}…) (#11)`,
    ]);
  });

  it('reports a journal with two decisions', () => {
    const events = [
      ...boundEvents(),
      { type: 'rejected', version: 2, userId: 'U0OP2', reason: 'no' } as const,
    ];
    expect(messages(chain(events), state())).toEqual([
      `conflicting_decisions: the journal records 2 decisions: approved v2 by U0FIN3 (plan ${v2.digest.slice(0, 12)}…) (#11); rejected v2 by U0OP2 (#14)`,
    ]);
  });
});

describe('checkRunState: unreadable state', () => {
  it('reports unreadable approvals, decision and events instead of failing', () => {
    const records = chain([
      ...boundEvents().slice(0, 3),
      { type: 'approval', userId: 'U0OP1', version: 'one' } as unknown as JournalEvent,
    ]);
    expect(
      messages(records, {
        run: { rev: '4', status: 'pending' },
        approvals: { 'x|U0OP1': 'not json', 'y|U0OP1': '{"userId":"U0OP1"}' },
        decision: '{"status":"maybe"}',
      }),
    ).toEqual([
      'event_unreadable: journal record #4 (approval) is not a readable approval event: version: Invalid input: expected number, received string',
      expect.stringMatching(
        /^approval_unreadable: approvals field "x\|U0OP1" is not an approval: not JSON: /,
      ),
      'approval_unreadable: approvals field "y|U0OP1" is not an approval: stepDigest: Invalid input: expected string, received undefined',
      'decision_unreadable: the stored decision is not a decision: status: Invalid option: expected one of "approved"|"rejected"|"expired"|"invalid"',
    ]);
  });
});

describe('checkRunState: messages', () => {
  it('quotes a stored value that is not a plain id, so a forged entry cannot add a line to the report', () => {
    const userId = 'U0FIN9\njournal of run run-freight-1: OK';
    const forged = approvalEntry({ stepId: 's4', stepDigest: s4, userId, version: 2, at: AT });
    const [finding] = checkRunState(boundRecords, state({ approvals: forged })).findings;
    expect(finding?.message).toMatch(/^approval by "U0FIN9\\njournal of run run-freight-1: OK" of step s4 /);
    expect(finding?.message).not.toContain('\n');
  });
});
