/**
 * An expiry storm at Redis's own time (no injected clock, so `commit.lua` checks its deadline): many
 * runs expiring at one instant, each timer racing a click on another replica, decide each run once and
 * never before its `expiresAt`; a superseded version's timer refuses. The guard rails for any change
 * that makes the storm cheaper (issue 14).
 */
import { afterAll, describe, expect, it } from 'vitest';
import config from '../../examples/freight/countersign.config.ts';
import { freightPlan } from '../../examples/freight/plans.ts';
import { verifyJournal } from '../../src/approvals/journal.ts';
import { redisNow } from '../../src/approvals/redis-time.ts';
import { ApprovalService } from '../../src/approvals/service.ts';
import type { Decision } from '../../src/pipeline/index.ts';
import { createRedisConnection } from '../../src/queue/index.ts';
import { deleteKeysUnder, redisUrl, uniquePrefix } from '../helpers/redis.ts';
import { testSigning } from '../support/stack.ts';

const redis = createRedisConnection(redisUrl(), { role: 'client' });
const prefix = uniquePrefix('expiry-storm');
afterAll(async () => {
  await deleteKeysUnder(redis, prefix);
  await redis.quit();
});

function service(delivered: Decision[]) {
  return new ApprovalService({
    redis,
    config,
    prefix,
    signer: testSigning.signer,
    deliver: async (decision) => {
      delivered.push(decision);
    },
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

async function submitExpiringAt(svc: ApprovalService, runIds: readonly string[], expiresAt: number) {
  const now = await redisNow(redis);
  await Promise.all(
    runIds.map(async (runId) => {
      const raw = JSON.stringify(freightPlan({ runId, now, expiresInMs: expiresAt - now }));
      expect((await svc.submitPlan({ runId, agent: 'freight-ops', raw })).kind).toBe('pending');
    }),
  );
}

describe('an expiry storm at Redis time', () => {
  it('40 runs expiring at once, each timer racing a click: one decision per run, none before expiresAt', async () => {
    const delivered: Decision[] = [];
    const svc = service(delivered);
    const runIds = Array.from({ length: 40 }, (_, index) => `storm-${index}`);
    const expiresAt = (await redisNow(redis)) + 1_500;
    await submitExpiringAt(svc, runIds, expiresAt);

    // Early by Redis's time: every timer answers pending and changes nothing.
    const early = await Promise.all(runIds.map((runId) => svc.expire({ runId, version: 1 })));
    expect(early.map((result) => result.kind)).toEqual(runIds.map(() => 'pending'));
    expect(delivered).toHaveLength(0);

    await sleep(expiresAt - Date.now() + 20);
    const replicas = [service(delivered), service(delivered)];
    const results = await Promise.all(
      runIds.flatMap((runId, index) => [
        replicas[index % 2]!.expire({ runId, version: 1 }),
        replicas[(index + 1) % 2]!.approve({ runId, version: 1, userId: 'U0OP1' }),
      ]),
    );
    // A click at or past expiresAt expires the run too; whoever commits first decides it.
    expect(new Set(results.map((result) => result.kind))).toEqual(new Set(['expired', 'already_decided']));
    expect(delivered.map((decision) => decision.runId).sort()).toEqual([...runIds].sort());
    for (const decision of delivered) {
      expect(decision.status).toBe('expired');
      expect(Date.parse(decision.decidedAt)).toBeGreaterThanOrEqual(expiresAt);
    }
    for (const runId of runIds) {
      const journal = await redis.lrange(svc.keys.forRun(runId).journal, 0, -1);
      expect(verifyJournal(journal).ok).toBe(true);
      expect(journal.filter((text) => JSON.parse(text).event.type === 'expired')).toHaveLength(1);
    }
    expect(await redis.zcard(svc.keys.undelivered)).toBe(0);
  });

  it('a timer for a superseded version refuses while the current version expires', async () => {
    const delivered: Decision[] = [];
    const svc = service(delivered);
    const runId = 'storm-edited';
    const expiresAt = (await redisNow(redis)) + 1_000;
    await submitExpiringAt(svc, [runId], expiresAt);
    const base = (await svc.getRun(runId))!.current.plan;
    const steps = base.steps.map(({ id, tool, args }) =>
      id === 's3' ? { id, tool, args: { ...args, body: 'Changed.' } } : { id, tool, args },
    );
    expect((await svc.applyEdit({ runId, baseVersion: 1, editorId: 'U0OP1', steps })).kind).toBe('edited');

    await sleep(expiresAt - Date.now() + 20);
    const [stale, current] = await Promise.all([
      svc.expire({ runId, version: 1 }),
      svc.expire({ runId, version: 2 }),
    ]);
    expect(current.kind).toBe('expired');
    // The superseded timer either ran first (stale) or after the expiry (already decided): never expired.
    expect(['stale', 'already_decided']).toContain(stale.kind);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({ runId, status: 'expired' });
  });
});
