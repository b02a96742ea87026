import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import config from '../../examples/freight/countersign.config.ts';
import { addedRefundStep, freightPlan } from '../../examples/freight/plans.ts';
import { verifyJournal } from '../../src/approvals/journal.ts';
import { ApprovalService } from '../../src/approvals/service.ts';
import type { UseCaseResult } from '../../src/approvals/types.ts';
import { type Decision, receiptKeysOf, verifyDecisionStep, verifyReceipt } from '../../src/pipeline/index.ts';
import { testRedis } from '../helpers/redis.ts';
import { testSigning } from '../support/stack.ts';

const SECRET = 'freight-secret-for-tests-0123456789';
const KEYS = receiptKeysOf(testSigning.publicKeys);
const { redis, prefix, cleanup } = testRedis('approvals');
afterAll(cleanup);

let now = Date.parse('2026-04-01T10:00:00Z');
let delivered: Decision[] = [];
let runCounter = 0;

function service(overrides: { clock?: () => number } = {}) {
  return new ApprovalService({
    redis,
    config,
    prefix,
    signer: testSigning.signer,
    clock: overrides.clock ?? (() => now),
    deliver: async (decision) => {
      delivered.push(decision);
    },
  });
}

beforeEach(() => {
  now = Date.parse('2026-04-01T10:00:00Z');
  delivered = [];
});

async function submitFreight(svc = service(), options: { expiresInMs?: number } = {}) {
  const runId = `run-${++runCounter}`;
  const raw = JSON.stringify(freightPlan({ runId, now, ...options }));
  const result = await svc.submitPlan({ runId, agent: 'freight-ops', raw });
  expect(result.kind).toBe('pending');
  return { runId, raw, svc };
}

function expectKind<K extends UseCaseResult['kind']>(
  result: UseCaseResult,
  kind: K,
): Extract<UseCaseResult, { kind: K }> {
  expect(result.kind, JSON.stringify(result).slice(0, 400)).toBe(kind);
  return result as Extract<UseCaseResult, { kind: K }>;
}

