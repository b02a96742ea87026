/**
 * The timer scheduler, the processor and boot-time reconciliation against real Redis and BullMQ, with
 * the freight config (escalation after 15 min and 1 h) and a clock the test moves: no worker runs here
 * unless a test starts one, so delayed jobs are inspected, never waited for.
 */
import { UnrecoverableError, Worker } from 'bullmq';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { FREIGHT_AGENT, freightPlan } from '../../examples/freight/plans.ts';
import type { JournalRecord, RunView, UseCaseResult } from '../../src/approvals/index.ts';
import {
  bullPrefix,
  createTimerProcessor,
  expireOverdue,
  OVERDUE_GRACE_MS,
  reconcileTimers,
  TIMERS_QUEUE,
  TimerScheduler,
} from '../../src/queue/index.ts';
import { freightConfig } from '../support/freight.ts';
import { serviceStack } from '../support/stack.ts';

const MIN = 60_000;
const START = Date.parse('2026-04-01T10:00:00Z');
let now = START;
const clock = () => now;
let runCounter = 0;

/**
 * The approvals service and a scheduler under a prefix of their own, on the moved clock, with helpers
 * to read what they did. Each describe block has its own, so reconciliation sees only its runs.
 */
function timersHarness(name: string) {
  const stack = serviceStack(name, { clock });
  const { service } = stack;
  const scheduler = new TimerScheduler({
    connection: stack.redis,
    prefix: stack.prefix,
    escalation: freightConfig.escalation,
    clock,
  });
  /** Every committed result, as the service's listeners see it (the scheduler is one of them). */
  const committed: UseCaseResult[] = [];
  service.onCommitted(async (result) => {
    committed.push(result);
    await scheduler.onCommitted(result);
  });
  beforeEach(async () => {
    now = START;
    committed.length = 0;
    await scheduler.queue.obliterate({ force: true });
  });
  afterAll(async () => {
    await scheduler.queue.obliterate({ force: true });
    await scheduler.close();
    await stack.cleanup();
  });
  return {
    stack,
    service,
    scheduler,
    committed,
    /** A pending freight run (expires 2 h after `now`). */
    async pendingRun(): Promise<RunView> {
      const runId = `run-timers-${++runCounter}`;
      const result = await service.submitPlan({
        runId,
        agent: FREIGHT_AGENT,
        raw: JSON.stringify(freightPlan({ runId, now })),
      });
      if (result.kind !== 'pending') throw new Error(`expected pending, got ${result.kind}`);
      return result.run;
    },
    /** Waiting timer jobs of the run: id → minutes it was delayed by when added. */
    async waiting(runId: string): Promise<Record<string, number>> {
      const jobs = await scheduler.queue.getJobs(['delayed', 'waiting']);
      return Object.fromEntries(
        jobs
          .filter((job) => job.id?.includes(runId))
          .map((job) => [job.id?.replace(runId, '<run>') ?? '', Math.round((job.delay ?? 0) / MIN)]),
      );
    },
    async journal(runId: string): Promise<JournalRecord['event'][]> {
      const records = await stack.redis.lrange(service.keys.forRun(runId).journal, 0, -1);
      return records.map((text) => (JSON.parse(text) as JournalRecord).event);
    },
  };
}

