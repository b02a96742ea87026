/**
 * One clock for all replicas: without an injected clock the service decides every transition at
 * Redis's `TIME`, read with the run, whatever this process's clock says; a commit decided before the
 * expiry that reaches Redis after it is refused and decided again. This process's clock is skewed
 * here with a spy on `Date.now` (test/bot/skewed-replica.test.ts skews a whole child process).
 */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import config from '../../examples/freight/countersign.config.ts';
import { addedRefundStep, freightPlan } from '../../examples/freight/plans.ts';
import { RedisClock, redisNow } from '../../src/approvals/redis-time.ts';
import { commitLoop } from '../../src/approvals/run-commit.ts';
import { ApprovalService } from '../../src/approvals/service.ts';
import type { UseCaseResult } from '../../src/approvals/types.ts';
import { approve } from '../../src/approvals/use-cases/approve.ts';
import {
  type Decision,
  signDecision,
  signRelease,
  type UnsignedDecision,
  type UnsignedRelease,
} from '../../src/pipeline/index.ts';
import { testRedis } from '../helpers/redis.ts';
import { testSigning } from '../support/stack.ts';

const { redis, prefix, cleanup } = testRedis('redis-time');
afterAll(cleanup);
afterEach(() => {
  vi.restoreAllMocks();
});

const TEN_MINUTES = 10 * 60_000;
const realNow = Date.now.bind(Date);
/**
 * This process's clock runs `skewMs` ahead (negative: behind) of the real one from here on, for
 * services made after the call (a service made before holds the `Date.now` it was made with).
 */
const skewLocalClock = (skewMs: number) => vi.spyOn(Date, 'now').mockImplementation(() => realNow() + skewMs);

let runCounter = 0;
const delivered: Decision[] = [];
const service = () =>
  new ApprovalService({
    redis,
    config,
    prefix,
    signer: testSigning.signer,
    deliver: async (decision) => {
      delivered.push(decision);
    },
  });

/** A run needing two finance approvals (the large refund), expiring `expiresInMs` after Redis's now. */
async function submit(svc: ApprovalService, expiresInMs: number) {
  const runId = `run-time-${++runCounter}`;
  const now = await redisNow(redis);
  const plan = freightPlan({ runId, now, expiresInMs });
  const raw = JSON.stringify({ ...plan, steps: [...plan.steps, addedRefundStep] });
  const result = await svc.submitPlan({ runId, agent: 'freight-ops', raw });
  expect(result.kind).toBe('pending');
  return { runId, expiresAt: Date.parse(plan.expiresAt) };
}

const sign = (unsigned: UnsignedDecision) => signDecision(unsigned, testSigning.signer);
const release = (unsigned: UnsignedRelease) => signRelease(unsigned, testSigning.signer);

/** The run's journal records: when each was written and what happened. */
async function journalOf(svc: ApprovalService, runId: string) {
  const records = await redis.lrange(svc.keys.forRun(runId).journal, 0, -1);
  return records.map((text) => JSON.parse(text) as { at: string; event: { type: string } });
}

const sleepUntilRedis = async (at: number) => {
  while ((await redisNow(redis)) < at) await new Promise((resolve) => setTimeout(resolve, 20));
};

function kindOf<K extends UseCaseResult['kind']>(result: UseCaseResult, kind: K) {
  expect(result.kind, JSON.stringify(result).slice(0, 300)).toBe(kind);
  return result as Extract<UseCaseResult, { kind: K }>;
}

