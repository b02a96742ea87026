/**
 * Reading a run's releases and its applied steps from Redis. The hashes are seeded directly, as the
 * release commit and the outcome report store them (test/support/releases.ts).
 */
import { afterAll, describe, expect, it } from 'vitest';
import config from '../../examples/freight/countersign.config.ts';
import { freightPlan } from '../../examples/freight/plans.ts';
import { readReleases } from '../../src/approvals/releases-read.ts';
import { ApprovalService } from '../../src/approvals/service.ts';
import { receiptKeysOf, verifyDecisionStep } from '../../src/pipeline/index.ts';
import { testRedis } from '../helpers/redis.ts';
import { releaseOf, seedRelease } from '../support/releases.ts';
import { testSigning } from '../support/stack.ts';

const { redis, prefix, cleanup } = testRedis('releases-read');
afterAll(cleanup);
const now = Date.parse('2026-04-01T10:00:00Z');
const service = new ApprovalService({ redis, config, prefix, signer: testSigning.signer, clock: () => now });
const { keys } = service;
let counter = 0;

async function pendingRun() {
  const runId = `run-releases-${++counter}`;
  const plan = freightPlan({ runId, now });
  const raw = JSON.stringify({
    ...plan,
    steps: plan.steps.map((s) => (s.id === 's3' ? { ...s, dependsOn: ['s2'] } : s)),
  });
  expect((await service.submitPlan({ runId, agent: 'freight-ops', raw })).kind).toBe('pending');
  const run = await service.getRun(runId);
  if (run === undefined) throw new Error('submitted');
  return run;
}

describe('readReleases', () => {
  it('answers none for a run that released nothing, and for an unknown run', async () => {
    const run = await pendingRun();
    expect(await readReleases(redis, keys, run.runId)).toEqual([]);
    expect(await readReleases(redis, keys, 'no-such-run')).toEqual([]);
  });

  it('answers the signed releases as stored, oldest first, each verifying for its own step only', async () => {
    const run = await pendingRun();
    const later = releaseOf(run, 's3', { at: now + 2_000 });
    const earlier = releaseOf(run, 's1', { at: now + 1_000 });
    await seedRelease(redis, keys, later);
    await seedRelease(redis, keys, earlier);
    const releases = await readReleases(redis, keys, run.runId);
    expect(releases).toEqual([earlier, later]);
    const keysOf = receiptKeysOf(testSigning.publicKeys);
    const s1 = run.current.plan.steps[0]!;
    expect(verifyDecisionStep(releases[0]!, s1, keysOf, now)).toMatchObject({ ok: true });
    expect(verifyDecisionStep(releases[1]!, s1, keysOf, now)).toMatchObject({
      ok: false,
      reason: 'not_released',
    });
  });

  it('throws on a stored release that is not one, or names another step', async () => {
    const run = await pendingRun();
    await redis.hset(keys.forRun(run.runId).releases, 's1', '{"kind":"decision"}');
    await expect(readReleases(redis, keys, run.runId)).rejects.toThrow(/release of step s1/);
    await redis.hset(keys.forRun(run.runId).releases, 's1', JSON.stringify(releaseOf(run, 's2')));
    await expect(readReleases(redis, keys, run.runId)).rejects.toThrow(/another step/);
  });
});