describe('TimerScheduler', () => {
  const { service, scheduler, pendingRun, waiting } = timersHarness('timer-scheduler');

  it('gives a pending run its expiry and its first escalation level, once however often it is asked', async () => {
    // Submitting commits the run: the scheduler, listening, gave it its timers already.
    const run = await pendingRun();
    await scheduler.schedule(run);
    expect(await waiting(run.runId)).toEqual({ 'expire-<run>-v1': 120, 'escalate-<run>-v1-l1': 15 });
    expect(await scheduler.queue.getDelayedCount()).toBe(2);
  });

  it('schedules the step after the last one that fired — recorded by its commit — with the delay left', async () => {
    const run = await pendingRun();
    now += 15 * MIN;
    const escalated = await service.escalate({ runId: run.runId, version: 1, level: 1 });
    expect(escalated).toMatchObject({ kind: 'escalated', run: { chainStep: { version: 1, step: 'l1' } } });
    await scheduler.queue.obliterate({ force: true });
    now += 5 * MIN;
    await scheduler.schedule((await service.getRun(run.runId))!);
    expect(await waiting(run.runId)).toEqual({ 'expire-<run>-v1': 100, 'escalate-<run>-v1-l2': 40 });
  });

  it('after an edit starts version 2’s clock and removes version 1’s timers; a decision removes the rest', async () => {
    const run = await pendingRun();
    await scheduler.schedule(run);
    now += 30 * MIN;
    const edited = await service.applyEdit({
      runId: run.runId,
      baseVersion: 1,
      editorId: 'U0OP1',
      steps: run.current.plan.steps.map(({ id, tool, args }) =>
        id === 's2' ? { id, tool, args: { ...args, window: '2026-04-06' } } : { id, tool, args },
      ),
    });
    expect(edited.kind).toBe('edited');
    expect(await waiting(run.runId)).toEqual({ 'expire-<run>-v2': 90, 'escalate-<run>-v2-l1': 15 });

    const approved = await service.approve({ runId: run.runId, version: 2, userId: 'U0OP1' });
    expect(approved.kind).toBe('approved');
    expect(await waiting(run.runId)).toEqual({});
  });
});