describe("transitions decide at Redis's TIME", () => {
  it('accepts an approval before the expiry on a process whose clock is 10 minutes past it, at Redis’s time', async () => {
    const svc = service();
    const before = await redisNow(redis);
    const { runId } = await submit(svc, 60_000);
    skewLocalClock(TEN_MINUTES);
    const answer = kindOf(await service().approve({ runId, version: 1, userId: 'U0FIN1' }), 'awaiting');
    expect(answer.approvedSteps).toEqual(['s4']);
    vi.restoreAllMocks();
    const after = await redisNow(redis);
    const run = await svc.getRun(runId);
    expect(run?.status).toBe('pending');
    expect(run?.createdAt).toBeGreaterThanOrEqual(before);
    expect(run?.createdAt).toBeLessThanOrEqual(after);
    const journal = await journalOf(svc, runId);
    expect(journal.map((record) => record.event.type)).toEqual(['submitted', 'validated', 'approval']);
    for (const record of journal) {
      expect(Date.parse(record.at)).toBeGreaterThanOrEqual(before);
      expect(Date.parse(record.at)).toBeLessThanOrEqual(after);
    }
  });

  it('refuses an approval after the expiry on a process whose clock is 10 minutes behind, and expires the run at Redis’s time', async () => {
    const svc = service();
    const { runId, expiresAt } = await submit(svc, 300);
    await sleepUntilRedis(expiresAt);
    skewLocalClock(-TEN_MINUTES);
    const answer = kindOf(await service().approve({ runId, version: 1, userId: 'U0FIN1' }), 'expired');
    vi.restoreAllMocks();
    const after = await redisNow(redis);
    const decidedAt = Date.parse(answer.decision?.decidedAt ?? '');
    expect(decidedAt).toBeGreaterThanOrEqual(expiresAt);
    expect(decidedAt).toBeLessThanOrEqual(after);
    expect(delivered.find((decision) => decision.runId === runId)?.status).toBe('expired');
  });

  it('refuses the form of a click after the expiry on a slow process (mayReject expires the run)', async () => {
    const svc = service();
    const { runId, expiresAt } = await submit(svc, 300);
    await sleepUntilRedis(expiresAt);
    skewLocalClock(-TEN_MINUTES);
    const answer = await service().mayReject({ runId, version: 1, userId: 'U0FIN1' });
    expect(answer.ok ? 'open' : answer.refusal.kind).toBe('expired');
  });

  it('refuses an approval decided before the expiry that reaches Redis after it; the retry expires the run', async () => {
    const svc = service();
    const { runId, expiresAt } = await submit(svc, 400);
    const keys = svc.keys.forRun(runId);
    const decidedAt: number[] = [];
    const { attempt, committed } = await commitLoop(redis, keys, 'redis', async (snapshot, now) => {
      decidedAt.push(now);
      // The first attempt decides before the expiry, then stalls past it (a long GC pause, a slow host).
      if (decidedAt.length === 1) await sleepUntilRedis(expiresAt + 50);
      return approve({ config, keys: svc.keys, now, sign, signRelease: release }, snapshot, {
        runId,
        version: 1,
        userId: 'U0FIN1',
      });
    });
    expect(decidedAt).toHaveLength(2);
    expect(decidedAt[0]).toBeLessThan(expiresAt);
    expect(decidedAt[1]).toBeGreaterThanOrEqual(expiresAt);
    expect(committed).toBe(true);
    expect(attempt.result.kind).toBe('expired');
    const journal = await journalOf(svc, runId);
    expect(journal.map((record) => record.event.type)).toEqual(['submitted', 'validated', 'expired']);
    expect(await redis.hlen(keys.approvals)).toBe(0);
  });

  it('commits a transition decided and landing before the expiry', async () => {
    const svc = service();
    const { runId } = await submit(svc, 60_000);
    const keys = svc.keys.forRun(runId);
    const { attempt, committed } = await commitLoop(redis, keys, 'redis', (snapshot, now) =>
      approve({ config, keys: svc.keys, now, sign, signRelease: release }, snapshot, {
        runId,
        version: 1,
        userId: 'U0FIN1',
      }),
    );
    expect(committed).toBe(true);
    expect(attempt.result.kind).toBe('awaiting');
  });
});

describe('RedisClock', () => {
  it('tells Redis’s time on a process whose clock is 10 minutes off', async () => {
    const clock = new RedisClock(redis);
    skewLocalClock(TEN_MINUTES);
    await clock.start();
    try {
      expect(clock.offset).toBeLessThan(-TEN_MINUTES + 1_000);
      expect(clock.offset).toBeGreaterThan(-TEN_MINUTES - 1_000);
      const estimate = clock.now();
      const actual = await redisNow(redis);
      expect(Math.abs(actual - estimate)).toBeLessThan(100);
    } finally {
      clock.stop();
    }
  });
});
