import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FREIGHT_AGENT, freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import { type Decision, isSubmissionError, type SubmissionError } from '../../src/client/index.ts';
import {
  type JsonObject,
  planDigest,
  type StepVerification,
  stepDigest,
  verifySubmission,
} from '../../src/pipeline/index.ts';
import { decisionsQueue, INTAKE_QUEUE, intakeJobId } from '../../src/queue/index.ts';
import { eventually, FREIGHT_SECRET, type IntakeStack, intakeStack } from '../support/intake-stack.ts';

const steps = freightSteps.map((step) => ({ ...step, args: { ...step.args } }));
const plan = { summary: freightSummary, context: freightContext, steps, expiresIn: '2h' };

let stack: IntakeStack;
beforeAll(() => {
  stack = intakeStack('client');
  stack.startWorker();
});
afterAll(() => stack.cleanup());

/** Submits the freight plan and waits until intake stored v1. */
async function submitted(client = stack.client()) {
  const { runId } = await client.submit(plan);
  const run = await eventually(() => stack.service.getRun(runId), 10_000, `run ${runId} stored`);
  return { client, runId, run };
}

/** The freight plan submitted and approved by an operator (s2 and s3 are operators' to approve). */
async function approvedRun() {
  const { client, runId } = await submitted();
  const approval = await stack.service.approve({ runId, version: 1, userId: 'U0OP1' });
  expect(approval.kind).toBe('approved');
  return { client, runId };
}