describe('submitPlan', () => {
  it('stores v1 pending with routes and journals submitted + validated', async () => {
    const { runId, svc } = await submitFreight();
    const run = await svc.getRun(runId);
    expect(run?.status).toBe('pending');
    expect(run?.version).toBe(1);
    expect(run?.awaiting.map((a) => [a.stepId, a.group, a.have, a.need])).toEqual([
      ['s2', 'operators', 0, 1],
      ['s3', 'operators', 0, 1],
    ]);
    const journal = await redis.lrange(svc.keys.forRun(runId).journal, 0, -1);
    expect(journal.map((r) => JSON.parse(r).event.type)).toEqual(['submitted', 'validated']);
    expect(verifyJournal(journal).ok).toBe(true);
  });

  it('is idempotent for the same text and refuses different text under the same run id', async () => {
    const { runId, raw, svc } = await submitFreight();
    expect((await svc.submitPlan({ runId, agent: 'freight-ops', raw })).kind).toBe('duplicate');
    const other = raw.replace('2026-04-03', '2026-04-04');
    expect(await svc.submitPlan({ runId, agent: 'freight-ops', raw: other })).toEqual({
      kind: 'run_exists',
      runId,
    });
    const journal = await redis.lrange(svc.keys.forRun(runId).journal, 0, -1);
    expect(journal).toHaveLength(2);
  });

  it('decides an invalid plan at once and delivers an invalid decision with the diagnostics', async () => {
    const svc = service();
    const runId = 'run-invalid';
    const plan = freightPlan({ runId, now });
    const raw = JSON.stringify({
      ...plan,
      steps: [{ tool: 'issue_refund', args: { invoice_id: 'in_74119', amount: 'twenty' } }],
    });
    const result = expectKind(await svc.submitPlan({ runId, agent: 'freight-ops', raw }), 'invalid');
    expect(result.phase).toBe('type');
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({
      runId,
      status: 'invalid',
      phase: 'type',
      version: null,
      plan: null,
    });
    expect(verifyReceipt(delivered[0]!, KEYS).ok).toBe(true);
  });

  it('answers reads, clicks and timers on a run refused as invalid (it has no version) instead of throwing', async () => {
    const svc = service();
    const runId = 'run-invalid-then-clicked';
    const plan = freightPlan({ runId, now });
    const raw = JSON.stringify({ ...plan, steps: [{ tool: 'issue_refund', args: { amount: 'twenty' } }] });
    expectKind(await svc.submitPlan({ runId, agent: 'freight-ops', raw }), 'invalid');
    expect(await svc.getRun(runId)).toBeUndefined();
    expectKind(await svc.approve({ runId, version: 1, userId: 'U0OP1' }), 'not_found');
    expectKind(await svc.reject({ runId, version: 1, userId: 'U0OP1', reason: 'no' }), 'not_found');
    expectKind(await svc.expire({ runId, version: 1 }), 'not_found');
    expect((await svc.recordOutcome({ runId, stepId: 's1', status: 'applying' })).kind).toBe('not_found');
    expect((await svc.getDecision(runId))?.status).toBe('invalid');
  });

  it('answers the same invalid text again as it did the first time (a retried intake job), and other text with run_exists', async () => {
    const svc = service();
    const runId = 'run-invalid-resubmitted';
    const plan = freightPlan({ runId, now });
    const raw = JSON.stringify({ ...plan, steps: [{ tool: 'issue_refund', args: { amount: 'twenty' } }] });
    const first = expectKind(await svc.submitPlan({ runId, agent: 'freight-ops', raw }), 'invalid');
    const again = expectKind(await svc.submitPlan({ runId, agent: 'freight-ops', raw }), 'invalid');
    expect(again).toEqual(first);
    expect(delivered).toHaveLength(1);
    expect(await svc.submitPlan({ runId, agent: 'freight-ops', raw: `${raw} ` })).toEqual({
      kind: 'run_exists',
      runId,
    });
  });

  it('approves a plan of only auto steps without a card', async () => {
    const svc = service();
    const runId = 'run-auto';
    const plan = freightPlan({ runId, now });
    const raw = JSON.stringify({ ...plan, steps: [plan.steps[0]] });
    const result = expectKind(await svc.submitPlan({ runId, agent: 'freight-ops', raw }), 'approved');
    expect(result.decision.decidedBy).toBe('policy');
    expect(delivered.map((d) => d.status)).toEqual(['approved']);
  });

  it('refuses a text whose runId differs from the signed one', async () => {
    const svc = service();
    const raw = JSON.stringify(freightPlan({ runId: 'run-a', now }));
    const result = expectKind(await svc.submitPlan({ runId: 'run-b', agent: 'freight-ops', raw }), 'invalid');
    expect(result.diagnostics[0]?.message).toMatch(/does not match the signed submission/);
  });
});

