import { describe, expect, it } from 'vitest';
import { describeDiff, describeEvent } from '../../src/approvals/describe-event.ts';
import type { JournalEvent } from '../../src/approvals/types.ts';
import { diffPlans, type Step } from '../../src/pipeline/index.ts';
import { freightHistory } from '../support/journal-history.ts';

const { v1, v2 } = freightHistory();
const DIGEST = '6f7ac9167e16'.padEnd(64, '0');

type EventOf<T extends JournalEvent['type']> = Extract<JournalEvent, { type: T }>;

/** One or more events per type and the line each reads as; a Record, so a new event type without a case fails to compile. */
const cases: { [T in JournalEvent['type']]: readonly (readonly [EventOf<T>, string])[] } = {
  submitted: [
    [
      { type: 'submitted', raw: '{"runId":"r"}', agent: 'freight-ops', nonce: 'n-1' },
      'submitted by agent freight-ops (13 bytes, nonce n-1)',
    ],
    [{ type: 'submitted', raw: 'é', agent: 'freight-ops' }, 'submitted by agent freight-ops (2 bytes)'],
  ],
  validated: [
    [
      {
        type: 'validated',
        version: 1,
        steps: v1.steps.map((s) => ({ id: s.id, tool: s.tool, digest: s.digest, route: s.route.kind })),
      },
      'validated v1: 3 steps (1 auto, 2 review)',
    ],
  ],
  invalid: [
    [
      {
        type: 'invalid',
        phase: 'type',
        diagnostics: [
          { phase: 'type', code: 'invalid_argument', stepId: 's2', path: ['window'], message: 'not a date' },
          { phase: 'type', code: 'missing_argument', stepId: 's3', message: 'body is required' },
        ],
      },
      'invalid at type: s2: invalid_argument: not a date (+1 more)',
    ],
    [
      {
        type: 'invalid',
        phase: 'parse',
        diagnostics: [{ phase: 'parse', code: 'no_steps', message: 'the plan has no steps' }],
      },
      'invalid at parse: no_steps: the plan has no steps',
    ],
  ],
  submission_refused: [
    [{ type: 'submission_refused', reason: 'bad signature' }, 'submission refused: bad signature'],
  ],
  posted: [[{ type: 'posted', version: 2, channel: 'C0OPS', ts: '1.2' }, 'posted v2 to C0OPS (ts 1.2)']],
  edited: [
    [
      {
        type: 'edited',
        editor: 'U0FIN1',
        baseVersion: 1,
        version: 2,
        before: v1,
        after: v2,
        diff: diffPlans(v1, v2),
      },
      'edited by U0FIN1: v1 → v2 (+1 added: s4 issue_refund; ~ s2.window 2026-04-03 → 2026-04-06)',
    ],
  ],
  edit_refused: [
    [
      { type: 'edit_refused', editor: 'U0OP1', baseVersion: 1, reason: 'may_author: s4 issue_refund' },
      'edit of v1 by U0OP1 refused: may_author: s4 issue_refund',
    ],
  ],
  approval: [
    [
      { type: 'approval', userId: 'U0OP1', version: 2, stepDigests: [DIGEST, DIGEST] },
      'approved by U0OP1 (2 steps of v2)',
    ],
    [
      {
        type: 'approval',
        userId: 'U0OP1',
        version: 2,
        steps: [
          { id: 's2', digest: DIGEST },
          { id: 's9', digest: DIGEST },
        ],
      },
      'approved by U0OP1 (2 steps of v2)',
    ],
  ],
  approved: [
    [
      { type: 'approved', version: 2, planDigest: DIGEST, by: 'U0FIN3' },
      'decision: approved v2 (last approval by U0FIN3; plan 6f7ac9167e16…)',
    ],
  ],
  rejected: [
    [
      { type: 'rejected', version: 3, userId: 'U0OP2', reason: 'wrong customer' },
      'decision: rejected v3 by U0OP2: wrong customer',
    ],
  ],
  escalated: [
    [
      { type: 'escalated', version: 1, level: 2, notified: ['U0LEAD1', 'C0ESCALATE'] },
      'escalated v1 to level 2 (notified U0LEAD1, C0ESCALATE)',
    ],
    [{ type: 'escalated', version: 1, level: 1, notified: [] }, 'escalated v1 to level 1 (nobody notified)'],
    [
      { type: 'escalated', version: 2, level: 2, repeat: 1, notified: ['U0LEAD1'] },
      'escalated v2 to level 2, repeat 1 (notified U0LEAD1)',
    ],
  ],
  reminded: [[{ type: 'reminded', version: 1 }, "reminded the card's channel about v1"]],
  expired: [[{ type: 'expired', version: 1 }, 'decision: expired v1']],
  refused: [
    [
      {
        type: 'refused',
        action: 'approve',
        version: 2,
        userId: 'U0OP2',
        reason: 'stale',
        detail: 'version 3 is current',
      },
      'refused approve by U0OP2: version 3 is current',
    ],
    [
      { type: 'refused', action: 'expire', version: 2, reason: 'already_decided', detail: '' },
      'refused expire: already_decided',
    ],
  ],
  stale_timer: [
    [
      { type: 'stale_timer', timer: 'expire', version: 1, currentVersion: 3 },
      'ignored expire timer for v1: v3 is current',
    ],
  ],
  decision_delivered: [
    [{ type: 'decision_delivered', status: 'approved' }, 'decision delivered to the agent (approved)'],
  ],
  released: [
    [
      { type: 'released', stepId: 's2', version: 1, digest: DIGEST },
      'released s2 of v1 to the agent (step 6f7ac9167e16…)',
    ],
  ],
  outcome: [
    [
      { type: 'outcome', stepId: 's4', status: 'failed', detail: 'invoice locked' },
      'outcome of s4: failed (invoice locked)',
    ],
    [{ type: 'outcome', stepId: 's2', status: 'uncertain' }, 'outcome of s2: uncertain'],
  ],
};

