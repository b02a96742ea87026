/**
 * Countersign's logs as a real process writes them (test/support/countersign-child.ts, the real
 * `startCountersign`): through a full flow at `debug` every line is a JSON object with `level`, `time`
 * and `msg`, the lines about a run carry its `runId`, and no configured secret appears anywhere in
 * stdout or stderr; a Redis outage is one line when it starts and one when it ends, with no stack.
 */
import type { ChildProcess } from 'node:child_process';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FREIGHT_AGENT, freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import { AgentClient } from '../../src/client/index.ts';
import { findFreePort, startRedisServer } from '../../src/devtools/redis-server.ts';
import {
  buildBlockActionsPayload,
  buildViewSubmissionPayload,
  buttonAction,
  createSlackEmulator,
  DEFAULT_BOT_TOKEN,
  DEFAULT_CHANNELS,
  DEFAULT_USERS,
  type EmulatedMessage,
  postInteraction,
  type SlackEmulator,
  stateValue,
} from '../../src/emulator/index.ts';
import { bullPrefix, QUEUES, REDIS_REACHABLE_AGAIN, REDIS_UNREACHABLE } from '../../src/queue/index.ts';
import { deleteKeysUnder, redisUrl } from '../helpers/redis.ts';
import { type BotChild, startBotChild } from '../support/bot-child.ts';
import { SIGNING_SECRET } from '../support/bot-stack.ts';
import { submittedValues } from '../support/freight-edits.ts';
import { cardRunId, visibleText } from '../support/slack-blocks.ts';
import {
  eventually,
  FREIGHT_SECRET,
  stackPrefix,
  TEST_SIGNING_KEY_PEM,
  testSigning,
} from '../support/stack.ts';
import { ESCALATION_CHANNELS } from '../support/timers-config.ts';

interface LogLine {
  readonly level: number;
  readonly time: number;
  readonly msg: string;
  readonly runId?: string;
  readonly agent?: string;
  readonly user?: string;
  readonly jobId?: string;
  readonly component?: string;
  readonly [field: string]: unknown;
}

/** The child's own markers for the test harness (countersign-child.ts), not Countersign's log. */
const HARNESS_LINE = /^(ready|reconciled \{.*\})$/;

/** Every line Countersign wrote, parsed; fails on the first that is not a JSON log line. */
function logLines(child: BotChild): LogLine[] {
  return child.lines
    .filter((line) => line.trim() !== '' && !HARNESS_LINE.test(line))
    .map((line) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        throw new Error(`not a JSON line: ${line}`);
      }
      expect(parsed, line).toMatchObject({
        level: expect.any(Number),
        time: expect.any(Number),
        msg: expect.any(String),
      });
      return parsed as LogLine;
    });
}

