/**
 * The agent client with plans whose steps depend on others, against the real gateway and Redis:
 * waiting for releases, and verifyStep asking Countersign which steps are applied before a step
 * that depends on them. Releases are written straight into the run's releases hash, as the release
 * commit stores them (test/support/releases.ts): the approvals side builds those commits apart.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FREIGHT_AGENT, freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import type { RunView } from '../../src/approvals/index.ts';
import {
  AgentClient,
  type Grant,
  isDecisionTimeoutError,
  isRelease,
  type StepToRun,
} from '../../src/client/index.ts';
import { redisUrl } from '../helpers/redis.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import { releaseOf, seedOutcome, seedRelease } from '../support/releases.ts';
import { FREIGHT_SECRET } from '../support/stack.ts';

let stack: BotStack;
let redis: Redis;
beforeAll(async () => {
  stack = await botStack('client-releases');
  redis = new Redis(redisUrl());
});
afterAll(async () => {
  redis.disconnect();
  await stack.stop();
});

/** The freight plan with s3 (the reply to the customer) depending on s2 (the rebooking); pending. */
async function submitted(): Promise<RunView> {
  const { runId } = await stack.client.submit({
    runId: randomUUID(),
    summary: freightSummary,
    context: freightContext,
    expiresIn: '2h',
    steps: freightSteps.map((step) => ({
      ...step,
      args: { ...step.args },
      ...(step.id === 's3' ? { dependsOn: ['s2'] } : {}),
    })),
  });
  const run = await stack.countersign.approvals.getRun(runId);
  if (run === undefined) throw new Error('submitted');
  return run;
}
const keys = () => stack.countersign.approvals.keys;
const stepOf = (run: RunView, id: string): StepToRun => {
  const step = run.current.plan.steps.find((candidate) => candidate.id === id)!;
  return { id: step.id, tool: step.tool, args: step.args };
};

/** A client whose requests are counted, and whose run-status requests fail while `down` holds. */
function countingClient(down: () => boolean = () => false) {
  const paths: string[] = [];
  const client = new AgentClient({
    url: stack.baseUrl,
    agent: FREIGHT_AGENT,
    secret: FREIGHT_SECRET,
    retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
    onError: () => {},
    fetch: async (input, init) => {
      const path = new URL(String(input)).pathname;
      paths.push(path);
      if (down() && /^\/v1\/runs\/[^/]+$/.test(path)) throw new TypeError('fetch failed');
      return fetch(input, init);
    },
  });
  return { client, paths };
}

describe('waiting for releases', () => {
  it('resolves waitForRelease with the step’s release once it comes; the release lets that step run and no other', async () => {
    const run = await submitted();
    expect(await stack.client.getReleases(run.runId)).toEqual({
      runId: run.runId,
      status: 'pending',
      releases: [],
    });
    const waiting = stack.client.waitForRelease(run.runId, 's1', { timeoutMs: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await seedRelease(redis, keys(), releaseOf(run, 's2'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const s1 = releaseOf(run, 's1');
    await seedRelease(redis, keys(), s1);
    const grant = await waiting;
    expect(grant).toEqual(s1);
    expect(await stack.client.verifyStep(grant, stepOf(run, 's1'))).toMatchObject({ ok: true });
    expect(await stack.client.verifyStep(grant, stepOf(run, 's3'))).toMatchObject({
      ok: false,
      reason: 'not_released',
    });
    expect((await stack.client.getReleases(run.runId)).releases.map((r) => r.stepId)).toEqual(['s2', 's1']);
  });

  it('resolves waitForRelease with the decision when the run is decided before the step is released', async () => {
    const run = await submitted();
    const waiting = stack.client.waitForRelease(run.runId, 's2', { timeoutMs: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await stack.click('U0OP1', await stack.card(run.runId), 'approve');
    const grant = await waiting;
    expect(isRelease(grant)).toBe(false);
    expect(grant).toMatchObject({ status: 'approved', runId: run.runId });
    expect(await stack.client.verifyStep(grant, stepOf(run, 's2'))).toMatchObject({ ok: true });
  });

  it('gives up after timeoutMs with a DecisionTimeoutError naming the step', async () => {
    const run = await submitted();
    const error = await stack.client
      .waitForRelease(run.runId, 's1', { timeoutMs: 1_200 })
      .catch((caught: unknown) => caught);
    expect(isDecisionTimeoutError(error)).toBe(true);
    expect((error as Error).message).toContain('release of step s1');
  });
});

describe('verifyStep with dependencies', () => {
  it('no action bypasses an unmet dependency', async () => {
    const run = await submitted();
    const release = releaseOf(run, 's3');
    await seedRelease(redis, keys(), release);
    await stack.click('U0OP1', await stack.card(run.runId), 'approve');
    const decision = await stack.client.waitForDecision(run.runId, { timeoutMs: 10_000 });
    const grants: Grant[] = [release, decision];
    const s3 = stepOf(run, 's3');
    const refusedFor = async (step: StepToRun) =>
      Promise.all(grants.map((grant) => stack.client.verifyStep(grant, step)));

    // Nothing reported of s2, then s2 only claimed: s3 is refused by its release and by the decision.
    for (const status of [undefined, 'applying'] as const) {
      if (status !== undefined) await stack.client.reportOutcome(run.runId, 's2', { status });
      for (const check of await refusedFor(s3)) {
        expect(check).toMatchObject({ ok: false, reason: 'dependency_not_applied' });
        expect(check.ok ? '' : check.message).toContain('s2');
      }
    }
    // Claiming the step it depends on as its own dependencies: the step no longer is what was approved.
    for (const check of await refusedFor({ ...s3, dependsOn: [] })) {
      expect(check).toMatchObject({ ok: false, reason: 'digest_mismatch' });
    }
    // Countersign cannot be asked which steps are applied: refused, not assumed.
    let down = true;
    const { client } = countingClient(() => down);
    try {
      for (const grant of grants) {
        expect(await client.verifyStep(grant, s3)).toMatchObject({
          ok: false,
          reason: 'dependency_not_applied',
        });
      }
      // Reported failed: still refused.
      await stack.client.reportOutcome(run.runId, 's2', { status: 'failed' });
      down = false;
      expect(await client.verifyStep(decision, s3)).toMatchObject({
        ok: false,
        reason: 'dependency_not_applied',
      });
    } finally {
      await client.close();
    }
  });

  it('lets a step run once every step it depends on is reported applied, asking only for steps with dependencies', async () => {
    const run = await submitted();
    await stack.click('U0OP1', await stack.card(run.runId), 'approve');
    const decision = await stack.client.waitForDecision(run.runId, { timeoutMs: 10_000 });
    const { client, paths } = countingClient();
    try {
      expect(await client.verifyStep(decision, stepOf(run, 's2'))).toMatchObject({ ok: true });
      expect(paths.filter((path) => path === `/v1/runs/${run.runId}`)).toEqual([]);
      await seedOutcome(redis, keys(), run.runId, 's2', 'applied');
      expect(await client.verifyStep(decision, stepOf(run, 's3'))).toMatchObject({ ok: true });
      expect(paths.filter((path) => path === `/v1/runs/${run.runId}`)).toHaveLength(1);
    } finally {
      await client.close();
    }
  });
});