describe('approve', () => {
  it('an operator approves the review steps; the agent gets a signed decision that verifies step by step', async () => {
    const { runId, svc } = await submitFreight();
    const result = expectKind(await svc.approve({ runId, version: 1, userId: 'U0OP1' }), 'approved');
    expect(result.run.status).toBe('approved');
    expect(delivered).toHaveLength(1);
    const decision = delivered[0]!;
    expect(decision.plan?.steps.map((s) => [s.id, s.approvals.map((a) => a.userId)])).toEqual([
      ['s1', []],
      ['s2', ['U0OP1']],
      ['s3', ['U0OP1']],
    ]);
    expect(decision.configDigest).toBe(config.digest);
    for (const step of decision.plan!.steps)
      expect(verifyDecisionStep(decision, step, KEYS, now)).toMatchObject({ ok: true });
    expect(await svc.getDecision(runId)).toEqual(decision);
  });

  it('refuses someone outside the required groups with an explanation and changes nothing', async () => {
    const { runId, svc } = await submitFreight();
    const result = expectKind(await svc.approve({ runId, version: 1, userId: 'U0FIN1' }), 'unauthorized');
    expect(result.reason).toBe('only members of operators can approve this plan');
    expect((await svc.getRun(runId))?.approvals).toEqual([]);
  });

  it('a double click changes nothing twice', async () => {
    const { runId, svc } = await submitFreight();
    await svc.approve({ runId, version: 1, userId: 'U0OP1' });
    const again = expectKind(await svc.approve({ runId, version: 1, userId: 'U0OP1' }), 'already_decided');
    expect(again.by).toBe('U0OP1');
    expect(delivered).toHaveLength(1);
  });

  it('refuses a click after expiry even when no timer fired, and expires the run', async () => {
    const { runId, svc } = await submitFreight(undefined, { expiresInMs: 60_000 });
    now += 61_000;
    const result = expectKind(await svc.approve({ runId, version: 1, userId: 'U0OP1' }), 'expired');
    expect(result.decision?.status).toBe('expired');
    expect(delivered.map((d) => d.status)).toEqual(['expired']);
  });

  it('counts distinct finance approvers and bars the author of the refund', async () => {
    const { runId, svc } = await submitFreight();
    const base = (await svc.getRun(runId))!.current.plan;
    const steps = [...base.steps.map(({ id, tool, args }) => ({ id, tool, args })), addedRefundStep];
    const edited = expectKind(
      await svc.applyEdit({ runId, baseVersion: 1, editorId: 'U0FIN1', steps }),
      'edited',
    );
    expect(edited.run.version).toBe(2);
    expect(edited.diff.touchedStepIds).toEqual(['s4']);

    const byAuthor = expectKind(await svc.approve({ runId, version: 2, userId: 'U0FIN1' }), 'unauthorized');
    expect(byAuthor.reason).toMatch(/you wrote s4/);
    const first = expectKind(await svc.approve({ runId, version: 2, userId: 'U0FIN2' }), 'awaiting');
    expect(first.run.awaiting.find((a) => a.stepId === 's4')).toMatchObject({ have: 1, need: 2 });
    await svc.approve({ runId, version: 2, userId: 'U0OP1' });
    const done = expectKind(await svc.approve({ runId, version: 2, userId: 'U0FIN3' }), 'approved');
    expect(done.decision.plan?.steps.find((s) => s.id === 's4')?.approvals.map((a) => a.userId)).toEqual([
      'U0FIN2',
      'U0FIN3',
    ]);
  });
});

