import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FREIGHT_AGENT, freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import { RefusalLog, type RunView, type UseCaseResult } from '../../src/approvals/index.ts';
import { buildPlanText } from '../../src/client/index.ts';
import { type SignedSubmission, signSubmission } from '../../src/pipeline/index.ts';
import {
  createIntakeProcessor,
  decisionJobId,
  decisionsQueue,
  INTAKE_QUEUE,
  type IntakeSummary,
} from '../../src/queue/index.ts';
import { freightConfig } from '../support/freight.ts';
import {
  eventually,
  FREIGHT_SECRET,
  freightSecrets,
  type IntakeStack,
  intakeStack,
} from '../support/intake-stack.ts';

const steps = freightSteps.map((step) => ({ ...step, args: { ...step.args } }));

let stack: IntakeStack;
beforeAll(() => {
  stack = intakeStack('intake');
  stack.startWorker();
});
afterAll(() => stack.cleanup());

/** A signed submission as the client would build it, with what a test wants to vary. */
function signed(
  options: {
    runId?: string;
    agent?: string;
    secret?: string;
    nonce?: string;
    issuedAt?: number;
    steps?: unknown[];
  } = {},
): SignedSubmission {
  const runId = options.runId ?? `run-${randomUUID()}`;
  const agent = options.agent ?? FREIGHT_AGENT;
  const now = Date.now();
  const built = buildPlanText(
    {
      summary: freightSummary,
      context: freightContext,
      steps: (options.steps ?? steps) as typeof steps,
      expiresIn: '2h',
    },
    { agent, runId, now },
  );
  if (!built.ok) throw new Error(JSON.stringify(built.diagnostics));
  return signSubmission(
    {
      agent,
      runId,
      nonce: options.nonce ?? randomUUID(),
      issuedAt: options.issuedAt ?? now,
      plan: built.text,
    },
    options.secret ?? FREIGHT_SECRET,
  );
}

/** Adds a job to the intake queue and waits for the worker's answer. */
async function intake(submission: SignedSubmission, jobId = `test-${randomUUID()}`): Promise<IntakeSummary> {
  const queue = stack.queue(INTAKE_QUEUE);
  await queue.add('submit', submission, { jobId });
  return eventually(async () => {
    const job = await queue.getJob(jobId);
    return job?.finishedOn === undefined ? undefined : (job.returnvalue as IntakeSummary);
  });
}

async function refusals(): Promise<{ runId: string; agent: string; reason: string }[]> {
  const records = await stack.redis.lrange(stack.service.keys.refused, 0, -1);
  return records.map((text) => JSON.parse(text));
}

describe('intake refuses what it cannot trust, stores nothing and posts nothing', () => {
  it('refuses an unknown agent', async () => {
    const submission = signed({ agent: 'ghost-agent' });
    expect(await intake(submission)).toEqual({
      kind: 'refused',
      runId: submission.body.runId,
      reason: 'unknown_agent',
    });
    expect(await stack.service.getRun(submission.body.runId)).toBeUndefined();
    expect(await refusals()).toContainEqual(
      expect.objectContaining({
        runId: submission.body.runId,
        agent: 'ghost-agent',
        reason: 'unknown_agent',
      }),
    );
  });

  it('refuses an agent name that only exists on Object.prototype', async () => {
    const submission = signed({ agent: 'constructor' });
    expect(await intake(submission)).toMatchObject({ kind: 'refused', reason: 'unknown_agent' });
  });

  it('refuses a submission signed with another secret', async () => {
    const submission = signed({ secret: 'not-the-freight-secret-0123' });
    expect(await intake(submission)).toMatchObject({ kind: 'refused', reason: 'bad_signature' });
    expect(await stack.service.getRun(submission.body.runId)).toBeUndefined();
    expect(await refusals()).toContainEqual(
      expect.objectContaining({ runId: submission.body.runId, reason: 'bad_signature' }),
    );
  });

  it('refuses a submission whose body was changed after signing', async () => {
    const original = signed();
    const tampered = {
      ...original,
      body: { ...original.body, plan: original.body.plan.replace('dl_55120', 'dl_55121') },
    };
    expect(await intake(tampered)).toMatchObject({ kind: 'refused', reason: 'bad_signature' });
  });

  it('refuses a replay: signed more than 5 minutes before it was enqueued', async () => {
    const submission = signed({ issuedAt: Date.now() - 6 * 60_000 });
    expect(await intake(submission)).toMatchObject({ kind: 'refused', reason: 'replay' });
    expect(await stack.service.getRun(submission.body.runId)).toBeUndefined();
    expect(await refusals()).toContainEqual(
      expect.objectContaining({ runId: submission.body.runId, reason: 'replay' }),
    );
  });

  it('accepts a submission signed 4 minutes before it was enqueued', async () => {
    const submission = signed({ issuedAt: Date.now() - 4 * 60_000 });
    expect(await intake(submission)).toMatchObject({ kind: 'pending', version: 1 });
  });

  it('refuses a nonce reused for another run', async () => {
    const nonce = randomUUID();
    const first = signed({ nonce });
    const second = signed({ nonce });
    expect(await intake(first)).toMatchObject({ kind: 'pending' });
    expect(await intake(second)).toMatchObject({ kind: 'refused', reason: 'nonce_reused' });
    expect(await stack.service.getRun(second.body.runId)).toBeUndefined();
  });

  it('fails a job that is not a signed submission, without retrying it', async () => {
    const queue = stack.queue(INTAKE_QUEUE);
    const jobId = `malformed-${randomUUID()}`;
    await queue.add('submit', { body: { runId: 'has spaces' } }, { jobId, attempts: 5 });
    const job = await eventually(async () => {
      const found = await queue.getJob(jobId);
      return found?.finishedOn === undefined ? undefined : found;
    });
    expect(await job.isFailed()).toBe(true);
    expect(job.attemptsMade).toBe(1);
  });
});

