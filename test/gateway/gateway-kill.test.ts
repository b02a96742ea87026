/**
 * Nothing is lost or doubled when the server dies mid-way: the bot (and its gateway) runs in a child
 * process, is SIGKILLed while agents are submitting, and is started again on the same port. The
 * agents' clients retry what got no answer (POST /v1/runs is idempotent on the run id); afterwards
 * every plan is stored exactly once and has exactly one card.
 */
import type { ChildProcess } from 'node:child_process';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FREIGHT_AGENT, freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import { createKeys, type JournalRecord } from '../../src/approvals/index.ts';
import { AgentClient } from '../../src/client/index.ts';
import { findFreePort } from '../../src/devtools/redis-server.ts';
import {
  createSlackEmulator,
  DEFAULT_CHANNELS,
  DEFAULT_USERS,
  type SlackEmulator,
} from '../../src/emulator/index.ts';
import { bullPrefix, QUEUES } from '../../src/queue/index.ts';
import { deleteKeysUnder, redisUrl } from '../helpers/redis.ts';
import { startBotChild } from '../support/bot-child.ts';
import { cardRunId } from '../support/slack-blocks.ts';
import { FREIGHT_SECRET, stackPrefix, testSigning } from '../support/stack.ts';
import { ESCALATION_CHANNELS } from '../support/timers-config.ts';

let slack: SlackEmulator;
let redis: Redis;
let client: AgentClient;
let port: number;
const children: ChildProcess[] = [];
const prefix = stackPrefix('gateway-kill');

beforeAll(async () => {
  slack = createSlackEmulator({
    rateLimit: false,
    users: [...DEFAULT_USERS, { id: 'U0FIN2', name: 'u0fin2', real_name: 'U0FIN2' }],
    channels: [...DEFAULT_CHANNELS, ...ESCALATION_CHANNELS],
  });
  await slack.start();
  redis = new Redis(redisUrl());
  port = await findFreePort();
  client = new AgentClient({
    url: `http://127.0.0.1:${port}`,
    agent: FREIGHT_AGENT,
    secret: FREIGHT_SECRET,
    publicKeys: testSigning.jwks,
    // Long enough for the server to come back, also on a busy machine (about a minute).
    retry: { attempts: 120, baseDelayMs: 100, maxDelayMs: 500 },
    onError: () => {},
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

describe('a server killed while agents submit (SIGKILL, a real child process)', () => {
  it('ends with every plan stored once and carded once, the killed requests retried by the clients', async () => {
    const first = await startBotChild({ prefix, port, slackUrl: slack.url }, children);
    const submissions = Array.from({ length: 30 }, (_, index) =>
      client.submit({
        summary: `${freightSummary} (${index})`,
        context: freightContext,
        steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
        expiresIn: '1h',
      }),
    );
    // Kill it while the submissions are in flight, then start it again on the same port.
    await new Promise((resolve) => setTimeout(resolve, 40));
    first.process.kill('SIGKILL');
    await new Promise((resolve) => first.process.once('exit', resolve));
    await startBotChild({ prefix, port, slackUrl: slack.url }, children);

    const answers = await Promise.all(submissions);
    expect(answers.every((answer) => answer.status === 'pending')).toBe(true);
    const runIds = answers.map((answer) => answer.runId);
    expect(new Set(runIds).size).toBe(30);
    const keys = createKeys(prefix);
    for (const runId of runIds) {
      const journal = (await redis.lrange(keys.forRun(runId).journal, 0, -1)).map(
        (text) => (JSON.parse(text) as JournalRecord).event.type,
      );
      expect(journal.filter((type) => type === 'submitted')).toHaveLength(1);
      expect(journal.filter((type) => type === 'validated')).toHaveLength(1);
    }
    // One card each: a run stored by the first process but not yet carded gets its card from the
    // retried submission or from the second process's reconciliation, never two.
    const cards = await waitFor(() => {
      const found = slack.state
        .messages('C0OPS')
        .filter((message) => runIds.includes(String(cardRunId(message))));
      return found.length >= 30 ? found : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const perRun = new Map<string, number>();
    for (const card of slack.state.messages('C0OPS')) {
      const runId = String(cardRunId(card));
      if (runIds.includes(runId)) perRun.set(runId, (perRun.get(runId) ?? 0) + 1);
    }
    expect(cards.length).toBe(30);
    expect([...perRun.values()].every((count) => count === 1)).toBe(true);
  }, 120_000);
});

async function waitFor<T>(read: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