describe('edits and versions', () => {
  it('refuses a click on a stale version, keeps approvals of untouched steps, and re-asks only for touched ones', async () => {
    const second = await submitFreight();
    const { svc } = second;
    const plan = (await svc.getRun(second.runId))!.current.plan;
    const steps = plan.steps.map(({ id, tool, args }) =>
      id === 's2' ? { id, tool, args: { ...args, window: '2026-04-06' } } : { id, tool, args },
    );
    const edited = expectKind(
      await svc.applyEdit({ runId: second.runId, baseVersion: 1, editorId: 'U0OP1', steps }),
      'edited',
    );
    expect(edited.diff.touchedStepIds).toEqual(['s2']);
    expect(edited.run.current.provenance.s2).toEqual({
      by: 'user',
      userId: 'U0OP1',
      version: 2,
      change: 'changed',
    });
    expect(edited.run.current.provenance.s3).toEqual({ by: 'agent', version: 1 });

    const stale = expectKind(
      await svc.approve({ runId: second.runId, version: 1, userId: 'U0OP2' }),
      'stale',
    );
    expect(stale.currentVersion).toBe(2);
    expect((await svc.getRun(second.runId))?.approvals).toEqual([]);
    const staleEdit = await svc.applyEdit({ runId: second.runId, baseVersion: 1, editorId: 'U0OP1', steps });
    expect(staleEdit.kind).toBe('stale');
  });

  it('an operator adding a refund gets may_author back and nothing changes', async () => {
    const { runId, svc } = await submitFreight();
    const base = (await svc.getRun(runId))!.current.plan;
    const steps = [
      ...base.steps.map(({ id, tool, args }) => ({ id, tool, args })),
      { tool: 'issue_refund', args: { invoice_id: 'in_74119', amount: 148_900 } },
    ];
    const result = expectKind(
      await svc.applyEdit({ runId, baseVersion: 1, editorId: 'U0OP1', steps }),
      'invalid',
    );
    expect(result.diagnostics).toEqual([expect.objectContaining({ code: 'may_author', stepId: 's4' })]);
    expect((await svc.getRun(runId))?.version).toBe(1);
  });

  it('a step reverted to previously approved bytes keeps its approval', async () => {
    const { runId, svc } = await submitFreight();
    const v1 = (await svc.getRun(runId))!.current.plan;
    const original = v1.steps.map(({ id, tool, args }) => ({ id, tool, args }));
    // A refund keeps the run pending while the operator's approvals of s2 and s3 are recorded.
    const withRefund = [...original, addedRefundStep];
    await svc.applyEdit({ runId, baseVersion: 1, editorId: 'U0FIN1', steps: withRefund });
    await svc.approve({ runId, version: 2, userId: 'U0OP1' }); // s2, s3 approved at their digests
    const changed = withRefund.map((s) =>
      s.id === 's2' ? { ...s, args: { ...s.args, window: '2026-04-07' } } : s,
    );
    const v3 = expectKind(
      await svc.applyEdit({ runId, baseVersion: 2, editorId: 'U0FIN1', steps: changed }),
      'edited',
    );
    expect(v3.run.awaiting.map((a) => a.stepId)).toEqual(['s2', 's4']);
    const v4 = expectKind(
      await svc.applyEdit({ runId, baseVersion: 3, editorId: 'U0FIN1', steps: withRefund }),
      'edited',
    );
    expect(v4.run.awaiting.map((a) => a.stepId)).toEqual(['s4']);
  });
});

describe('races (real concurrent calls against real Redis)', () => {
  it('two finance approvers clicking at once: both approvals count, exactly one decision', async () => {
    const { runId, svc } = await submitFreight();
    const base = (await svc.getRun(runId))!.current.plan;
    const steps = [...base.steps.map(({ id, tool, args }) => ({ id, tool, args })), addedRefundStep];
    await svc.applyEdit({ runId, baseVersion: 1, editorId: 'U0LEAD1', steps });
    await svc.approve({ runId, version: 2, userId: 'U0OP1' });
    const replicas = [service(), service()];
    const results = await Promise.all([
      replicas[0]!.approve({ runId, version: 2, userId: 'U0FIN1' }),
      replicas[1]!.approve({ runId, version: 2, userId: 'U0FIN2' }),
    ]);
    expect(results.map((r) => r.kind).sort()).toEqual(['approved', 'awaiting']);
    expect(delivered).toHaveLength(1);
  });

  it('approve vs edit: exactly one wins; the other is told which version is current', async () => {
    const { runId, svc } = await submitFreight();
    const base = (await svc.getRun(runId))!.current.plan;
    const steps = base.steps.map(({ id, tool, args }) =>
      id === 's3' ? { id, tool, args: { ...args, body: 'Changed.' } } : { id, tool, args },
    );
    const [approve, edit] = await Promise.all([
      service().approve({ runId, version: 1, userId: 'U0OP1' }),
      service().applyEdit({ runId, baseVersion: 1, editorId: 'U0OP2', steps }),
    ]);
    const kinds = [approve.kind, edit.kind].sort();
    expect([
      ['already_decided', 'approved'],
      ['edited', 'stale'],
    ]).toContainEqual(kinds);
  });

  it('approve vs expiry at the same instant: exactly one outcome is delivered', async () => {
    const { runId, svc } = await submitFreight(undefined, { expiresInMs: 60_000 });
    const [approve, expire] = await Promise.all([
      service({ clock: () => now + 59_999 }).approve({ runId, version: 1, userId: 'U0OP1' }),
      service({ clock: () => now + 60_000 }).expire({ runId, version: 1 }),
    ]);
    expect([approve.kind, expire.kind].sort()).toSatisfy(
      (kinds: string[]) =>
        kinds.join() === 'already_decided,approved' || kinds.join() === 'already_decided,expired',
    );
    expect(delivered).toHaveLength(1);
    expect((await svc.getRun(runId))?.status).toBe(delivered[0]!.status);
  });

  it('ten concurrent identical clicks record one approval', async () => {
    const { runId, svc } = await submitFreight();
    const base = (await svc.getRun(runId))!.current.plan;
    const steps = [...base.steps.map(({ id, tool, args }) => ({ id, tool, args })), addedRefundStep];
    await svc.applyEdit({ runId, baseVersion: 1, editorId: 'U0LEAD1', steps });
    await Promise.all(
      Array.from({ length: 10 }, () => service().approve({ runId, version: 2, userId: 'U0FIN1' })),
    );
    const run = await svc.getRun(runId);
    expect(run?.approvals.filter((a) => a.userId === 'U0FIN1')).toHaveLength(1);
    const journal = await redis.lrange(svc.keys.forRun(runId).journal, 0, -1);
    expect(journal.filter((r) => JSON.parse(r).event.type === 'approval')).toHaveLength(1);
    expect(verifyJournal(journal).ok).toBe(true);
  });
});

