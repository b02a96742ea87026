/**
 * Releases over HTTP, black box: the real server and real Redis, signed requests. The releases and
 * outcomes are written straight into the run's hashes, as the release commit and the outcome report
 * store them (test/support/releases.ts): what is tested here is how the gateway serves them — the
 * long poll, who may read them, and the run status an agent checks dependencies with.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freightConfigInput } from '../../examples/freight/countersign.config.ts';
import { FREIGHT_AGENT, freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import { defineConfig } from '../../src/config/index.ts';
import { keysFromJwks, type Release, verifyDecisionStep } from '../../src/pipeline/index.ts';
import { PATHS } from '../../src/protocol/index.ts';
import { redisUrl } from '../helpers/redis.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import { releaseOf, seedOutcome, seedRelease } from '../support/releases.ts';

const BILLING_SECRET = 'billing-test-secret-0123456789';
const config = defineConfig({
  ...freightConfigInput,
  agents: {
    ...freightConfigInput.agents,
    billing: { tools: ['add_note'], channel: 'C0OPS', secret: BILLING_SECRET },
  },
});

let stack: BotStack;
let redis: Redis;
beforeAll(async () => {
  stack = await botStack('gateway-releases', { config, secrets: { billing: BILLING_SECRET } });
  redis = new Redis(redisUrl());
});
afterAll(async () => {
  redis.disconnect();
  await stack.stop();
});

/** The freight plan with s3 (the reply) depending on s2 (the rebooking); pending. */
async function submitted() {
  const runId = randomUUID();
  const steps = freightSteps.map((step) => ({
    ...step,
    args: { ...step.args },
    ...(step.id === 's3' ? { dependsOn: ['s2'] } : {}),
  }));
  const body = JSON.stringify({
    runId,
    agent: FREIGHT_AGENT,
    summary: freightSummary,
    context: freightContext,
    expiresIn: '2h',
    steps,
  });
  expect((await stack.agentRequest('POST', PATHS.runs, body)).status).toBe(202);
  const run = await stack.countersign.approvals.getRun(runId);
  if (run === undefined) throw new Error('submitted');
  return run;
}
const keys = () => stack.countersign.approvals.keys;
const releasesOf = (body: unknown) => (body as { releases: Release[] }).releases;

describe('GET /v1/runs/{runId}/releases', () => {
  it('answers none at once without a wait, then wakes a long poll with the signed release the JWKS verifies', async () => {
    const run = await submitted();
    expect(await stack.agentRequest('GET', PATHS.releases(run.runId))).toMatchObject({
      status: 200,
      body: { runId: run.runId, status: 'pending', releases: [] },
    });
    const started = Date.now();
    const polled = stack.agentRequest('GET', PATHS.releases(run.runId, 0, 30));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const release = releaseOf(run, 's1');
    await seedRelease(redis, keys(), release);
    const answer = await polled;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(answer).toMatchObject({ status: 200, body: { status: 'pending' } });
    expect(releasesOf(answer.body)).toEqual([release]);

    const jwks = keysFromJwks(await (await fetch(`${stack.baseUrl}${PATHS.jwks}`)).json());
    if (!jwks.ok) throw new Error(jwks.message);
    const [received] = releasesOf(answer.body);
    const s1 = run.current.plan.steps[0]!;
    expect(verifyDecisionStep(received!, s1, jwks.keys, Date.now())).toMatchObject({ ok: true });
    expect(verifyDecisionStep(received!, run.current.plan.steps[1]!, jwks.keys, Date.now())).toMatchObject({
      ok: false,
      reason: 'not_released',
    });
  });

  it('holds while the caller has every release, and answers with the next one', async () => {
    const run = await submitted();
    const first = releaseOf(run, 's1', { at: Date.now() - 1_000 });
    await seedRelease(redis, keys(), first);
    const held = stack.agentRequest('GET', PATHS.releases(run.runId, 1, 1));
    const started = Date.now();
    expect(releasesOf((await held).body)).toEqual([first]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    const polled = stack.agentRequest('GET', PATHS.releases(run.runId, 1, 30));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = releaseOf(run, 's2');
    await seedRelease(redis, keys(), second);
    expect(releasesOf((await polled).body)).toEqual([first, second]);
  });

  it('ends a long poll when the run is decided: no release comes after the decision', async () => {
    const run = await submitted();
    const polled = stack.agentRequest('GET', PATHS.releases(run.runId, 0, 30));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    await stack.click('U0OP1', await stack.card(run.runId), 'approve');
    const answer = await polled;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(answer.body).toMatchObject({ status: 'approved', releases: [] });
  });

  it('shows another agent’s run as not found, and refuses an `after` that is not a count', async () => {
    const run = await submitted();
    const asBilling = { agent: 'billing', secret: BILLING_SECRET };
    const foreign = await stack.agentRequest('GET', PATHS.releases(run.runId), '', asBilling);
    expect(foreign).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    const bad = await stack.agentRequest('GET', `/v1/runs/${run.runId}/releases?after=-1`);
    expect(bad).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
    const long = await stack.agentRequest('GET', `/v1/runs/${run.runId}/releases?wait=61`);
    expect(long.status).toBe(400);
  });
});

describe('GET /v1/runs/{runId} with dependencies', () => {
  it('shows each step’s dependencies, release and outcome, and the steps applied', async () => {
    const run = await submitted();
    const before = await stack.agentRequest('GET', PATHS.run(run.runId));
    expect(before.body).toMatchObject({
      applied: [],
      steps: [
        { id: 's1', dependsOn: [], released: null, outcome: null },
        { id: 's2', dependsOn: [], released: null, outcome: null },
        { id: 's3', dependsOn: ['s2'], released: null, outcome: null },
      ],
    });
    const release = releaseOf(run, 's2');
    await seedRelease(redis, keys(), release);
    await seedOutcome(redis, keys(), run.runId, 's2', 'applied');
    await seedOutcome(redis, keys(), run.runId, 's1', 'applying');
    await seedOutcome(redis, keys(), run.runId, 's3', 'failed');
    const after = await stack.agentRequest('GET', PATHS.run(run.runId));
    expect(after.body).toMatchObject({
      applied: ['s2'],
      steps: [
        { id: 's1', released: null, outcome: 'applying' },
        { id: 's2', released: release.releasedAt, outcome: 'applied' },
        { id: 's3', dependsOn: ['s2'], released: null, outcome: 'failed' },
      ],
    });
  });

  it('lists the releases endpoint in the OpenAPI document, with the Release schema', async () => {
    const openapi = (await (await fetch(`${stack.baseUrl}${PATHS.openapi}`)).json()) as {
      paths: Record<string, unknown>;
      components: { schemas: Record<string, unknown> };
    };
    expect(Object.keys(openapi.paths)).toContain('/v1/runs/{runId}/releases');
    expect(Object.keys(openapi.components.schemas)).toEqual(expect.arrayContaining(['Releases', 'Release']));
  });
});