describe('describeEvent', () => {
  for (const [type, examples] of Object.entries(cases)) {
    it(`describes ${type} events in one line`, () => {
      for (const [event, line] of examples) {
        expect(describeEvent(event)).toBe(line);
        expect(describeEvent(event)).not.toContain('\n');
      }
    });
  }

  it('names an event type it does not know instead of failing (records from a newer version)', () => {
    const future = { type: 'teleported', version: 1 } as unknown as JournalEvent;
    expect(describeEvent(future)).toBe('teleported (event unknown to this version)');
  });
});

describe('describeDiff', () => {
  const step = (id: string, tool: string, args: Step['args']): Step => ({ id, tool, args });
  const a = step('a', 'add_note', { note: 'hello', tags: ['x'] });
  const b = step('b', 'send_reply', { body: 'Hi' });
  const c = step('c', 'issue_refund', { amount: 100 });

  it('lists removals, moves, tool changes and added or removed fields', () => {
    const before = { steps: [a, b, c] };
    // b removed; c and a swap places (the diff counts a as the one that moved); a gains fields
    const after = { steps: [c, step('a', 'add_note', { note: 'hello', tags: ['x', 'y'], pinned: true })] };
    expect(describeDiff(diffPlans(before, after))).toBe(
      '-1 removed: b send_reply; + a.tags[1] y; + a.pinned true; ↕ a position 1 → 2',
    );
    const retooled = { steps: [a, step('b', 'send_email', { subject: 'Hi' }), c] };
    expect(describeDiff(diffPlans(before, retooled))).toBe(
      '~ b tool send_reply → send_email; - b.body (was Hi); + b.subject Hi',
    );
  });

  it("says how a step's dependencies changed, even when nothing else did", () => {
    const before = { steps: [a, { ...b, dependsOn: ['a'] }] };
    expect(describeDiff(diffPlans(before, { steps: [a, b] }))).toBe('~ b depends on a → (nothing)');
    expect(
      describeDiff(diffPlans({ steps: [a, b, c] }, { steps: [a, b, { ...c, dependsOn: ['a', 'b'] }] })),
    ).toBe('~ c depends on (nothing) → a, b');
  });

  it('cuts long values and long diffs, and says when nothing changed', () => {
    expect(describeDiff(diffPlans({ steps: [a] }, { steps: [a] }))).toBe('no changes');
    const long = step('a', 'add_note', { note: `line one\n${'x'.repeat(80)}`, tags: ['x'] });
    expect(describeDiff(diffPlans({ steps: [a] }, { steps: [long] }))).toBe(
      `~ a.note hello → line one ${'x'.repeat(30)}…`,
    );
    const many = Array.from({ length: 10 }, (_, i) => step('a', 'add_note', { [`k${i}`]: i }));
    const wide = { steps: [step('a', 'add_note', Object.assign({}, ...many.map((s) => s.args)))] };
    expect(describeDiff(diffPlans({ steps: [step('a', 'add_note', {})] }, wide))).toMatch(
      /^\+ a\.k0 0; .*\+ a\.k7 7; … 2 more$/,
    );
  });
});
