/**
 * Issue 11: an approval counts only for the step it was given to (its id and its digest), escalation
 * rights come from the config, a plan without an expiry gets the configured default, and the decision
 * says who wrote each step. Each case here failed before the fix.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { freightConfigInput } from '../../examples/freight/countersign.config.ts';
import { freightPlan } from '../../examples/freight/plans.ts';
import { ApprovalService } from '../../src/approvals/service.ts';
import type { UseCaseResult } from '../../src/approvals/types.ts';
import { type ConfigInput, type CountersignConfig, defineConfig } from '../../src/config/index.ts';
import type { Decision } from '../../src/pipeline/index.ts';
import { testRedis } from '../helpers/redis.ts';
import { testSigning } from '../support/stack.ts';

const HOUR = 3_600_000;
const { redis, prefix, cleanup } = testRedis('step-identity');
afterAll(cleanup);

let now = Date.parse('2026-04-01T10:00:00Z');
let delivered: Decision[] = [];
let runCounter = 0;
beforeEach(() => {
  now = Date.parse('2026-04-01T10:00:00Z');
  delivered = [];
});

function service(config: CountersignConfig = defineConfig(freightConfigInput)) {
  return new ApprovalService({
    redis,
    config,
    prefix,
    signer: testSigning.signer,
    clock: () => now,
    deliver: async (decision) => {
      delivered.push(decision);
    },
  });
}

type PlainStep = { id?: string; tool: string; args: Record<string, string | number> };
const note: PlainStep = {
  id: 's1',
  tool: 'add_note',
  args: { ticket_id: '74991', note: 'Called the customer.' },
};
const reschedule: PlainStep = {
  id: 's2',
  tool: 'reschedule_delivery',
  args: { delivery_id: 'dl_55120', window: '2026-04-03' },
};
const refund: PlainStep = { id: 's3', tool: 'issue_refund', args: { invoice_id: 'in_74121', amount: 4_500 } };

async function submit(
  svc: ApprovalService,
  steps: readonly PlainStep[],
  extra: Record<string, unknown> = {},
) {
  const runId = `run-id-${++runCounter}`;
  const { expiresAt: _, ...plan } = freightPlan({ runId, now });
  const raw = JSON.stringify({ ...plan, expiresAt: new Date(now + 2 * HOUR).toISOString(), steps, ...extra });
  return { runId, result: await svc.submitPlan({ runId, agent: 'freight-ops', raw }) };
}

function expectKind<K extends UseCaseResult['kind']>(
  result: UseCaseResult,
  kind: K,
): Extract<UseCaseResult, { kind: K }> {
  expect(result.kind, JSON.stringify(result).slice(0, 600)).toBe(kind);
  return result as Extract<UseCaseResult, { kind: K }>;
}

const plain = (steps: readonly { id: string; tool: string; args: object }[]) =>
  steps.map(({ id, tool, args }) => ({ id, tool, args: { ...args } }) as PlainStep & { id: string });

const approversOf = (decision: Decision | undefined) =>
  Object.fromEntries(
    (decision?.plan?.steps ?? []).map((step) => [step.id, step.approvals.map((a) => a.userId)]),
  );

describe('an approval counts only for the step it was given to', () => {
  it('does not count a refund approval for an identical refund added later, nor list its approver before the step existed', async () => {
    const svc = service();
    const { runId } = await submit(svc, [note, reschedule, refund]);
    // Finance approves the agent's refund s3 at version 1.
    expectKind(await svc.approve({ runId, version: 1, userId: 'U0FIN1' }), 'awaiting');
    now += 60_000;
    // A finance editor adds a second refund with exactly the same tool and arguments.
    const v1 = (await svc.getRun(runId))!.current.plan;
    const edited = expectKind(
      await svc.applyEdit({
        runId,
        baseVersion: 1,
        editorId: 'U0FIN3',
        steps: [...plain(v1.steps), { tool: refund.tool, args: { ...refund.args } }],
      }),
      'edited',
    );
    const added = edited.run.current.plan.steps[3]!;
    expect(added.id).toBe('s4');
    expect(added.digest).toBe(edited.run.current.plan.steps[2]!.digest);
    expect(edited.run.awaiting.map((a) => [a.stepId, a.have, a.need])).toEqual([
      ['s2', 0, 1],
      ['s4', 0, 1],
    ]);

    // The operator step is approved: the added refund still waits — no decision.
    now += 60_000;
    const afterOperator = expectKind(await svc.approve({ runId, version: 2, userId: 'U0OP1' }), 'awaiting');
    expect(afterOperator.run.awaiting.map((a) => a.stepId)).toEqual(['s4']);
    expect(delivered).toEqual([]);

    // Finance approves again: this click is the approval of s4.
    now += 60_000;
    const done = expectKind(await svc.approve({ runId, version: 2, userId: 'U0FIN1' }), 'approved');
    expect(approversOf(done.decision)).toEqual({ s1: [], s2: ['U0OP1'], s3: ['U0FIN1'], s4: ['U0FIN1'] });
    const s4 = done.decision.plan?.steps.find((step) => step.id === 's4');
    expect(s4?.approvals[0]?.at).toBe(new Date(now).toISOString());
  });

  it('records one approval per step for two identical steps, and counts each step separately', async () => {
    const svc = service();
    const { runId } = await submit(svc, [reschedule, { ...reschedule, id: 's9' }]);
    expectKind(await svc.approve({ runId, version: 1, userId: 'U0OP2' }), 'approved');
    const entries = Object.keys(await redis.hgetall(svc.keys.forRun(runId).approvals)).map((field) =>
      field.split('|').filter((_, index) => index !== 1),
    );
    expect(entries.sort()).toEqual([
      ['s2', 'U0OP2'],
      ['s9', 'U0OP2'],
    ]);
    expect(approversOf(delivered[0])).toEqual({ s2: ['U0OP2'], s9: ['U0OP2'] });
  });

  it('never gives an added step the id of a removed one, and a discarded edit brings a step back with its approval', async () => {
    const svc = service();
    const { runId } = await submit(svc, [note, reschedule, refund]);
    expectKind(await svc.approve({ runId, version: 1, userId: 'U0FIN2' }), 'awaiting');
    const v1 = (await svc.getRun(runId))!.current.plan;
    // v2 removes the refund s3; v3 adds the same refund back as a new step.
    expectKind(
      await svc.applyEdit({ runId, baseVersion: 1, editorId: 'U0FIN3', steps: plain(v1.steps.slice(0, 2)) }),
      'edited',
    );
    const readded = expectKind(
      await svc.applyEdit({
        runId,
        baseVersion: 2,
        editorId: 'U0FIN3',
        steps: [...plain(v1.steps.slice(0, 2)), { tool: refund.tool, args: { ...refund.args } }],
      }),
      'edited',
    );
    expect(readded.run.current.plan.steps.map((step) => step.id)).toEqual(['s1', 's2', 's4']);
    expect(readded.run.awaiting.map((a) => [a.stepId, a.have])).toEqual([
      ['s2', 0],
      ['s4', 0],
    ]);
    // The modal names new steps the same way: from every id the run has used.
    expect(readded.run.usedStepIds).toEqual(['s1', 's2', 's3', 's4']);

    // An id the run used for another step, given with other bytes, is not kept either.
    const claimed = expectKind(
      await svc.applyEdit({
        runId,
        baseVersion: 3,
        editorId: 'U0FIN3',
        steps: [
          ...plain(v1.steps.slice(0, 2)),
          { id: 's3', tool: refund.tool, args: { ...refund.args, amount: 4_000 } },
        ],
      }),
      'edited',
    );
    expect(claimed.run.current.plan.steps.map((step) => step.id)).toEqual(['s1', 's2', 's5']);

    // Discarding the last edit restores v3's steps; reverting to v1's exact s3 keeps U0FIN2's approval.
    const back = expectKind(
      await svc.applyEdit({ runId, baseVersion: 4, editorId: 'U0FIN3', steps: plain(v1.steps) }),
      'edited',
    );
    expect(back.run.current.plan.steps.map((step) => step.id)).toEqual(['s1', 's2', 's3']);
    expect(back.run.standing.s3).toMatchObject({ approvers: ['U0FIN2'], satisfied: true });
  });

  it('reads approvals stored before they were bound to step ids as the steps of the version clicked', async () => {
    const svc = service();
    const { runId } = await submit(svc, [note, reschedule, refund]);
    const keys = svc.keys.forRun(runId);
    const s3 = (await svc.getRun(runId))!.current.plan.steps[2]!;
    // As the old code wrote it: `<digest>|<user>`, no stepId.
    await redis.hset(keys.approvals, {
      [`${s3.digest}|U0FIN1`]: JSON.stringify({
        stepDigest: s3.digest,
        userId: 'U0FIN1',
        version: 1,
        at: now,
      }),
    });
    const v1 = (await svc.getRun(runId))!;
    expect(v1.standing.s3).toMatchObject({ approvers: ['U0FIN1'], satisfied: true });
    // An identical step added afterwards is not covered by it.
    const edited = expectKind(
      await svc.applyEdit({
        runId,
        baseVersion: 1,
        editorId: 'U0FIN3',
        steps: [...plain(v1.current.plan.steps), { tool: refund.tool, args: { ...refund.args } }],
      }),
      'edited',
    );
    expect(edited.run.standing.s3?.approvers).toEqual(['U0FIN1']);
    expect(edited.run.standing.s4?.approvers).toEqual([]);
  });
});

/** The freight config with escalation levels given here (the rest as in the example). */
function escalationConfig(
  levels: NonNullable<ConfigInput['escalation']>[string]['levels'],
  policy?: ConfigInput['policy'],
) {
  return defineConfig({
    ...freightConfigInput,
    ...(policy === undefined ? {} : { policy }),
    escalation: { 'freight-ops': { levels } },
  });
}