describe('the timers processor', () => {
  const { service, pendingRun, waiting, journal, committed } = timersHarness('timer-processor');
  const process = createTimerProcessor({ service });
  /** What the listeners were shown after the run was submitted. */
  const shown = () => committed.filter((result) => result.kind !== 'pending');

  it('refuses malformed job data without retry', async () => {
    await expect(process({ data: { kind: 'expire', runId: 'x y', version: 1 } })).rejects.toBeInstanceOf(
      UnrecoverableError,
    );
    await expect(process({ data: { kind: 'explode' } })).rejects.toBeInstanceOf(UnrecoverableError);
  });

  it('puts back an expiry that fires before expiresAt (by the service’s time) for the time left, and expires the run once it is due', async () => {
    const run = await pendingRun();
    const expiresAt = Date.parse(run.current.plan.expiresAt);
    const data = { kind: 'expire', runId: run.runId, version: 1 };
    now = expiresAt - 3 * MIN;
    expect(await process({ data })).toEqual({ kind: 'early', retryInMs: 3 * MIN });
    expect(shown()).toEqual([]);
    now = expiresAt;
    expect(await process({ data })).toEqual({ kind: 'expired' });
    expect(shown().map((result) => result.kind)).toEqual(['expired']);
    expect(await service.getDecision(run.runId)).toMatchObject({ status: 'expired', decidedBy: 'timer' });
  });

  it('escalates: records the level’s people and the step; its listeners schedule the next level', async () => {
    const run = await pendingRun();
    now += 15 * MIN;
    const step = {
      kind: 'escalate',
      runId: run.runId,
      agent: FREIGHT_AGENT,
      version: 1,
      level: 1,
      repeat: 0,
    } as const;
    expect(await process({ data: step })).toEqual({ kind: 'escalated' });
    expect(shown()).toMatchObject([
      {
        kind: 'escalated',
        level: 1,
        step: { kind: 'escalate', level: 1, repeat: 0 },
        run: { escalatedTo: ['U0LEAD1'], escalatedAt: now, chainStep: { version: 1, step: 'l1' } },
      },
    ]);
    expect(await waiting(run.runId)).toMatchObject({ 'escalate-<run>-v1-l2': 45 });
    // U0LEAD1 is no operator, but level 1 lets them approve the operators' steps.
    expect((await service.approve({ runId: run.runId, version: 1, userId: 'U0LEAD1' })).kind).toBe(
      'approved',
    );
  });

  it('puts back an escalation or a reminder that fires before its due time, changing nothing', async () => {
    const run = await pendingRun();
    const step = {
      kind: 'escalate',
      runId: run.runId,
      agent: FREIGHT_AGENT,
      version: 1,
      level: 1,
      repeat: 0,
      dueAt: now + 15 * MIN,
    } as const;
    now += 5 * MIN;
    expect(await process({ data: step })).toEqual({ kind: 'early', retryInMs: 10 * MIN });
    const remind = { kind: 'remind', runId: run.runId, agent: FREIGHT_AGENT, version: 1, dueAt: now + MIN };
    expect(await process({ data: remind })).toEqual({ kind: 'early', retryInMs: MIN });
    expect(shown()).toEqual([]);
    expect((await journal(run.runId)).map((event) => event.type)).toEqual(['submitted', 'validated']);
    now += 10 * MIN;
    expect(await process({ data: step })).toEqual({ kind: 'escalated' });
  });

  it('reminds while the run is pending, and expires it instead when the reminder is overdue', async () => {
    const run = await pendingRun();
    const remind = { kind: 'remind', runId: run.runId, agent: FREIGHT_AGENT, version: 1 } as const;
    expect(await process({ data: remind })).toEqual({ kind: 'reminded' });
    expect(shown()).toMatchObject([
      { kind: 'reminded', run: { chainStep: { version: 1, step: 'reminder' } } },
    ]);
    now = Date.parse(run.current.plan.expiresAt);
    expect(await process({ data: remind })).toEqual({ kind: 'expired' });
    expect(shown().map((result) => result.kind)).toEqual(['reminded', 'expired']);
  });

  it('a timer for a decided or superseded version only journals stale_timer', async () => {
    const run = await pendingRun();
    await service.approve({ runId: run.runId, version: 1, userId: 'U0OP1' });
    const step = {
      kind: 'escalate',
      runId: run.runId,
      agent: FREIGHT_AGENT,
      version: 1,
      level: 1,
      repeat: 0,
    };
    expect(await process({ data: step })).toEqual({ kind: 'already_decided' });
    expect(
      await process({ data: { kind: 'remind', runId: run.runId, agent: FREIGHT_AGENT, version: 1 } }),
    ).toEqual({ kind: 'already_decided' });
    expect(shown().filter((result) => result.kind === 'escalated' || result.kind === 'reminded')).toEqual([]);
    expect((await journal(run.runId)).filter((event) => event.type === 'stale_timer')).toEqual([
      { type: 'stale_timer', timer: 'escalate-v1-l1', version: 1, currentVersion: 1 },
      { type: 'stale_timer', timer: 'remind-v1', version: 1, currentVersion: 1 },
    ]);
  });
});

