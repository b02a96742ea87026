/**
 * The sliding edit window and the drift alarm on real Redis, fed synthetic histories: the share of
 * rewritten plans crossing the threshold raises the alarm once, it is not raised again while it stays
 * above, it recovers below, and crossing again raises it again; too few plans decide nothing; the
 * window slides. Then the service feeding the window from its own commits.
 */
import { afterAll, describe, expect, it } from 'vitest';
import config from '../../examples/freight/countersign.config.ts';
import { addedRefundStep, freightPlan } from '../../examples/freight/plans.ts';
import { EditWindow, touchedSince } from '../../src/approvals/edit-window.ts';
import { createKeys } from '../../src/approvals/keys.ts';
import { ApprovalService } from '../../src/approvals/service.ts';
import { testRedis } from '../helpers/redis.ts';
import { testSigning } from '../support/stack.ts';

const { redis, prefix, cleanup } = testRedis('edit-window');
afterAll(cleanup);

const HOUR = 3_600_000;
const rule = { above: 0.3, minPlans: 10 };

/** A fresh agent's window (24 h), and helpers writing plans into it. */
function windowFor(agent: string) {
  const window = new EditWindow(redis, createKeys(prefix), () => 24 * HOUR);
  let n = 0;
  return {
    window,
    /** `count` plans submitted at `at`, of which `rewritten` had 3 of 4 steps touched and `light` 1 of 4. */
    async plans(at: number, count: number, rewritten = 0, light = 0) {
      for (let i = 0; i < count; i++) {
        const runId = `${agent}-${n++}`;
        await window.submitted(agent, runId, at);
        if (i < rewritten) await window.edited(agent, runId, at, { touched: 3, total: 4 });
        else if (i < rewritten + light) await window.edited(agent, runId, at, { touched: 1, total: 4 });
      }
    },
  };
}

describe('the drift alarm on a synthetic history', () => {
  it('is raised once on crossing, claimed by one poster, and raised again only after recovering', async () => {
    const { window, plans } = windowFor('drifty');
    const t0 = Date.parse('2026-04-01T00:00:00Z');
    await plans(t0, 9, 5); // 5 of 9 rewritten, but fewer plans than minPlans: nothing yet
    expect(await window.evaluate('drifty', rule, t0)).toMatchObject({ kind: 'steady', raised: false });

    await plans(t0 + HOUR, 1); // 5 of 10 = 50% ≥ 30%
    const raised = await window.evaluate('drifty', rule, t0 + HOUR);
    expect(raised).toMatchObject({ kind: 'raised', stats: { plans: 10, edited: 5, heavy: 5, share: 0.5 } });
    expect(await window.claimAlarmPost('drifty', t0 + HOUR)).toBe(true);
    // A second process (or the sweep) finds it claimed: one post.
    expect(await window.claimAlarmPost('drifty', t0 + HOUR + 1_000)).toBe(false);
    await window.alarmPosted('drifty');
    expect(await window.claimAlarmPost('drifty', t0 + 3 * HOUR)).toBe(false);

    await plans(t0 + 2 * HOUR, 2, 2); // still above: not raised again
    expect(await window.evaluate('drifty', rule, t0 + 2 * HOUR)).toMatchObject({
      kind: 'steady',
      raised: true,
    });

    await plans(t0 + 3 * HOUR, 12, 0, 3); // 7 of 24 = 29% < 30%: recovered
    expect(await window.evaluate('drifty', rule, t0 + 3 * HOUR)).toMatchObject({
      kind: 'recovered',
      stats: { plans: 24, heavy: 7 },
    });
    expect(await window.evaluate('drifty', rule, t0 + 3 * HOUR)).toMatchObject({
      kind: 'steady',
      raised: false,
    });

    await plans(t0 + 4 * HOUR, 1, 1); // 8 of 25 = 32%: crossed again
    expect((await window.evaluate('drifty', rule, t0 + 4 * HOUR)).kind).toBe('raised');
    expect(await window.claimAlarmPost('drifty', t0 + 4 * HOUR)).toBe(true);
  });

  it('lets a claim that was never posted (the poster died) be taken again after its lease', async () => {
    const { window, plans } = windowFor('crashy');
    const t0 = Date.parse('2026-04-01T00:00:00Z');
    await plans(t0, 10, 10);
    expect((await window.evaluate('crashy', rule, t0)).kind).toBe('raised');
    expect(await window.claimAlarmPost('crashy', t0)).toBe(true);
    expect(await window.claimAlarmPost('crashy', t0 + 30_000)).toBe(false);
    expect(await window.claimAlarmPost('crashy', t0 + 61_000)).toBe(true);
  });

  it('slides: plans older than the window are forgotten, and the alarm recovers as they leave', async () => {
    const { window, plans } = windowFor('sliding');
    const t0 = Date.parse('2026-04-01T00:00:00Z');
    await plans(t0, 10, 6);
    expect((await window.evaluate('sliding', rule, t0)).kind).toBe('raised');
    await plans(t0 + 20 * HOUR, 10, 1);
    // 25 h later only the second batch is in the window: 1 of 10.
    const later = await window.evaluate('sliding', rule, t0 + 25 * HOUR);
    expect(later).toMatchObject({ kind: 'recovered', stats: { plans: 10, heavy: 1 } });
  });

  it('ranks the most edited runs by the share of their steps touched', async () => {
    const window = new EditWindow(redis, createKeys(prefix), () => 24 * HOUR);
    const at = Date.parse('2026-04-01T00:00:00Z');
    for (const [runId, touched, total] of [
      ['a', 1, 4],
      ['b', 4, 4],
      ['c', 3, 4],
      ['d', 3, 5],
      ['e', 2, 2],
    ] as const) {
      await window.submitted('ranked', runId, at);
      await window.edited('ranked', runId, at, { touched, total });
    }
    const stats = await window.stats('ranked', at);
    expect(stats.mostEdited.map((run) => run.runId)).toEqual(['b', 'e', 'c']);
    // An edit that reverts a run below half takes it out of the rewritten plans.
    await window.edited('ranked', 'b', at, { touched: 1, total: 4 });
    expect((await window.stats('ranked', at)).heavy).toBe(3);
  });
});

