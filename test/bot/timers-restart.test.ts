/**
 * Restart safety with real processes: the bot runs in a child process (test/support/countersign-child.ts)
 * against the emulator and Redis of this test; it is SIGKILLed with a pending run and started again
 * after the run's expiry.
 */
import type { ChildProcess } from 'node:child_process';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FREIGHT_AGENT, freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import type { JournalRecord } from '../../src/approvals/index.ts';
import { createKeys } from '../../src/approvals/keys.ts';
import { AgentClient } from '../../src/client/index.ts';
import { findFreePort } from '../../src/devtools/redis-server.ts';
import {
  createSlackEmulator,
  DEFAULT_CHANNELS,
  DEFAULT_USERS,
  type SlackEmulator,
} from '../../src/emulator/index.ts';
import { bullPrefix, QUEUES, TIMERS_QUEUE } from '../../src/queue/index.ts';
import { deleteKeysUnder, redisUrl } from '../helpers/redis.ts';
import { startBotChild } from '../support/bot-child.ts';
import { actionIds, cardRunId, visibleText } from '../support/slack-blocks.ts';
import { eventually, FREIGHT_SECRET, stackPrefix, testSigning } from '../support/stack.ts';
import { ESCALATION_CHANNELS } from '../support/timers-config.ts';

let slack: SlackEmulator;
let client: AgentClient;
let redis: Redis;
const children: ChildProcess[] = [];
const prefix = stackPrefix('restart');
let port: number;
beforeAll(async () => {
  slack = createSlackEmulator({
    rateLimit: false,
    users: [...DEFAULT_USERS, { id: 'U0FIN2', name: 'u0fin2', real_name: 'U0FIN2' }],
    channels: [...DEFAULT_CHANNELS, ...ESCALATION_CHANNELS],
  });
  await slack.start();
  redis = new Redis(redisUrl());
  // Both bots listen on the same port, so the agent's URL stays the same across the restart.
  port = await findFreePort();
  client = new AgentClient({
    url: `http://127.0.0.1:${port}`,
    agent: FREIGHT_AGENT,
    secret: FREIGHT_SECRET,
    publicKeys: testSigning.jwks,
  });
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await client.close();
  await slack.stop();
  for (const name of QUEUES) {
    const queue = new Queue(name, { connection: redis, prefix: bullPrefix(prefix) });
    await queue.obliterate({ force: true });
    await queue.close();
  }
  await deleteKeysUnder(redis, prefix);
  redis.disconnect();
});

const startBot = () => startBotChild({ prefix, port, slackUrl: slack.url }, children);

async function journalEvents(runId: string): Promise<string[]> {
  const records = await redis.lrange(createKeys(prefix).forRun(runId).journal, 0, -1);
  return records.map((text) => (JSON.parse(text) as JournalRecord).event.type);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a bot killed with a pending run (SIGKILL, a real child process)', () => {
  it('started again after the expiry: the run is expired, its card updated and the agent told exactly once', async () => {
    const first = await startBot();
    const heard: string[] = [];
    const stopListening = client.onDecision(async (decision) => {
      heard.push(`${decision.runId} ${decision.status}`);
    });
    const { runId } = await client.submit({
      summary: freightSummary,
      context: freightContext,
      steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
      expiresIn: '3s',
    });
    const card = await eventually(async () =>
      slack.state.messages('C0OPS').find((message) => cardRunId(message) === runId),
    );
    expect(actionIds(card.blocks)).toEqual(['show_args', 'approve', 'reject', 'edit']);
    const timers = new Queue(TIMERS_QUEUE, { connection: redis, prefix: bullPrefix(prefix) });
    await eventually(async () => ((await timers.getDelayedCount()) === 2 ? true : undefined));
    await timers.close();
    // The card is visible once Slack has it; where it is gets recorded right after.
    await eventually(async () => ((await journalEvents(runId)).includes('posted') ? true : undefined));

    // The reminder (0.5 s) and the first escalation (1 s) may fire before the kill on a busy machine:
    // whatever happened by then is the baseline; nothing may happen while the bot is down.
    const atKill = await journalEvents(runId);
    const messagesAtKill = slack.state.messages('C0OPS').map((message) => message.ts);
    first.process.kill('SIGKILL');
    await sleep(5000);
    expect(atKill.slice(0, 2)).toEqual(['submitted', 'validated']);
    expect(atKill).toContain('posted');
    expect(atKill).not.toContain('expired');
    expect(await journalEvents(runId)).toEqual(atKill);

    const second = await startBot();
    const decision = await client.waitForDecision(runId, { timeoutMs: 15_000 });
    expect(decision).toMatchObject({ status: 'expired', decidedBy: 'timer' });
    await eventually(async () => {
      const now = slack.state.message(card.channel, card.ts);
      return now !== undefined &&
        actionIds(now.blocks).length === 0 &&
        visibleText(now.blocks).includes('*Expired*')
        ? now
        : undefined;
    });
    expect(await second.reconciled).toMatch(/^reconciled \{"checked":\d+,"expired":[01],"failed":0\}$/);
    await eventually(async () => (heard.length > 0 ? true : undefined));
    await sleep(1000); // time for a second delivery, were there one
    expect(heard).toEqual([`${runId} expired`]);
    const since = (await journalEvents(runId)).slice(atKill.length);
    expect(since.filter((type) => type === 'expired')).toHaveLength(1);
    // The overdue timers found the run past its expiry: nobody was reminded or escalated to after the fact.
    expect(since).not.toContain('escalated');
    expect(since).not.toContain('reminded');
    expect(slack.state.messages('C0OPS').map((message) => message.ts)).toEqual(messagesAtKill);
    expect(messagesAtKill[0]).toBe(card.ts);
    await stopListening();
  }, 60_000);
});
