/**
 * The decision outbox on real Redis: a hold that comes back after the decision's delivery (an attempt
 * that lost its race to the commit that decided the run) is taken back, never delivered twice; a
 * hold whose delivery has not happened yet stays for it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createKeys } from '../../src/approvals/keys.ts';
import { Outbox } from '../../src/approvals/outbox.ts';
import type { Decision } from '../../src/pipeline/index.ts';
import { testRedis } from '../helpers/redis.ts';

const { redis, prefix, cleanup } = testRedis('outbox');
afterAll(cleanup);
const keys = createKeys(prefix);

function outbox(delivered: string[]) {
  return new Outbox({
    redis,
    keys,
    deliver: async (decision) => {
      delivered.push(decision.runId);
    },
    onError: (error) => {
      throw error;
    },
  });
}

const decisionOf = (runId: string) => ({ runId, agent: 'a', status: 'expired' }) as unknown as Decision;

describe('the decision outbox', () => {
  it('takes back a hold that came after the delivery, and the sweep does not deliver it again', async () => {
    const delivered: string[] = [];
    const box = outbox(delivered);
    await redis.set(keys.forRun('late').decision, JSON.stringify(decisionOf('late')));
    await box.hold('late', 1);
    await box.deliver(decisionOf('late'));
    // The loser's hold lands after the winner's delivery.
    await box.hold('late', 2);
    await box.release('late');
    expect(await redis.zscore(keys.undelivered, 'late')).toBeNull();
    // And had it not been released (a process that died before), the sweep removes it undelivered.
    await box.hold('late', 3);
    expect(await box.sweep()).toBe(0);
    expect(await redis.zscore(keys.undelivered, 'late')).toBeNull();
    expect(delivered).toEqual(['late']);
  });

  it('leaves a hold whose decision is not delivered yet, for that delivery or the sweep', async () => {
    const delivered: string[] = [];
    const box = outbox(delivered);
    await redis.set(keys.forRun('early').decision, JSON.stringify(decisionOf('early')));
    await box.hold('early', 1);
    await box.release('early');
    expect(await redis.zscore(keys.undelivered, 'early')).not.toBeNull();
    expect(await box.sweep()).toBe(1);
    expect(delivered).toEqual(['early']);
    expect(await redis.zscore(keys.undelivered, 'early')).toBeNull();
  });
});