describe('reconcileTimers', () => {
  const { stack, service, scheduler, pendingRun, waiting, committed } = timersHarness('timer-reconcile');
  const reconcile = () => reconcileTimers({ service, ensure: (run) => scheduler.ensure(run), clock });

  it('restores lost timers, expires runs past expiresAt, and adds nothing on a second pass', async () => {
    const kept = await pendingRun(); // expires at +120 min
    now += 5 * MIN;
    const late = await pendingRun(); // expires at +125 min
    now += 116 * MIN; // `kept` is past its expiry, `late` is not
    await scheduler.queue.obliterate({ force: true }); // the timers were lost

    const summary = await reconcile();
    expect(summary).toMatchObject({ expired: 1, failed: 0 });
    expect(summary.checked).toBe(2);
    expect(
      committed
        .filter((result) => result.kind === 'expired')
        .map((result) => 'run' in result && result.run?.runId),
    ).toEqual([kept.runId]);
    expect(await service.getDecision(kept.runId)).toMatchObject({ status: 'expired' });
    // `late` is past all of its escalation steps' due times: the first is due now, the expiry in 4 min.
    expect(await waiting(late.runId)).toEqual({ 'expire-<run>-v1': 4, 'escalate-<run>-v1-l1': 0 });

    const jobs = await scheduler.queue.getJobCounts('delayed', 'waiting');
    await reconcile();
    expect(await scheduler.queue.getJobCounts('delayed', 'waiting')).toEqual(jobs);
  });

  it('keeps the timers of a run that looks overdue by this process’s clock but is not by the service’s', async () => {
    const run = await pendingRun();
    await scheduler.queue.obliterate({ force: true });
    const expiresAt = Date.parse(run.current.plan.expiresAt);
    const fastClock = () => expiresAt + 10 * MIN;
    const summary = await reconcileTimers({
      service,
      ensure: (pending) => scheduler.ensure(pending),
      clock: fastClock,
    });
    expect(summary).toMatchObject({ expired: 0, failed: 0 });
    expect((await service.getRun(run.runId))?.status).toBe('pending');
    expect(await waiting(run.runId)).toEqual({ 'expire-<run>-v1': 120, 'escalate-<run>-v1-l1': 15 });
  });

  it('the expiry sweep expires a run whose timer is late by more than the grace, and leaves the rest to their timers', async () => {
    const late = await pendingRun(); // expires at +120 min
    now += 5 * MIN;
    const kept = await pendingRun(); // expires at +125 min
    now = Date.parse(late.current.plan.expiresAt) + OVERDUE_GRACE_MS + 1;
    // Runs of earlier tests in this block may be overdue too: count at least ours.
    expect(await expireOverdue({ service })).toBeGreaterThanOrEqual(1);
    expect(await service.getDecision(late.runId)).toMatchObject({ status: 'expired', decidedBy: 'timer' });
    expect((await service.getRun(kept.runId))?.status).toBe('pending');
    now = Date.parse(kept.current.plan.expiresAt) + OVERDUE_GRACE_MS - 1;
    await expireOverdue({ service });
    expect((await service.getRun(kept.runId))?.status).toBe('pending');
    now += 2;
    await expireOverdue({ service });
    expect((await service.getRun(kept.runId))?.status).toBe('expired');
  });

  it('starts the clock of a version whose edit was never rescheduled, and removes the older version’s timers', async () => {
    const run = await pendingRun();
    now += 30 * MIN;
    // The edit commits, then the process dies before its listeners reschedule.
    const edited = await service.applyEdit({
      runId: run.runId,
      baseVersion: 1,
      editorId: 'U0OP1',
      steps: run.current.plan.steps.map(({ id, tool, args }) =>
        id === 's2' ? { id, tool, args: { ...args, window: '2026-04-06' } } : { id, tool, args },
      ),
    });
    expect(edited.kind).toBe('edited');
    await scheduler.queue.obliterate({ force: true });
    await scheduler.schedule(run);
    expect(await waiting(run.runId)).toEqual({ 'expire-<run>-v1': 90, 'escalate-<run>-v1-l1': 0 });

    await reconcile();
    expect(await waiting(run.runId)).toEqual({ 'expire-<run>-v2': 90, 'escalate-<run>-v2-l1': 15 });
  });

  it('retries a timer that failed for good', async () => {
    const run = await pendingRun();
    await scheduler.schedule(run);
    const l1 = `escalate-${run.runId}-v1-l1`;
    await (await scheduler.queue.getJob(l1))?.promote();
    const connection = stack.redis.duplicate({ maxRetriesPerRequest: null });
    const failing = new Worker(
      TIMERS_QUEUE,
      async () => {
        throw new UnrecoverableError('Slack is down for good');
      },
      { connection, prefix: bullPrefix(stack.prefix) },
    );
    await expectEventually(async () => (await scheduler.queue.getJobState(l1)) === 'failed');
    await failing.close();
    await connection.quit();

    await reconcile();
    expect(await scheduler.queue.getJobState(l1)).toBe('waiting');
  });
});

async function expectEventually(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition never held');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