describe('intake stores valid plans', () => {
  it('stores v1 of a plan that needs people (the service’s listeners see it committed); a retry asks for card and timers again', async () => {
    const committed: UseCaseResult[] = [];
    const stop = stack.service.onCommitted((result) => {
      committed.push(result);
    });
    const recovered: RunView[] = [];
    const process = createIntakeProcessor({
      service: stack.service,
      refusals: new RefusalLog(stack.redis, stack.service.keys),
      redis: stack.redis,
      keys: stack.service.keys,
      agents: freightConfig.agents,
      secrets: freightSecrets,
      onDuplicate: async (run) => {
        recovered.push(run);
      },
    });
    const submission = signed();
    const job = { data: submission, timestamp: Date.now() };
    try {
      expect(await process(job)).toEqual({ kind: 'pending', runId: submission.body.runId, version: 1 });
      // A retry of the same job (the worker died after storing): same nonce, same run → card and timers again.
      expect(await process(job)).toEqual({ kind: 'duplicate', runId: submission.body.runId, version: 1 });
    } finally {
      stop();
    }
    expect(committed.map((result) => [result.kind, 'run' in result && result.run?.runId])).toEqual([
      ['pending', submission.body.runId],
    ]);
    expect(recovered.map((run) => [run.runId, run.version, run.status])).toEqual([
      [submission.body.runId, 1, 'pending'],
    ]);
  });

  it('decides an all-auto plan at intake and delivers the decision once, without a card', async () => {
    const posted: RunView[] = [];
    const process = createIntakeProcessor({
      service: stack.service,
      refusals: new RefusalLog(stack.redis, stack.service.keys),
      redis: stack.redis,
      keys: stack.service.keys,
      agents: freightConfig.agents,
      secrets: freightSecrets,
      onDuplicate: async (run) => {
        posted.push(run);
      },
    });
    const submission = signed({ steps: [steps[0]] });
    const job = { data: submission, timestamp: Date.now() };
    expect(await process(job)).toMatchObject({ kind: 'approved' });
    expect(await process(job)).toMatchObject({ kind: 'duplicate' });
    expect(posted).toEqual([]);
    const delivered = await stack
      .queue(decisionsQueue(FREIGHT_AGENT))
      .getJob(decisionJobId(submission.body.runId));
    expect(delivered?.data).toMatchObject({
      runId: submission.body.runId,
      status: 'approved',
      decidedBy: 'policy',
    });
  });

  it('answers an invalid plan with an invalid decision carrying the diagnostics', async () => {
    const submission = signed({ steps: [{ tool: 'delete_account', args: {} }] });
    expect(await intake(submission)).toMatchObject({ kind: 'invalid' });
    const decision = await stack.service.getDecision(submission.body.runId);
    expect(decision).toMatchObject({ status: 'invalid', phase: 'resolve' });
    expect(decision?.diagnostics.map((d) => d.code)).toEqual(['unknown_tool']);
  });

  it('refuses another plan under an existing run id (run_exists)', async () => {
    const first = signed();
    expect(await intake(first)).toMatchObject({ kind: 'pending' });
    const other = signed({ runId: first.body.runId, steps: [steps[0], steps[1]] });
    expect(await intake(other)).toMatchObject({ kind: 'run_exists' });
  });
});
