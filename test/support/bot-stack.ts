/**
 * The whole Countersign over HTTP for integration tests: the Slack Web API emulator, `startCountersign`
 * (real Bolt app with real signature checks, approvals on the harness's Redis, intake worker, decision
 * delivery) and an agent client — plus helpers to click buttons and submit modals as Slack would.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { FREIGHT_AGENT } from '../../examples/freight/plans.ts';
import { AgentClient } from '../../src/client/index.ts';
import type { CountersignConfig } from '../../src/config/index.ts';
import { findFreePort } from '../../src/devtools/redis-server.ts';
import {
  type Block,
  type BlockActionInput,
  buildBlockActionsPayload,
  buildViewSubmissionPayload,
  buttonAction,
  type ChannelSeed,
  createSlackEmulator,
  DEFAULT_CHANNELS,
  DEFAULT_USERS,
  postInteraction,
  type SlackEmulator,
} from '../../src/emulator/index.ts';
import type { EmulatedMessage, SlackView } from '../../src/emulator/slack-objects.ts';
import { type Countersign, startCountersign } from '../../src/main.ts';
import { bullPrefix, decisionsQueue, INTAKE_QUEUE, TIMERS_QUEUE } from '../../src/queue/index.ts';
import { deleteKeysUnder, redisUrl } from '../helpers/redis.ts';
import { freightConfig } from './freight.ts';
import { FREIGHT_SECRET, stackPrefix } from './intake-stack.ts';

export const SIGNING_SECRET = 'test-signing-secret-0123456789abcdef';
const EXTRA_USERS = ['U0OP2', 'U0FIN2', 'U0FIN3'].map((id) => ({
  id,
  name: id.toLowerCase(),
  real_name: id,
}));

export interface BotStack {
  readonly slack: SlackEmulator;
  readonly countersign: Countersign;
  readonly client: AgentClient;
  readonly eventsUrl: string;
  readonly baseUrl: string;
  readonly prefix: string;
  /** Top-level messages in the ops channel. */
  cards(): readonly EmulatedMessage[];
  /** The card of `runId` (found by its message metadata), once it is posted. */
  card(runId: string): Promise<EmulatedMessage>;
  /** The replies under a card (the diff messages), oldest first. */
  thread(card: EmulatedMessage): readonly EmulatedMessage[];
  /** Waits until `predicate` holds (polling), or fails after `timeoutMs`. */
  until<T>(read: () => T | undefined | false, timeoutMs?: number): Promise<T>;
  /** Clicks a button on a message as `userId`; returns the HTTP answer. */
  click(
    userId: string,
    message: EmulatedMessage,
    actionId: string,
    pick?: (blocks: readonly Block[]) => BlockActionInput,
  ): Promise<{ status: number; body: unknown }>;
  /** The modal open for `userId` (top of their stack). */
  modal(userId: string): SlackView | undefined;
  /** Clicks a button that opens a modal (`edit`, `reject`) and returns the modal once it is open. */
  openModal(userId: string, message: EmulatedMessage, actionId: string): Promise<SlackView>;
  /**
   * Picks `value` in the static select `actionId` of the open modal `view`, as Slack sends it
   * (block_actions from a view), and returns the view once the bot has updated it.
   */
  select(userId: string, view: SlackView, actionId: string, value: string): Promise<SlackView>;
  /** Submits `view` as `userId` with the given state values (default: what it holds). */
  submit(
    userId: string,
    view: SlackView,
    values?: SlackView['state']['values'],
  ): Promise<{ status: number; body: unknown }>;
  stop(): Promise<void>;
}