let slack: SlackEmulator;
let redis: Redis;
const children: ChildProcess[] = [];
const prefixes: string[] = [];
beforeAll(async () => {
  slack = createSlackEmulator({
    rateLimit: false,
    users: [...DEFAULT_USERS, { id: 'U0FIN2', name: 'u0fin2', real_name: 'U0FIN2' }],
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

async function startChild(options: { logLevel: 'debug' | 'info'; redisUrl?: string }) {
  const prefix = stackPrefix('logs');
  prefixes.push(prefix);
  const port = await findFreePort();
  const child = await startBotChild({ prefix, port, slackUrl: slack.url, ...options }, children);
  const client = new AgentClient({
    url: `http://127.0.0.1:${port}`,
    agent: FREIGHT_AGENT,
    secret: FREIGHT_SECRET,
    publicKeys: testSigning.jwks,
  });
  return { child, client, eventsUrl: `http://127.0.0.1:${port}/slack/events` };
}

const submitFreight = (client: AgentClient) =>
  client.submit({
    summary: freightSummary,
    context: freightContext,
    steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
    expiresIn: '1h',
  });

const cardOf = (runId: string) =>
  eventually(async () =>
    slack.state.messages('C0OPS').find((message) => cardRunId(message) === runId && message.text.length > 0),
  );

function click(eventsUrl: string, userId: string, message: EmulatedMessage, actionId: string) {
  const payload = buildBlockActionsPayload({
    user: { id: userId },
    container: { type: 'message', channel: { id: message.channel }, message },
    action: buttonAction(message.blocks, actionId),
  });
  return postInteraction(eventsUrl, SIGNING_SECRET, payload);
}

describe('logs', () => {
  it('a full flow at debug: JSON lines only, runs named by runId, and no configured secret anywhere', async () => {
    const { child, client, eventsUrl } = await startChild({ logLevel: 'debug' });

    // Run A: submitted, approved by an operator.
    const approved = await submitFreight(client);
    const cardA = await cardOf(approved.runId);
    expect((await click(eventsUrl, 'U0OP1', cardA, 'approve')).status).toBe(200);
    expect(await client.waitForDecision(approved.runId, { timeoutMs: 10_000 })).toMatchObject({
      status: 'approved',
    });

    // Run B: edited by finance (version 2), then a click on the version 1 card is refused.
    const edited = await submitFreight(client);
    const cardB = await cardOf(edited.runId);
    const modalsBefore = slack.state.modalStack('U0FIN1').length;
    expect((await click(eventsUrl, 'U0FIN1', cardB, 'edit')).status).toBe(200);
    const view = await eventually(async () => slack.state.modalStack('U0FIN1')[modalsBefore]);
    const submission = buildViewSubmissionPayload({
      user: { id: 'U0FIN1' },
      view,
      values: submittedValues(view, { 'arg:s2:window': stateValue.date('2026-04-07') }),
    });
    expect((await postInteraction(eventsUrl, SIGNING_SECRET, submission)).status).toBe(200);
    await eventually(async () => {
      const now = slack.state.message(cardB.channel, cardB.ts);
      return now !== undefined && visibleText(now.blocks).includes(' · version 2 · ') ? now : undefined;
    });
    const whispers = slack.state.ephemerals('C0OPS').length;
    expect((await click(eventsUrl, 'U0OP1', cardB, 'approve')).status).toBe(200);
    const refusal = await eventually(async () => slack.state.ephemerals('C0OPS')[whispers]);
    expect(refusal.user).toBe('U0OP1');
    await client.close();

    const lines = logLines(child);
    // Debug shows Bolt's and the Web API's own lines too: the secrets had every chance to appear.
    expect(lines.filter((line) => line.component === 'slack').length).toBeGreaterThan(10);

    for (const { runId } of [approved, edited]) {
      const about = lines.filter((line) => line.runId === runId);
      expect(about.map((line) => line.msg)).toEqual(expect.arrayContaining(['run pending']));
      expect(about.find((line) => line.msg === 'run pending')).toMatchObject({ agent: FREIGHT_AGENT });
      // Rendering jobs name their job; clicks name who clicked.
      expect(about.some((line) => typeof line.jobId === 'string')).toBe(true);
      // Our lines that mention the run carry its id as a field (Slack's own lines are raw payloads).
      const mentioning = lines.filter(
        (line) => line.component !== 'slack' && JSON.stringify(line).includes(runId),
      );
      for (const line of mentioning) expect(line.runId, JSON.stringify(line)).toBe(runId);
    }
    expect(lines.find((line) => line.runId === approved.runId && line.msg === 'run approved')).toMatchObject({
      decidedBy: 'U0OP1',
    });
    expect(lines.some((line) => line.runId === edited.runId && line.msg === 'run edited')).toBe(true);
    expect(lines.some((line) => line.runId === edited.runId && line.user === 'U0OP1')).toBe(true);

    const pemBody = TEST_SIGNING_KEY_PEM.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '');
    const secrets = {
      'the agent secret': FREIGHT_SECRET,
      'the bot token': DEFAULT_BOT_TOKEN,
      'the signing secret': SIGNING_SECRET,
      'the signing key': pemBody,
    };
    const output = child.lines.join('\n');
    for (const [what, secret] of Object.entries(secrets)) {
      expect(secret.length, what).toBeGreaterThan(8);
      expect(output.includes(secret), `${what} is in the logs`).toBe(false);
    }
  });

  it('a Redis outage: one line when it starts, one when it ends, no stack at info', async () => {
    const port = await findFreePort();
    let server = await startRedisServer({ port });
    try {
      const { child, client } = await startChild({ logLevel: 'info', redisUrl: server.url });
      await client.close();
      await server.stop();
      await child.waitFor(new RegExp(REDIS_UNREACHABLE), 10_000);
      // Several reconnect attempts (ioredis retries every ≤ 2 s) while Redis is away.
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      server = await startRedisServer({ port });
      await child.waitFor(new RegExp(REDIS_REACHABLE_AGAIN), 15_000);
      await new Promise((resolve) => setTimeout(resolve, 1_000));

      const lines = logLines(child);
      const down = lines.filter((line) => line.msg === REDIS_UNREACHABLE);
      const up = lines.filter((line) => line.msg === REDIS_REACHABLE_AGAIN);
      expect(down).toHaveLength(1);
      // The first failure is the connection Redis closed as it stopped (ECONNRESET) or the reconnect it
      // refused (ECONNREFUSED), depending on which the client sees first.
      expect(down[0]).toMatchObject({
        level: 40,
        err: { code: expect.stringMatching(/^ECONN(REFUSED|RESET)$/) },
      });
      expect(up).toHaveLength(1);
      expect(up[0]).toMatchObject({ level: 30, downForMs: expect.any(Number) });
      const output = child.lines.join('\n');
      expect(output).not.toMatch(/\n\s+at |"stack"|Unhandled error event/);
      expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});