describe('timers and outcomes', () => {
  it('a timer for a superseded version only journals stale_timer', async () => {
    const { runId, svc } = await submitFreight();
    const base = (await svc.getRun(runId))!.current.plan;
    const steps = base.steps.map(({ id, tool, args }) =>
      id === 's3' ? { id, tool, args: { ...args, body: 'New.' } } : { id, tool, args },
    );
    await svc.applyEdit({ runId, baseVersion: 1, editorId: 'U0OP1', steps });
    now += 3 * 3_600_000;
    expectKind(await svc.expire({ runId, version: 1 }), 'stale');
    expect((await svc.getRun(runId))?.status).toBe('pending');
    const journal = await redis.lrange(svc.keys.forRun(runId).journal, 0, -1);
    expect(JSON.parse(journal.at(-1)!).event).toMatchObject({
      type: 'stale_timer',
      version: 1,
      currentVersion: 2,
    });
    expectKind(await svc.expire({ runId, version: 2 }), 'expired');
  });

  it('an applying step cannot be claimed twice and turns uncertain after the configured time', async () => {
    const { runId, svc } = await submitFreight();
    await svc.approve({ runId, version: 1, userId: 'U0OP1' });
    expect((await svc.recordOutcome({ runId, stepId: 's2', status: 'applying' })).kind).toBe('recorded');
    expect((await svc.recordOutcome({ runId, stepId: 's2', status: 'applying' })).kind).toBe(
      'already_claimed',
    );
    now += config.defaults.uncertainAfterMs + 1;
    expect((await svc.getOutcomes(runId)).find((o) => o.stepId === 's2')?.status).toBe('uncertain');
    expect((await svc.recordOutcome({ runId, stepId: 's9', status: 'applied' })).kind).toBe('unknown_step');
  });
});