/** The example's policy without its `escalatedMayApprove: false` on large refunds. */
const withoutEscalationLimits = () =>
  freightConfigInput.policy.map(({ escalatedMayApprove: _, ...policyRule }) => policyRule);

const bigRefund: PlainStep = {
  id: 's3',
  tool: 'issue_refund',
  args: { invoice_id: 'in_74120', amount: 60_000 },
};

describe('who may act from an escalation is the policy’s decision', () => {
  it('a level without a grant only notifies: the lead may approve nothing and is told why', async () => {
    const svc = service(escalationConfig([{ after: '15m', notify: 'leads' }]));
    const { runId } = await submit(svc, [note, reschedule]);
    expectKind(await svc.escalate({ runId, version: 1, level: 1 }), 'escalated');
    const refused = expectKind(await svc.approve({ runId, version: 1, userId: 'U0LEAD1' }), 'unauthorized');
    expect(refused.reason).toMatch(/escalated to you to follow up, not to approve/);
    const run = await svc.getRun(runId);
    expect(run?.escalated).toEqual([{ userId: 'U0LEAD1', levels: [1], may: [] }]);
  });

  it('a grant for the operators’ steps lets the lead approve those, not a refund', async () => {
    const svc = service(
      escalationConfig([
        { after: '15m', notify: 'leads', may: { approve: ['operators'], irreversible: true } },
      ]),
    );
    const { runId } = await submit(svc, [note, reschedule, refund]);
    await svc.escalate({ runId, version: 1, level: 1 });
    const approved = expectKind(await svc.approve({ runId, version: 1, userId: 'U0LEAD1' }), 'awaiting');
    expect(approved.approvedSteps).toEqual(['s2']);
    expect(approved.run.awaiting.map((a) => a.stepId)).toEqual(['s3']);
  });

  it('an escalated approval counts as one of a group’s N, or as enough alone, as the level says', async () => {
    const memberGrant = service(
      escalationConfig(
        [
          {
            after: '15m',
            notify: 'leads',
            may: { approve: ['finance'], counts: 'member', irreversible: true },
          },
        ],
        withoutEscalationLimits(),
      ),
    );
    const first = await submit(memberGrant, [bigRefund]);
    await memberGrant.escalate({ runId: first.runId, version: 1, level: 1 });
    const one = expectKind(
      await memberGrant.approve({ runId: first.runId, version: 1, userId: 'U0LEAD1' }),
      'awaiting',
    );
    expect(one.run.awaiting).toEqual([
      {
        stepId: 's3',
        group: 'finance',
        have: 1,
        need: 2,
        approvers: ['U0LEAD1'],
        // The rest of finance may act; the lead has acted.
        mayAct: ['U0FIN1', 'U0FIN2', 'U0FIN3'],
      },
    ]);
    expectKind(await memberGrant.approve({ runId: first.runId, version: 1, userId: 'U0FIN1' }), 'approved');

    const aloneGrant = service(
      escalationConfig(
        [{ after: '15m', notify: 'leads', may: { approve: '*', counts: 'alone', irreversible: true } }],
        withoutEscalationLimits(),
      ),
    );
    const second = await submit(aloneGrant, [bigRefund]);
    await aloneGrant.escalate({ runId: second.runId, version: 1, level: 1 });
    const alone = expectKind(
      await aloneGrant.approve({ runId: second.runId, version: 1, userId: 'U0LEAD1' }),
      'approved',
    );
    expect(approversOf(alone.decision)).toEqual({ s3: ['U0LEAD1'] });
  });

  it('fails closed for irreversible steps unless the grant says so', async () => {
    const svc = service(escalationConfig([{ after: '15m', notify: 'leads', may: { approve: '*' } }]));
    const { runId } = await submit(svc, [reschedule, refund]);
    await svc.escalate({ runId, version: 1, level: 1 });
    const result = expectKind(await svc.approve({ runId, version: 1, userId: 'U0LEAD1' }), 'awaiting');
    // reschedule_delivery is a write; issue_refund is irreversible.
    expect(result.approvedSteps).toEqual(['s2']);
  });

  it('a rule with escalatedMayApprove: false keeps its steps to its group whatever the level grants', async () => {
    // The example config: refunds over $500 stay with finance.
    const svc = service(
      escalationConfig([
        { after: '15m', notify: 'leads', may: { approve: '*', counts: 'alone', irreversible: true } },
      ]),
    );
    const { runId } = await submit(svc, [reschedule, bigRefund]);
    await svc.escalate({ runId, version: 1, level: 1 });
    const result = expectKind(await svc.approve({ runId, version: 1, userId: 'U0LEAD1' }), 'awaiting');
    expect(result.approvedSteps).toEqual(['s2']);
    expect(result.run.awaiting.map((a) => a.stepId)).toEqual(['s3']);
  });

  it('distinctFromAuthor holds for escalated people: a lead never approves a step they wrote', async () => {
    const svc = service(
      escalationConfig(
        [{ after: '15m', notify: 'leads', may: { approve: '*', counts: 'alone', irreversible: true } }],
        withoutEscalationLimits(),
      ),
    );
    const { runId } = await submit(svc, [reschedule]);
    await svc.escalate({ runId, version: 1, level: 1 });
    const v1 = (await svc.getRun(runId))!.current.plan;
    expectKind(
      await svc.applyEdit({
        runId,
        baseVersion: 1,
        editorId: 'U0LEAD1',
        steps: [...plain(v1.steps), { tool: refund.tool, args: { ...refund.args } }],
      }),
      'edited',
    );
    const result = expectKind(await svc.approve({ runId, version: 2, userId: 'U0LEAD1' }), 'awaiting');
    expect(result.approvedSteps).toEqual(['s2']);
    // Those who may act on it are finance, never the lead who wrote it.
    expect(result.run.awaiting).toEqual([
      {
        stepId: 's3',
        group: 'finance',
        have: 0,
        need: 1,
        approvers: [],
        mayAct: ['U0FIN1', 'U0FIN2', 'U0FIN3'],
      },
    ]);
  });
});