describe('the service feeds the window from its commits', () => {
  it('counts each validated submission once, and each edited run by the steps touched since v1', async () => {
    let now = Date.parse('2026-04-01T09:00:00Z');
    const service = new ApprovalService({
      redis,
      config,
      prefix: `${prefix}-svc`,
      signer: testSigning.signer,
      clock: () => now,
    });
    for (const runId of ['w1', 'w2', 'w3']) {
      const raw = JSON.stringify(freightPlan({ runId, now }));
      expect((await service.submitPlan({ runId, agent: 'freight-ops', raw })).kind).toBe('pending');
      // A retried submission is a duplicate: counted once.
      expect((await service.submitPlan({ runId, agent: 'freight-ops', raw })).kind).toBe('duplicate');
      now += 1_000;
    }
    const v1 = (await service.getRun('w1'))!.current.plan;
    const steps = v1.steps.map(({ id, tool, args }) => ({ id, tool, args }));
    // Finance adds a refund and rewrites the reply: 2 of 4 step ids touched, not more than half.
    const rewritten = steps.map((s) =>
      s.tool === 'send_reply' ? { ...s, args: { ...s.args, body: 'We are sorry.' } } : s,
    );
    const edited = await service.applyEdit({
      runId: 'w1',
      baseVersion: 1,
      editorId: 'U0FIN1',
      steps: [...rewritten, addedRefundStep],
    });
    expect(edited.kind).toBe('edited');
    let stats = await service.editWindow.stats('freight-ops', now);
    expect(stats).toMatchObject({ plans: 3, edited: 1, heavy: 0 });
    expect(stats.mostEdited).toEqual([{ runId: 'w1', touchedSteps: 2, totalSteps: 4 }]);
    // A second edit also moves the delivery: 3 of 4 touched since the agent's plan.
    const moved = [...rewritten, addedRefundStep].map((s) =>
      s.tool === 'reschedule_delivery' ? { ...s, args: { ...s.args, window: '2026-04-06' } } : s,
    );
    expect(
      (await service.applyEdit({ runId: 'w1', baseVersion: 2, editorId: 'U0FIN1', steps: moved })).kind,
    ).toBe('edited');
    stats = await service.editWindow.stats('freight-ops', now);
    expect(stats).toMatchObject({ plans: 3, edited: 1, heavy: 1 });
    expect(stats.share).toBeCloseTo(1 / 3);
    const current = (await service.getRun('w1'))!.current.plan;
    expect(touchedSince(v1, current)).toEqual({ touched: 3, total: 4 });
  });
});
