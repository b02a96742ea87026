/**
 * Releases and outcomes written straight into a run's hashes, as the release commit and the outcome
 * report store them (keys.ts): the agent side (gateway, clients) is tested against them while the
 * approvals lane builds the commits that write them for real.
 */
import type { Redis } from 'ioredis';
import { buildDecision } from '../../src/approvals/decision-builder.ts';
import type { Keys, RunView } from '../../src/approvals/index.ts';
import { type ReceiptSigner, type Release, signRelease } from '../../src/pipeline/index.ts';
import { testSigning } from './stack.ts';

/** Signs a release of `stepId` for the run's current version, as Countersign would. */
export function releaseOf(
  run: RunView,
  stepId: string,
  options: { readonly at?: number; readonly signer?: ReceiptSigner } = {},
): Release {
  const { plan } = buildDecision({
    runId: run.runId,
    agent: run.agent,
    status: 'approved',
    version: run.current,
    decidedAt: 0,
    decidedBy: null,
    configDigest: 'test-config',
  });
  if (plan === null) throw new Error('a run with a version has a plan');
  return signRelease(
    {
      kind: 'release',
      runId: run.runId,
      agent: run.agent,
      version: run.version,
      plan,
      stepId,
      releasedAt: new Date(options.at ?? Date.now()).toISOString(),
      configDigest: 'test-config',
    },
    options.signer ?? testSigning.signer,
  );
}

/**
 * Stores a release in the run's releases hash and its entry in the run's `released` map, and
 * announces it on the agent's released channel.
 */
export async function seedRelease(redis: Redis, keys: Keys, release: Release): Promise<void> {
  const runKeys = keys.forRun(release.runId);
  const digest = release.plan.steps.find((step) => step.id === release.stepId)?.digest;
  const released = JSON.parse((await redis.hget(runKeys.run, 'released')) ?? '{}') as Record<string, unknown>;
  released[release.stepId] = { at: Date.parse(release.releasedAt), version: release.version, digest };
  await redis.hset(runKeys.run, 'released', JSON.stringify(released));
  await redis.hset(runKeys.releases, release.stepId, JSON.stringify(release));
  await redis.publish(keys.releasedChannel(release.agent), release.runId);
}

/** Stores an outcome report for a step, as recordOutcome does. */
export async function seedOutcome(
  redis: Redis,
  keys: Keys,
  runId: string,
  stepId: string,
  status: 'applying' | 'applied' | 'failed',
  at = Date.now(),
): Promise<void> {
  await redis.hset(keys.forRun(runId).outcomes, stepId, JSON.stringify({ stepId, status, at }));
}