describe('AgentClient end to end (no Slack)', () => {
  it('submits the freight plan, intake stores v1, and the operator’s approval reaches waitForDecision with the approved digests', async () => {
    // Polling effectively off: the decision must arrive through the service's notification.
    const { client, runId, run } = await submitted(stack.client({ pollIntervalMs: 60_000 }));
    expect(run).toMatchObject({ status: 'pending', version: 1, agent: FREIGHT_AGENT });
    expect(run.awaiting.map((step) => step.stepId)).toEqual(['s2', 's3']);

    const waiting = client.waitForDecision(runId, { timeoutMs: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 50)); // waiting before the decision exists
    await stack.service.approve({ runId, version: 1, userId: 'U0OP1' });
    const decision = await waiting;

    expect(decision).toMatchObject({
      runId,
      agent: FREIGHT_AGENT,
      status: 'approved',
      version: 1,
      decidedBy: 'U0OP1',
    });
    expect(decision.plan?.digest).toBe(planDigest(decision.plan!));
    expect(decision.plan?.digest).toBe(run.current.plan.digest);
    expect(decision.plan?.steps.map((step) => [step.id, step.digest])).toEqual(
      steps.map((step) => [step.id, stepDigest(step)]),
    );
    expect(decision.plan?.steps.find((step) => step.id === 's2')?.approvals.map((a) => a.userId)).toEqual([
      'U0OP1',
    ]);
    for (const step of steps) expect(client.verifyStep(decision, step)).toMatchObject({ ok: true });
  });

  it('returns a decision that already exists at once', async () => {
    const { client, runId } = await approvedRun();
    const started = performance.now();
    const decision = await client.waitForDecision(runId, { timeoutMs: 50 });
    expect(decision.status).toBe('approved');
    expect(performance.now() - started).toBeLessThan(50);
  });

  it('finds a decision by polling when no notification comes', async () => {
    const { runId } = await approvedRun();
    const client = stack.client({ pollIntervalMs: 50 });
    const copyId = `${runId}-copy`;
    const waiting = client.waitForDecision(copyId, { timeoutMs: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Written without a PUBLISH: only the polling fallback can see it.
    const text = await stack.redis.get(stack.service.keys.forRun(runId).decision);
    await stack.redis.set(stack.service.keys.forRun(copyId).decision, text ?? '');
    await expect(waiting).resolves.toMatchObject({ runId, status: 'approved' });
  });

  it('times out with a DecisionTimeoutError naming the run', async () => {
    const { client, runId } = await submitted();
    const error = await client.waitForDecision(runId, { timeoutMs: 100 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'decision_timeout', runId, timeoutMs: 100 });
  });

  it('throws a SubmissionError with diagnostics and sends nothing for a plan that fails the local checks', async () => {
    const client = stack.client();
    const intakeJobs = () =>
      stack.queue(INTAKE_QUEUE).getJobCountByTypes('wait', 'active', 'completed', 'failed');
    const before = await intakeJobs();
    const error = await client
      .submit({ steps: [{ tool: 'issue_refund', args: { invoice_id: 'in_1', amount: 14.99 } }] })
      .catch((e: unknown) => e);
    expect(isSubmissionError(error)).toBe(true);
    expect((error as SubmissionError).diagnostics.map((d) => d.code)).toEqual(['non_integer_number']);
    expect(await intakeJobs()).toBe(before);
  });

  it('signs the envelope it queues: the server verifies it with the agent’s secret and no other', async () => {
    const client = stack.client();
    const runId = 'signed-round-trip-1';
    const { runId: returned } = await client.submit({ ...plan, runId });
    expect(returned).toBe(runId);
    const jobs = await stack.queue(INTAKE_QUEUE).getJobs(['wait', 'active', 'completed']);
    const job = jobs.find((candidate) => candidate.data.body.runId === runId);
    expect(job?.id).toBe(intakeJobId(runId, job?.data.body.plan));
    expect(verifySubmission(job?.data, FREIGHT_SECRET)).toBe(true);
    expect(verifySubmission(job?.data, 'another-secret-0123456789')).toBe(false);
    expect(JSON.parse(job?.data.body.plan)).toMatchObject({ runId, agent: FREIGHT_AGENT, steps });
  });
});

describe('verifyStep: the gate in front of each effect', () => {
  let decision: Decision;
  let verify: (step: { id: string; tool: string; args: JsonObject }, now?: number) => StepVerification;
  beforeAll(async () => {
    const { client, runId } = await approvedRun();
    decision = await client.waitForDecision(runId, { timeoutMs: 5_000 });
    verify = (step, now) => client.verifyStep(decision, step, now === undefined ? {} : { now });
  });
  const s2 = () => steps[1]!;

  it('refuses tampered args (digest_mismatch)', () => {
    expect(verify({ ...s2(), args: { ...s2().args, delivery_id: 'dl_99999' } })).toMatchObject({
      ok: false,
      reason: 'digest_mismatch',
    });
  });

  it('refuses a forged receipt, one character changed (bad_receipt)', () => {
    const last = decision.receipt.at(-1) === '0' ? '1' : '0';
    const forged = { ...decision, receipt: `${decision.receipt.slice(0, -1)}${last}` };
    const client = stack.client();
    expect(client.verifyStep(forged, s2())).toMatchObject({ ok: false, reason: 'bad_receipt' });
  });

  it('refuses a decision whose contents were changed under a valid receipt (bad_receipt)', () => {
    const client = stack.client();
    const widened = {
      ...decision,
      plan: { ...decision.plan!, expiresAt: '2099-01-01T00:00:00Z' },
    };
    expect(client.verifyStep(widened, s2())).toMatchObject({ ok: false, reason: 'bad_receipt' });
  });

  it('refuses after the approval expired (expired)', () => {
    const after = Date.parse(decision.plan!.expiresAt);
    expect(verify(s2(), after)).toMatchObject({ ok: false, reason: 'expired' });
    expect(verify(s2(), after - 1)).toMatchObject({ ok: true });
  });

  it('refuses a step that is not in the approved plan (unknown_step)', () => {
    expect(verify({ id: 's9', tool: 'add_note', args: { ticket_id: '74991', note: 'x' } })).toMatchObject({
      ok: false,
      reason: 'unknown_step',
    });
  });
});

describe('verifyStep across versions', () => {
  it('refuses a step from version 1 once version 2 (another window for s2) was approved', async () => {
    const { client, runId, run } = await submitted();
    const v1Step = run.current.plan.steps.find((step) => step.id === 's2')!;
    const edited = await stack.service.applyEdit({
      runId,
      baseVersion: 1,
      editorId: 'U0OP1',
      steps: run.current.plan.steps.map((step) =>
        step.id === 's2'
          ? { id: step.id, tool: step.tool, args: { ...step.args, window: '2026-04-06' } }
          : { id: step.id, tool: step.tool, args: step.args },
      ),
    });
    expect(edited.kind).toBe('edited');
    expect((await stack.service.approve({ runId, version: 2, userId: 'U0OP2' })).kind).toBe('approved');
    const decision = await client.waitForDecision(runId, { timeoutMs: 5_000 });
    expect(decision.version).toBe(2);

    const fromV1 = { id: v1Step.id, tool: v1Step.tool, args: v1Step.args };
    expect(client.verifyStep(decision, fromV1)).toMatchObject({ ok: false, reason: 'digest_mismatch' });
    const fromV2 = decision.plan!.steps.find((step) => step.id === 's2')!;
    expect(client.verifyStep(decision, fromV2)).toMatchObject({
      ok: true,
      provenance: { by: 'user', userId: 'U0OP1', version: 2, change: 'changed' },
    });
  });

  it('refuses every step of a rejected run (not_approved)', async () => {
    const { client, runId } = await submitted();
    await stack.service.reject({ runId, version: 1, userId: 'U0OP1', reason: 'wrong customer' });
    const decision = await client.waitForDecision(runId, { timeoutMs: 5_000 });
    expect(decision).toMatchObject({ status: 'rejected', reason: 'wrong customer' });
    expect(client.verifyStep(decision, steps[0]!)).toMatchObject({ ok: false, reason: 'not_approved' });
  });
});

describe('reportOutcome', () => {
  it('claims a step once: a second applying is already_claimed, then applied is recorded', async () => {
    const { client, runId } = await approvedRun();
    expect(await client.reportOutcome(runId, 's2', { status: 'applying' })).toMatchObject({
      ok: true,
      outcome: { stepId: 's2', status: 'applying' },
    });
    expect(await client.reportOutcome(runId, 's2', { status: 'applying' })).toMatchObject({
      ok: false,
      reason: 'already_claimed',
    });
    expect(await client.reportOutcome(runId, 's2', { status: 'applied', detail: 'rebooked' })).toMatchObject({
      ok: true,
      outcome: { status: 'applied', detail: 'rebooked' },
    });
    expect(await stack.service.getOutcomes(runId)).toMatchObject([{ stepId: 's2', status: 'applied' }]);
  });

  it('answers for runs that are not approved and steps that do not exist', async () => {
    const { client, runId } = await submitted();
    expect(await client.reportOutcome(runId, 's2', { status: 'applying' })).toMatchObject({
      ok: false,
      reason: 'not_approved',
    });
    const approved = await approvedRun();
    expect(await approved.client.reportOutcome(approved.runId, 's9', { status: 'applying' })).toMatchObject({
      ok: false,
      reason: 'unknown_step',
    });
    expect(await client.reportOutcome('no-such-run', 's1', { status: 'applying' })).toMatchObject({
      ok: false,
      reason: 'not_found',
    });
  });
});

describe('onDecision: the durable consumer', () => {
  // A back end of its own: the decisions the tests above produced are not consumed here.
  let own: IntakeStack;
  beforeAll(() => {
    own = intakeStack('ondecision');
    own.startWorker();
  });
  afterAll(() => own.cleanup());

  async function pending() {
    const { runId } = await own.client().submit(plan);
    await eventually(() => own.service.getRun(runId), 10_000, `run ${runId} stored`);
    return runId;
  }

  it('receives each decision once across a client restart, and a redelivery adds nothing', async () => {
    const first = await pending();
    const second = await pending();
    const received: string[] = [];
    const consumer1 = own.client();
    const stop1 = consumer1.onDecision(async (decision) => {
      received.push(`1:${decision.runId}`);
    });
    await own.service.approve({ runId: first, version: 1, userId: 'U0OP1' });
    await eventually(async () => (received.length === 1 ? true : undefined), 10_000, 'first decision');
    await stop1();
    await consumer1.close();

    // Decided while no consumer runs, then delivered again by hand (as the outbox sweep would).
    await own.service.approve({ runId: second, version: 1, userId: 'U0OP1' });
    await own.sink.deliver((await own.service.getDecision(second))!);
    await own.sink.deliver((await own.service.getDecision(first))!);

    const consumer2 = own.client();
    const stop2 = consumer2.onDecision(async (decision) => {
      received.push(`2:${decision.runId}`);
    });
    await eventually(async () => (received.length >= 2 ? true : undefined), 10_000, 'second decision');
    await new Promise((resolve) => setTimeout(resolve, 300)); // a duplicate would have arrived by now
    await stop2();
    expect(received).toEqual([`1:${first}`, `2:${second}`]);
    const queue = own.queue(decisionsQueue(FREIGHT_AGENT));
    expect(await queue.getJobCountByTypes('wait', 'active', 'completed', 'failed', 'delayed')).toBe(2);
  });

  it('delivers again after the handler throws (at least once)', async () => {
    const runId = await pending();
    let attempts = 0;
    const stop = own.client().onDecision(async (decision) => {
      if (decision.runId !== runId) return;
      attempts++;
      if (attempts === 1) throw new Error('executor not ready');
    });
    await own.service.approve({ runId, version: 1, userId: 'U0OP1' });
    await eventually(async () => (attempts === 2 ? true : undefined), 10_000, 'a retried delivery');
    await stop();
    expect(attempts).toBe(2);
  });
});