export async function botStack(
  name: string,
  options: { config?: CountersignConfig; clock?: () => number; channels?: readonly ChannelSeed[] } = {},
): Promise<BotStack> {
  const slack = createSlackEmulator({
    rateLimit: false,
    users: [...DEFAULT_USERS, ...EXTRA_USERS],
    channels: [...DEFAULT_CHANNELS, ...(options.channels ?? [])],
  });
  await slack.start();
  const prefix = stackPrefix(name);
  const port = await findFreePort();
  const url = redisUrl();
  const countersign = await startCountersign({
    config: options.config ?? freightConfig,
    secrets: { [FREIGHT_AGENT]: FREIGHT_SECRET },
    redisUrl: url,
    prefix,
    slack: { botToken: slack.botToken, signingSecret: SIGNING_SECRET, apiUrl: slack.url },
    port,
    logLevel: 'error',
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  const client = new AgentClient({
    redisUrl: url,
    agent: FREIGHT_AGENT,
    secret: FREIGHT_SECRET,
    prefix,
    pollIntervalMs: 200,
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const eventsUrl = `${baseUrl}/slack/events`;

  const until = async <T>(read: () => T | undefined | false, timeoutMs = 10_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = read();
      if (value !== undefined && value !== false) return value;
      if (Date.now() > deadline) throw new Error('botStack.until: timed out');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  const click: BotStack['click'] = async (userId, message, actionId, pick) => {
    const action = pick ? pick(message.blocks) : buttonAction(message.blocks, actionId);
    const payload = buildBlockActionsPayload({
      user: { id: userId },
      container: { type: 'message', channel: { id: message.channel }, message },
      action,
    });
    const answer = await postInteraction(eventsUrl, SIGNING_SECRET, payload);
    return { status: answer.status, body: answer.body };
  };

  return {
    slack,
    countersign,
    client,
    eventsUrl,
    baseUrl,
    prefix,
    cards: () => slack.state.messages('C0OPS'),
    card: (runId) =>
      until(() =>
        slack.state
          .messages('C0OPS')
          .find((message) => message.metadata?.event_payload.run_id === runId && message.text.length > 0),
      ),
    thread: (card) => slack.state.replies(card.channel, card.ts).filter((reply) => reply.ts !== card.ts),
    until,
    click,
    modal: (userId) => slack.state.modalStack(userId).at(-1),
    async openModal(userId, message, actionId) {
      const before = slack.state.modalStack(userId).at(-1)?.id;
      const answer = await click(userId, message, actionId);
      if (answer.status !== 200) throw new Error(`${actionId} answered HTTP ${answer.status}`);
      return until(() => {
        const open = slack.state.modalStack(userId).at(-1);
        return open !== undefined && open.id !== before ? open : undefined;
      });
    },
    async select(userId, view, actionId, value) {
      const payload = buildBlockActionsPayload({
        user: { id: userId },
        container: { type: 'view', view },
        action: {
          type: 'static_select',
          actionId,
          blockId: blockIdOf(view, actionId),
          selectedOption: { text: value, value },
        },
      });
      const answer = await postInteraction(eventsUrl, SIGNING_SECRET, payload);
      if (answer.status !== 200) throw new Error(`${actionId} answered HTTP ${answer.status}`);
      return until(() => {
        const updated = slack.state.view(view.id);
        return updated !== undefined && updated.hash !== view.hash ? updated : undefined;
      });
    },
    async submit(userId, view, values) {
      const payload = buildViewSubmissionPayload({
        user: { id: userId },
        view,
        values: values ?? view.state.values,
      });
      const answer = await postInteraction(eventsUrl, SIGNING_SECRET, payload);
      return { status: answer.status, body: answer.body };
    },
    async stop() {
      await client.close();
      await countersign.stop();
      await slack.stop();
      const admin = new Redis(url);
      try {
        for (const queue of [INTAKE_QUEUE, TIMERS_QUEUE, decisionsQueue(FREIGHT_AGENT)]) {
          const q = new Queue(queue, { connection: admin, prefix: bullPrefix(prefix) });
          await q.obliterate({ force: true });
          await q.close();
        }
        await deleteKeysUnder(admin, prefix);
      } finally {
        admin.disconnect();
      }
    },
  };
}

/** The block holding the element `actionId` (an actions block's select). */
function blockIdOf(view: SlackView, actionId: string): string {
  for (const block of view.blocks) {
    const elements = Array.isArray(block.elements) ? (block.elements as { action_id?: unknown }[]) : [];
    if (elements.some((element) => element.action_id === actionId) && typeof block.block_id === 'string')
      return block.block_id;
  }
  throw new Error(`no element ${JSON.stringify(actionId)} in view ${view.id}`);
}
