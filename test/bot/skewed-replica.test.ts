/**
 * A replica whose own clock is wrong (a real child process with `Date` shifted by ±10 minutes,
 * test/support/skewed-clock.ts): expiry, clicks, timers and decision times follow Redis's `TIME`, not
 * the replica's clock. Runs expire within a few seconds of `expiresAt` — never early, never late —
 * and what they record carries Redis's time (docs/architecture.md §15).
 */
import type { ChildProcess } from 'node:child_process';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addedRefundStep,
  FREIGHT_AGENT,
  freightContext,
  freightPlan,
  freightSteps,
  freightSummary,
} from '../../examples/freight/plans.ts';
import { ApprovalService, type JournalRecord, redisNow } from '../../src/approvals/index.ts';
import { AgentClient } from '../../src/client/index.ts';
import { findFreePort } from '../../src/devtools/redis-server.ts';
import {
  buildBlockActionsPayload,
  buttonAction,
  createSlackEmulator,
  DEFAULT_CHANNELS,
  DEFAULT_USERS,
  type EmulatedMessage,
  postInteraction,
  type SlackEmulator,
} from '../../src/emulator/index.ts';
import type { Decision } from '../../src/pipeline/index.ts';
import {
  bullPrefix,
  expireJobId,
  OVERDUE_GRACE_MS,
  QUEUES,
  TIMERS_QUEUE,
  TimerScheduler,
} from '../../src/queue/index.ts';
import { deleteKeysUnder, redisUrl } from '../helpers/redis.ts';
import { startBotChild } from '../support/bot-child.ts';
import { SIGNING_SECRET } from '../support/bot-stack.ts';
import { cardRunId } from '../support/slack-blocks.ts';
import { eventually, FREIGHT_SECRET, stackPrefix, testSigning } from '../support/stack.ts';
import { ESCALATION_CHANNELS, timersConfig } from '../support/timers-config.ts';

const TEN_MINUTES = 10 * 60_000;
/** How late after `expiresAt` an expiry may be seen (the timer's round trips, a loaded machine). */
const EXPIRY_SLACK_MS = 3_000;

let slack: SlackEmulator;
let redis: Redis;
const children: ChildProcess[] = [];
const prefixes: string[] = [];
beforeAll(async () => {
  slack = createSlackEmulator({
    rateLimit: false,
    users: [
      ...DEFAULT_USERS,
      ...['U0FIN2', 'U0FIN3'].map((id) => ({ id, name: id.toLowerCase(), real_name: id })),
    ],
    channels: [...DEFAULT_CHANNELS, ...ESCALATION_CHANNELS],
  });
  await slack.start();
  redis = new Redis(redisUrl());
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await slack.stop();
  for (const prefix of prefixes) {
    for (const name of QUEUES) {
      const queue = new Queue(name, { connection: redis, prefix: bullPrefix(prefix) });
      await queue.obliterate({ force: true });
      await queue.close();
    }
    await deleteKeysUnder(redis, prefix);
  }
  redis.disconnect();
});

/** One replica with a skewed clock on a prefix of its own, an agent talking to it, and what to read. */
async function skewedReplica(name: string, clockSkewMs: number) {
  const prefix = stackPrefix(name);
  prefixes.push(prefix);
  const port = await findFreePort();
  const approvals = new ApprovalService({ redis, config: timersConfig, signer: testSigning.signer, prefix });
  const client = new AgentClient({
    url: `http://127.0.0.1:${port}`,
    agent: FREIGHT_AGENT,
    secret: FREIGHT_SECRET,
    publicKeys: testSigning.jwks,
  });
  return {
    prefix,
    approvals,
    client,
    start: () => startBotChild({ prefix, port, slackUrl: slack.url, clockSkewMs }, children),
    /** A plan needing two finance approvals (the large refund), submitted by the agent over HTTP. */
    submit: (expiresIn: string) =>
      client.submit({
        summary: freightSummary,
        context: freightContext,
        steps: [...freightSteps, addedRefundStep].map((step) => ({ ...step, args: { ...step.args } })),
        expiresIn,
      }),
    /** A signed click on `card` to this replica. */
    click(userId: string, card: EmulatedMessage, actionId: string) {
      const payload = buildBlockActionsPayload({
        user: { id: userId },
        container: { type: 'message', channel: { id: card.channel }, message: card },
        action: buttonAction(card.blocks, actionId),
      });
      return postInteraction(`http://127.0.0.1:${port}/slack/events`, SIGNING_SECRET, payload);
    },
    async journal(runId: string): Promise<JournalRecord[]> {
      const records = await redis.lrange(approvals.keys.forRun(runId).journal, 0, -1);
      return records.map((text) => JSON.parse(text) as JournalRecord);
    },
    async close() {
      await client.close();
    },
  };
}