describe('a plan without an expiry gets the configured default', () => {
  const expiresAtOf = async (svc: ApprovalService, extra: Record<string, unknown>) => {
    const runId = `run-expiry-${++runCounter}`;
    const { expiresAt: _, ...plan } = freightPlan({ runId, now });
    const result = await svc.submitPlan({
      runId,
      agent: 'freight-ops',
      raw: JSON.stringify({ ...plan, steps: [reschedule], ...extra }),
    });
    return 'run' in result && result.run !== undefined ? result.run.current.plan.expiresAt : result.kind;
  };

  it('uses defaults.expiresIn when neither the plan nor the agent says', async () => {
    const svc = service(defineConfig({ ...freightConfigInput, defaults: { expiresIn: '3h' } }));
    expect(await expiresAtOf(svc, {})).toBe('2026-04-01T13:00:00Z');
  });

  it('uses the agent’s own default over the config’s', async () => {
    const agent = freightConfigInput.agents['freight-ops']!;
    const svc = service(
      defineConfig({
        ...freightConfigInput,
        agents: { 'freight-ops': { ...agent, expiresIn: '45m' } },
        defaults: { expiresIn: '3h' },
      }),
    );
    expect(await expiresAtOf(svc, {})).toBe('2026-04-01T10:45:00Z');
  });

  it('counts expiresIn from when the server validates the plan, and refuses both or a non-duration', async () => {
    const svc = service();
    expect(await expiresAtOf(svc, { expiresIn: '90m' })).toBe('2026-04-01T11:30:00Z');
    expect(await expiresAtOf(svc, { expiresIn: 'soon' })).toBe('invalid');
    expect(await expiresAtOf(svc, { expiresIn: '1h', expiresAt: '2026-04-01T12:00:00Z' })).toBe('invalid');
  });
});

describe('the decision says who wrote each step', () => {
  it('names the agent, or the person and version that added or changed the step', async () => {
    const svc = service();
    const { runId } = await submit(svc, [note, reschedule]);
    const v1 = (await svc.getRun(runId))!.current.plan;
    const steps = plain(v1.steps).map((step) =>
      step.id === 's2' ? { ...step, args: { ...step.args, window: '2026-04-06' } } : step,
    );
    expectKind(
      await svc.applyEdit({
        runId,
        baseVersion: 1,
        editorId: 'U0OP1',
        steps: [...steps, { tool: 'add_note', args: { ticket_id: '74991', note: 'Moved to Monday.' } }],
      }),
      'edited',
    );
    const done = expectKind(await svc.approve({ runId, version: 2, userId: 'U0OP2' }), 'approved');
    expect(Object.fromEntries(done.decision.plan!.steps.map((step) => [step.id, step.provenance]))).toEqual({
      s1: { by: 'agent', userId: null, version: 1, change: null },
      s2: { by: 'user', userId: 'U0OP1', version: 2, change: 'changed' },
      s3: { by: 'user', userId: 'U0OP1', version: 2, change: 'added' },
    });
  });
});
