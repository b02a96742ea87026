/**
 * A person's inbox: the pure sorting of runs (who can act is the guard's answer), and `inboxFor` over
 * runs stored in a real Redis by the approvals service.
 */
import { afterAll, describe, expect, it } from 'vitest';
import config from '../../examples/freight/countersign.config.ts';
import { freightPlan } from '../../examples/freight/plans.ts';
import type { RunState } from '../../src/approvals/guard.ts';
import { concernedUsers, concernOf, inboxPlace } from '../../src/approvals/inbox.ts';
import { ApprovalService } from '../../src/approvals/service.ts';
import { testRedis } from '../helpers/redis.ts';
import { testSigning } from '../support/stack.ts';
import { freightConfig, freightV1, NOW, runView } from '../views/fixtures.ts';

function state(overrides: Partial<RunState['fields']> = {}, approvals: RunState['approvals'] = []): RunState {
  const run = runView(freightV1());
  return {
    runId: run.runId,
    current: run.current,
    approvals,
    fields: {
      agent: run.agent,
      status: 'pending',
      version: 1,
      createdAt: NOW,
      expiresAt: Date.parse(run.current.plan.expiresAt),
      escalationLevel: 0,
      escalatedTo: [],
      journalSeq: 2,
      journalHead: '',
      planDigest: run.current.plan.digest,
      submissionDigest: '',
      ...overrides,
    },
  };
}

describe('inboxPlace', () => {
  it('puts a pending run under "waiting" for a member who may approve its steps, with those steps', () => {
    expect(inboxPlace(freightConfig, state(), 'U0OP1', NOW)).toMatchObject({
      place: 'waiting',
      entry: { stepsToApprove: ['s2', 's3'], mayAct: true, status: 'pending' },
    });
  });

  it('leaves it out for someone in no group the plan needs, and once the member approved every step of theirs', () => {
    expect(inboxPlace(freightConfig, state(), 'U0FIN1', NOW)).toBeUndefined();
    const run = state();
    const approvals = run.current.plan.steps
      .filter((step) => step.route.kind === 'review')
      .map((step) => ({ stepId: step.id, stepDigest: step.digest, userId: 'U0OP1', at: NOW, version: 1 }));
    expect(inboxPlace(freightConfig, state({}, approvals), 'U0OP1', NOW)).toBeUndefined();
  });

  it('puts a run escalated to someone under "escalated", saying whether they may act', () => {
    const escalated = state({
      escalatedTo: ['U0LEAD1'],
      escalatedLevels: { U0LEAD1: [1] },
      escalationLevel: 1,
    });
    const placed = inboxPlace(freightConfig, escalated, 'U0LEAD1', NOW);
    expect(placed?.place).toBe('escalated');
    const notifiedOnly = inboxPlace({ ...freightConfig, escalation: {} }, escalated, 'U0LEAD1', NOW);
    expect(notifiedOnly).toMatchObject({ place: 'escalated', entry: { mayAct: false, stepsToApprove: [] } });
  });

  it('puts a decided run under "decided" for the people it concerned, and for nobody else', () => {
    const decided = state({ status: 'approved', decidedBy: 'U0OP1', decidedAt: NOW + 1000 });
    expect(inboxPlace(freightConfig, decided, 'U0OP2', NOW)).toMatchObject({
      place: 'decided',
      entry: { status: 'approved', decidedBy: 'U0OP1', mayAct: false },
    });
    expect(inboxPlace(freightConfig, decided, 'U0FIN1', NOW)).toBeUndefined();
  });

  it('shows a pending run past its expiry nowhere: nobody can act on it any more', () => {
    const run = state();
    expect(inboxPlace(freightConfig, run, 'U0OP1', run.fields.expiresAt)).toBeUndefined();
  });
});

describe('concernedUsers', () => {
  it('names the members of the groups the steps need, the escalated people, approvers and the decider', () => {
    const run = state({ escalatedTo: ['U0LEAD1'], status: 'rejected', decidedBy: 'U0FIN9' }, [
      { stepId: 's2', stepDigest: 'x', userId: 'U0OP2', at: NOW, version: 1 },
    ]);
    expect(concernedUsers(freightConfig, concernOf(run)).sort()).toEqual([
      'U0FIN9',
      'U0LEAD1',
      'U0OP1',
      'U0OP2',
    ]);
    // The expiry timer is not a person.
    expect(
      concernedUsers(freightConfig, concernOf(state({ status: 'expired', decidedBy: 'timer' }))),
    ).not.toContain('timer');
  });
});

describe('ApprovalQueries.inboxFor on Redis', () => {
  const { redis, prefix, cleanup } = testRedis('inbox');
  afterAll(cleanup);
  let now = Date.parse('2026-04-01T10:00:00Z');
  const svc = new ApprovalService({
    redis,
    config,
    prefix,
    signer: testSigning.signer,
    clock: () => now,
    deliver: async () => {},
  });
  const submit = async (runId: string, expiresInMs?: number) => {
    const raw = JSON.stringify(
      freightPlan({ runId, now, ...(expiresInMs === undefined ? {} : { expiresInMs }) }),
    );
    expect((await svc.submitPlan({ runId, agent: 'freight-ops', raw })).kind).toBe('pending');
  };

  it('lists waiting runs soonest expiry first, moves an approved one to "decided", and says where one run stands', async () => {
    await submit('inbox-late', 3 * 3600_000);
    await submit('inbox-soon', 3600_000);
    let inbox = await svc.inboxFor('U0OP1');
    expect(inbox.waiting.map((entry) => entry.runId)).toEqual(['inbox-soon', 'inbox-late']);
    expect(inbox.decided).toEqual([]);

    now += 60_000;
    expect((await svc.approve({ runId: 'inbox-soon', version: 1, userId: 'U0OP1' })).kind).toBe('approved');
    inbox = await svc.inboxFor('U0OP1');
    expect(inbox.waiting.map((entry) => entry.runId)).toEqual(['inbox-late']);
    expect(inbox.decided).toMatchObject([{ runId: 'inbox-soon', status: 'approved', decidedBy: 'U0OP1' }]);
    expect((await svc.inboxFor('U0FIN1')).waiting).toEqual([]);

    expect(await svc.inboxEntryFor('inbox-late', 'U0OP2')).toMatchObject({
      mayAct: true,
      stepsToApprove: ['s2', 's3'],
    });
    expect(await svc.inboxEntryFor('no-such-run', 'U0OP2')).toBeUndefined();
    // Someone in no group the run concerns nor any group at all cannot look it up by id.
    expect(await svc.inboxEntryFor('inbox-late', 'U0STRANGER')).toBeUndefined();
    expect(await svc.inboxEntryFor('inbox-late', 'U0FIN1')).toMatchObject({
      mayAct: false,
      stepsToApprove: [],
    });
    const both = await svc.inboxesFor(['U0OP1', 'U0OP2']);
    expect(both.get('U0OP2')?.waiting.map((entry) => entry.runId)).toEqual(['inbox-late']);
    expect(both.get('U0OP2')?.decided.map((entry) => entry.runId)).toEqual(['inbox-soon']);
  });
});