const cardOf = (runId: string) =>
  eventually(
    async () => slack.state.messages('C0OPS').find((message) => cardRunId(message) === runId),
    15_000,
    `the card of ${runId}`,
  );

/**
 * Watches a run until it is decided: the last Redis time it was seen pending, and the decision. The
 * expiry must come after `expiresAt` and within `slackMs` of it.
 */
async function watchExpiry(
  approvals: ApprovalService,
  runId: string,
  expiresAt: number,
  slackMs = EXPIRY_SLACK_MS,
) {
  let lastPendingAt = 0;
  const decision = await eventually(
    async (): Promise<Decision | undefined> => {
      const seenAt = await redisNow(redis);
      const found = await approvals.getDecision(runId);
      if (found === undefined) lastPendingAt = seenAt;
      return found;
    },
    expiresAt - Date.now() + 10_000,
    `the decision of ${runId}`,
  );
  const decidedAt = Date.parse(decision.decidedAt);
  expect(decision.status).toBe('expired');
  expect(decidedAt).toBeGreaterThanOrEqual(expiresAt);
  expect(decidedAt - expiresAt).toBeLessThan(slackMs);
  // Seen pending until just before the expiry: nothing expired it early.
  expect(expiresAt - lastPendingAt).toBeLessThan(1_000);
  return { decision, decidedAt };
}

/** Every record's time, checked against Redis's time around the test. */
function expectRedisTimes(records: readonly JournalRecord[], from: number, to: number): void {
  for (const record of records) {
    expect(Date.parse(record.at), `${record.event.type} at ${record.at}`).toBeGreaterThanOrEqual(from);
    expect(Date.parse(record.at), `${record.event.type} at ${record.at}`).toBeLessThanOrEqual(to);
  }
}

describe('a replica whose clock runs 10 minutes fast', () => {
  it('accepts a click before the expiry, keeps the run pending, and expires it on time — also a run whose timers another process scheduled', async () => {
    const replica = await skewedReplica('skew-fast', TEN_MINUTES);
    const startedAt = await redisNow(redis);
    // A run stored and scheduled by a process whose clock is right, before the fast replica starts:
    // its timers come due 10 minutes early by the fast replica's clock.
    const early = `run-skew-early-${startedAt}`;
    const plan = freightPlan({ runId: early, now: startedAt, expiresInMs: 14_000 });
    const earlyExpiresAt = Date.parse(plan.expiresAt);
    const submitted = await replica.approvals.submitPlan({
      runId: early,
      agent: FREIGHT_AGENT,
      raw: JSON.stringify(plan),
    });
    if (submitted.kind !== 'pending') throw new Error(`expected pending, got ${submitted.kind}`);
    const scheduler = new TimerScheduler({
      connection: redis,
      prefix: replica.prefix,
      escalation: timersConfig.escalation,
    });
    await scheduler.schedule(submitted.run);
    await scheduler.close();

    await replica.start();
    // The agent's signature carries the right time; the replica checks it against Redis's.
    const { runId } = await replica.submit('8s');
    const expiresAt = Date.parse((await replica.approvals.getRun(runId))?.current.plan.expiresAt ?? '');
    const card = await cardOf(runId);
    const answer = await replica.click('U0FIN1', card, 'approve');
    expect(answer.status).toBe(200);
    const run = await replica.approvals.getRun(runId);
    expect(run?.status).toBe('pending');
    expect(run?.approvals.map((approval) => approval.userId)).toEqual(['U0FIN1']);

    // The run stored before: its expiry ran early on the fast replica, was put back, and waits.
    const timers = new Queue(TIMERS_QUEUE, { connection: redis, prefix: bullPrefix(replica.prefix) });
    const earlyJob = await eventually(async () => {
      const job = await timers.getJob(expireJobId(early, 1));
      return job?.processedOn !== undefined ? job : undefined;
    });
    expect(await earlyJob.getState()).toBe('delayed');
    expect((await replica.approvals.getRun(early))?.status).toBe('pending');
    await timers.close();

    const [fresh, stored] = await Promise.all([
      watchExpiry(replica.approvals, runId, expiresAt),
      watchExpiry(replica.approvals, early, earlyExpiresAt),
    ]);
    const endedAt = await redisNow(redis);
    expectRedisTimes(await replica.journal(runId), startedAt, endedAt);
    expectRedisTimes(await replica.journal(early), startedAt, endedAt);
    const approval = (await replica.journal(runId)).find((record) => record.event.type === 'approval');
    expect(approval).toBeDefined();
    expect(Date.parse(approval?.at ?? '')).toBeLessThan(expiresAt);
    expect(fresh.decision.decidedBy).toBe('timer');
    expect(stored.decision.decidedBy).toBe('timer');
    await replica.close();
  }, 60_000);
});