describe('diff-message actions', () => {
  async function editedRun() {
    const { runId, svc } = await submitFreight();
    const v1 = (await svc.getRun(runId))!.current.plan;
    const steps = [
      ...v1.steps.map(({ id, tool, args }) =>
        id === 's2' ? { id, tool, args: { ...args, window: '2026-04-06' } } : { id, tool, args },
      ),
      addedRefundStep,
    ];
    expectKind(await svc.applyEdit({ runId, baseVersion: 1, editorId: 'U0FIN1', steps }), 'edited');
    return { runId, svc, v1 };
  }

  it('remove_step drops the added step in a new version', async () => {
    const { runId, svc } = await editedRun();
    const result = expectKind(
      await svc.applyDiffAction({ runId, version: 2, userId: 'U0FIN1', action: 'remove_step', stepId: 's4' }),
      'edited',
    );
    expect(result.run.version).toBe(3);
    expect(result.run.current.plan.steps.map((s) => s.id)).toEqual(['s1', 's2', 's3']);
    expect(result.diff.changes.map((c) => [c.kind, c.stepId])).toEqual([['removed', 's4']]);
  });

  it('revert_step restores the changed step to its bytes before the edit', async () => {
    const { runId, svc, v1 } = await editedRun();
    const result = expectKind(
      await svc.applyDiffAction({ runId, version: 2, userId: 'U0FIN1', action: 'revert_step', stepId: 's2' }),
      'edited',
    );
    expect(result.run.current.plan.steps.find((s) => s.id === 's2')?.digest).toBe(v1.steps[1]?.digest);
    expect(result.run.current.plan.steps.map((s) => s.id)).toEqual(['s1', 's2', 's3', 's4']);
  });

  it('discard_edit brings back the plan as it was before the edit, as a new version', async () => {
    const { runId, svc, v1 } = await editedRun();
    const result = expectKind(
      await svc.applyDiffAction({ runId, version: 2, userId: 'U0OP1', action: 'discard_edit' }),
      'edited',
    );
    expect(result.run.version).toBe(3);
    expect(result.run.current.plan.digest).toBe(v1.digest);
  });

  it('refuses an action aimed at a superseded edit', async () => {
    const { runId, svc } = await editedRun();
    await svc.applyDiffAction({ runId, version: 2, userId: 'U0FIN1', action: 'remove_step', stepId: 's4' });
    const stale = expectKind(
      await svc.applyDiffAction({ runId, version: 2, userId: 'U0FIN1', action: 'discard_edit' }),
      'stale',
    );
    expect(stale.currentVersion).toBe(3);
  });
});

describe('re-check at the boundary', () => {
  it('does not approve when a check fails at the last approval, says why on the run, and journals it', async () => {
    const { z } = await import('zod');
    const { defineConfig } = await import('../../src/config/index.ts');
    const { defineTool, money, text } = await import('../../src/pipeline/index.ts');
    const balance = { cents: 10_000 };
    const pay = defineTool({
      name: 'pay_invoice',
      title: 'Pay invoice',
      effect: 'irreversible',
      args: z.strictObject({ invoice_id: text(), amount: money() }),
      checks: (args) =>
        args.amount <= balance.cents ? [] : [`amount exceeds the open balance of ${balance.cents} cents`],
    });
    const payConfig = defineConfig({
      tools: [pay],
      agents: { 'freight-ops': { tools: ['pay_invoice'], channel: 'C0OPS', secret: SECRET } },
      groups: { finance: ['U0FIN1'] },
      policy: [{ tool: 'pay_invoice', route: 'review', approvers: 'finance' }],
      authoring: { finance: '*' },
    });
    const svc = new ApprovalService({
      redis,
      config: payConfig,
      prefix,
      signer: testSigning.signer,
      clock: () => now,
    });
    const runId = 'run-recheck';
    const raw = JSON.stringify({
      runId,
      agent: 'freight-ops',
      expiresAt: new Date(now + 3_600_000).toISOString(),
      steps: [{ tool: 'pay_invoice', args: { invoice_id: 'in_1', amount: 9_000 } }],
    });
    expectKind(await svc.submitPlan({ runId, agent: 'freight-ops', raw }), 'pending');
    balance.cents = 5_000; // paid in part meanwhile
    const result = expectKind(await svc.approve({ runId, version: 1, userId: 'U0FIN1' }), 'invalid');
    expect(result.diagnostics[0]?.message).toMatch(/exceeds the open balance of 5000 cents/);
    const run = await svc.getRun(runId);
    expect(run?.status).toBe('pending');
    expect(run?.recheckProblem).toMatch(/exceeds the open balance/);
    expect(result.run?.recheckProblem).toBe(run?.recheckProblem);
    balance.cents = 10_000;
    expectKind(await svc.approve({ runId, version: 1, userId: 'U0FIN1' }), 'approved');
  });
});
