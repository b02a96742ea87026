/**
 * A bot killed between a commit and its rendering (SIGKILL, a real child process): the decision is in
 * Redis, Slack still shows live buttons. The next process — or any replica — renders the committed
 * state: the killed rendering job is taken up again within 10 s, and the repair loop finds anything
 * whose job was never added.
 */
import type { ChildProcess } from 'node:child_process';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FREIGHT_AGENT, freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
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
import { bullPrefix, QUEUES } from '../../src/queue/index.ts';
import { deleteKeysUnder, redisUrl } from '../helpers/redis.ts';
import { startBotChild } from '../support/bot-child.ts';
import { SIGNING_SECRET } from '../support/bot-stack.ts';
import { actionIds, cardRunId, visibleText } from '../support/slack-blocks.ts';
import { eventually, FREIGHT_SECRET, stackPrefix, testSigning } from '../support/stack.ts';
import { ESCALATION_CHANNELS } from '../support/timers-config.ts';

let slack: SlackEmulator;
let client: AgentClient;
let redis: Redis;
const children: ChildProcess[] = [];
const prefix = stackPrefix('render-kill');
let port: number;
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

/** A signed approve click on `card`, to whichever bot listens on the port now. */
function approve(userId: string, card: EmulatedMessage) {
  const payload = buildBlockActionsPayload({
    user: { id: userId },
    container: { type: 'message', channel: { id: card.channel }, message: card },
    action: buttonAction(card.blocks, 'approve'),
  });
  return postInteraction(`http://127.0.0.1:${port}/slack/events`, SIGNING_SECRET, payload);
}

const cardOf = (runId: string) =>
  eventually(async () => slack.state.messages('C0OPS').find((message) => cardRunId(message) === runId));

describe('a bot killed after a commit and before Slack shows it (SIGKILL, a real child process)', () => {
  it('the next process shows every decided card as decided, without buttons, within 10 s', async () => {
    const first = await startBot();
    const runIds: string[] = [];
    for (let index = 0; index < 5; index++) {
      const { runId } = await client.submit({
        summary: freightSummary,
        context: freightContext,
        steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
        expiresIn: '1h',
      });
      runIds.push(runId);
    }
    const cards = await Promise.all(runIds.map(cardOf));
    // Every card update from now on is held: the renderings are in flight when the process dies.
    slack.faults.inject({ method: 'chat.update', kind: 'hang', times: Number.POSITIVE_INFINITY });
    for (const card of cards) {
      const answer = await approve('U0OP1', card);
      expect(answer.status).toBe(200); // answered after the commit
    }
    await eventually(async () => (slack.faults.triggered.length > 0 ? true : undefined));
    first.process.kill('SIGKILL');
    await new Promise((resolve) => first.process.once('exit', resolve));
    slack.faults.clear(); // the dead process's held requests are never answered nor applied
    // Still live: s2's `show_args` and the card's own buttons.
    for (const card of cards)
      expect(actionIds(slack.state.message(card.channel, card.ts)?.blocks ?? [])).toEqual([
        'show_args',
        'approve',
        'reject',
        'edit',
      ]);

    await startBot();
    const started = Date.now();
    for (const card of cards) {
      const shown = await eventually(async () => {
        const message = slack.state.message(card.channel, card.ts);
        return message !== undefined && actionIds(message.blocks).length === 0 ? message : undefined;
      }, 12_000);
      expect(visibleText(shown.blocks)).toContain('— approved');
    }
    expect(Date.now() - started).toBeLessThan(10_000);
    // One card per run: nothing was posted again.
    for (const runId of runIds) {
      expect(slack.state.messages('C0OPS').filter((message) => cardRunId(message) === runId)).toHaveLength(1);
    }
  }, 60_000);
});