describe('a replica whose clock runs 10 minutes slow', () => {
  it('refuses a click after the expiry (its timer gone), expires a run within seconds of expiresAt, and sweeps up one whose timer comes 20 minutes late', async () => {
    const replica = await skewedReplica('skew-slow', -TEN_MINUTES);
    await replica.start();
    const startedAt = await redisNow(redis);
    const timed = await replica.submit('6s');
    const clicked = await replica.submit('4s');
    const expiresAtOf = async (runId: string) =>
      Date.parse((await replica.approvals.getRun(runId))?.current.plan.expiresAt ?? '');
    const [timedExpiresAt, clickedExpiresAt] = await Promise.all([
      expiresAtOf(timed.runId),
      expiresAtOf(clicked.runId),
    ]);
    const card = await cardOf(clicked.runId);
    // The clicked run's timers are lost: only the click can notice that it expired.
    const timers = new Queue(TIMERS_QUEUE, { connection: redis, prefix: bullPrefix(replica.prefix) });
    for (const job of await timers.getJobs(['delayed', 'waiting']))
      if (job.id?.includes(clicked.runId)) await job.remove();
    await timers.close();

    // A run whose timer a replica with a fast clock scheduled: by this slow replica's clock the job
    // comes due 20 minutes late, so the expiry sweep expires it.
    const sweptAt = await redisNow(redis);
    const swept = `run-skew-swept-${sweptAt}`;
    const plan = freightPlan({ runId: swept, now: sweptAt, expiresInMs: 3_000 });
    const sweptExpiresAt = Date.parse(plan.expiresAt);
    const submitted = await replica.approvals.submitPlan({
      runId: swept,
      agent: FREIGHT_AGENT,
      raw: JSON.stringify(plan),
    });
    if (submitted.kind !== 'pending') throw new Error(`expected pending, got ${submitted.kind}`);
    const fastScheduler = new TimerScheduler({
      connection: redis,
      prefix: replica.prefix,
      escalation: timersConfig.escalation,
      clock: () => Date.now() - TEN_MINUTES,
    });
    await fastScheduler.schedule(submitted.run);
    await fastScheduler.close();

    const expired = watchExpiry(replica.approvals, timed.runId, timedExpiresAt);
    const sweptExpired = watchExpiry(replica.approvals, swept, sweptExpiresAt, OVERDUE_GRACE_MS + 8_000);
    while ((await redisNow(redis)) < clickedExpiresAt + 200) await new Promise((r) => setTimeout(r, 50));
    expect((await replica.approvals.getRun(clicked.runId))?.status).toBe('pending');
    const answer = await replica.click('U0FIN1', card, 'approve');
    expect(answer.status).toBe(200);
    const decision = await replica.approvals.getDecision(clicked.runId);
    expect(decision?.status).toBe('expired');
    expect(Date.parse(decision?.decidedAt ?? '')).toBeGreaterThanOrEqual(clickedExpiresAt);
    expect((await replica.approvals.getRun(clicked.runId))?.approvals).toEqual([]);

    await expired;
    const { decidedAt: sweptDecidedAt } = await sweptExpired;
    expect(sweptDecidedAt - sweptExpiresAt).toBeGreaterThanOrEqual(OVERDUE_GRACE_MS);
    const endedAt = await redisNow(redis);
    expectRedisTimes(await replica.journal(timed.runId), startedAt, endedAt);
    expectRedisTimes(await replica.journal(clicked.runId), startedAt, endedAt);
    await replica.close();
  }, 60_000);
});
