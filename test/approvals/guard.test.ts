/** The guard answers every "may I?" once; these are its answers for edits and approvals, without Redis. */
import { describe, expect, it } from 'vitest';
import { approveRights, checkAction, editRights, type RunState } from '../../src/approvals/guard.ts';
import type { RunSnapshot } from '../../src/approvals/store.ts';
import { freightConfig, freightV1, NOW, runView } from '../views/fixtures.ts';

/** The freight run as the guard reads it, optionally escalated to people at level 1 or 2. */
function state(escalatedTo: readonly string[] = [], level = 1): RunState {
  const run = runView(freightV1(), { escalatedTo, escalationLevel: level });
  return {
    runId: run.runId,
    current: run.current,
    approvals: [],
    fields: {
      agent: run.agent,
      status: 'pending',
      version: 1,
      createdAt: NOW,
      expiresAt: Date.parse(run.current.plan.expiresAt),
      escalationLevel: level,
      escalatedTo,
      escalatedLevels: Object.fromEntries(escalatedTo.map((user) => [user, [level]])),
      journalSeq: 2,
      journalHead: '',
      planDigest: run.current.plan.digest,
      submissionDigest: '',
    },
  };
}

describe('editRights', () => {
  it('lets group members edit, and refuses people in no group', () => {
    expect(editRights(freightConfig, state(), 'U0OP1')).toEqual({ ok: true });
    expect(editRights(freightConfig, state(), 'U0NOBODY')).toEqual({
      ok: false,
      reason: 'you are in no group that may edit plans',
    });
  });

  it('lets someone the run was escalated to edit only when their level grants something', () => {
    // The freight config's levels grant approvals; a config level without `may` only notifies.
    expect(editRights(freightConfig, state(['U0NOBODY']), 'U0NOBODY')).toEqual({ ok: true });
    const notifiedOnly = { ...freightConfig, escalation: {} };
    expect(editRights(notifiedOnly, state(['U0NOBODY']), 'U0NOBODY').ok).toBe(false);
  });
});

describe('approveRights', () => {
  it('names the steps a member may approve, and explains a refusal naming the groups that may', () => {
    const rights = approveRights(freightConfig, state(), 'U0OP1');
    expect(rights.ok && rights.eligible.map((step) => step.id)).toEqual(['s2', 's3']);
    expect(approveRights(freightConfig, state(), 'U0FIN1')).toEqual({
      ok: false,
      reason: 'only members of operators can approve this plan',
    });
  });
});

describe('checkAction', () => {
  const snapshot = (run: RunState): RunSnapshot => ({
    rev: '3',
    fields: run.fields,
    current: run.current,
    approvals: run.approvals,
    outcomes: {},
  });

  it('answers in order: unknown, decided, expired, stale, open', () => {
    const run = state();
    const expiresAt = run.fields.expiresAt;
    expect(
      checkAction(freightConfig, { rev: '0', approvals: [], outcomes: {} }, { runId: 'x', version: 1 }, NOW),
    ).toEqual({
      kind: 'closed',
      answer: { kind: 'not_found', runId: 'x' },
    });
    const decided = snapshot({ ...run, fields: { ...run.fields, status: 'rejected', decidedBy: 'U0OP1' } });
    expect(checkAction(freightConfig, decided, { runId: run.runId, version: 1 }, NOW)).toMatchObject({
      kind: 'closed',
      answer: { kind: 'already_decided', status: 'rejected', by: 'U0OP1' },
    });
    expect(
      checkAction(freightConfig, snapshot(run), { runId: run.runId, version: 1 }, expiresAt),
    ).toMatchObject({
      kind: 'expired',
    });
    expect(checkAction(freightConfig, snapshot(run), { runId: run.runId, version: 2 }, NOW)).toMatchObject({
      kind: 'stale',
      currentVersion: 1,
    });
    expect(checkAction(freightConfig, snapshot(run), { runId: run.runId, version: 1 }, NOW)).toMatchObject({
      kind: 'open',
    });
  });
});
