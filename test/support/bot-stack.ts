/**
 * The whole Countersign for integration tests: the Slack Web API emulator, `startCountersign` (real Bolt
 * app — over HTTP with real signature checks, or in Socket Mode on the emulator's WebSocket — approvals
 * on the harness's Redis, intake worker, decision delivery) and an agent client, plus helpers to click
 * buttons and submit modals as Slack would, over whichever transport the bot uses.
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
  type InteractionResponse,
  postInteraction,
  type SlackEmulator,
  type SlackEmulatorOptions,
} from '../../src/emulator/index.ts';
import type { EmulatedMessage, SlackView } from '../../src/emulator/slack-objects.ts';
import type { Logger } from '../../src/log.ts';
import { type Countersign, type CountersignSettings, startCountersign } from '../../src/main.ts';
import { signedHeaders } from '../../src/protocol/index.ts';
import { bullPrefix, QUEUES } from '../../src/queue/index.ts';
import { deleteKeysUnder, redisUrl } from '../helpers/redis.ts';
import { freightConfig } from './freight.ts';
import { cardRunId } from './slack-blocks.ts';
import { FREIGHT_SECRET, stackPrefix, testSigning } from './stack.ts';

export const SIGNING_SECRET = 'test-signing-secret-0123456789abcdef';
const EXTRA_USERS = ['U0OP2', 'U0FIN2', 'U0FIN3'].map((id) => ({
  id,
  name: id.toLowerCase(),
  real_name: id,
}));

export interface Replica {
  readonly countersign: Countersign;
  click: BotStack['click'];
  stop(): Promise<void>;
}

export interface BotStack {
  readonly slack: SlackEmulator;
  /** The running Countersign (a new one after `restart`). */
  readonly countersign: Countersign;
  /** Stops Countersign if it runs and starts it again on the same Redis prefix, Slack and port. */
  restart(): Promise<Countersign>;
  /**
   * A second Countersign on the same Redis prefix and Slack (another replica, HTTP mode), with its own
   * port: clicks sent through its `click` reach it. Stopped by `stop()` or with the stack.
   */
  replica(): Promise<Replica>;
  /** The freight agent's client, over HTTP to this stack's gateway. */
  readonly client: AgentClient;
  /**
   * One request to the agent gateway, signed as the freight agent (or as `as` says); the answer's
   * status and JSON body.
   */
  agentRequest(
    method: string,
    path: string,
    body?: string,
    as?: { readonly agent?: string; readonly secret?: string; readonly now?: number },
  ): Promise<{ status: number; body: unknown; headers: Headers }>;
  /** The bot's `POST /slack/events` (HTTP mode; nothing serves it in Socket Mode). */
  readonly eventsUrl: string;
  /** The bot's HTTP server: `/healthz`, `/metrics` (and `/slack/events` in HTTP mode). */
  readonly baseUrl: string;
  readonly prefix: string;
  /** Top-level messages in the ops channel. */
  cards(): readonly EmulatedMessage[];
  /** The card of `runId` (found by its message metadata), once it is posted. */
  card(runId: string): Promise<EmulatedMessage>;
  /** The replies under a card (the diff messages), oldest first. */
  thread(card: EmulatedMessage): readonly EmulatedMessage[];
  /** Waits until Slack shows the run's committed state (its render cleared the run's `changed` mark). */
  rendered(runId: string): Promise<void>;
  /** Waits until `predicate` holds (polling), or fails after `timeoutMs`. */
  until<T>(read: () => T | undefined | false, timeoutMs?: number): Promise<T>;
  /** Clicks a button on a message as `userId`; returns the answer (HTTP, or the Socket Mode ack). */
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

export interface BotStackOptions {
  config?: CountersignConfig;
  /** People in the workspace besides the default ones (e.g. someone in no group of the config). */
  users?: readonly { id: string; name: string; real_name: string }[];
  clock?: () => number;
  channels?: readonly ChannelSeed[];
  /** Run the bot in Socket Mode (app-level token, no signing secret); interactions go over its socket. */
  socketMode?: boolean;
  /** The Redis to use (default: the test harness's, from vitest); for a stack in a child process. */
  redisUrl?: string;
  /** Secrets of more agents than the freight one (their config must name them). */
  secrets?: Readonly<Record<string, string>>;
  /** The first webhook retry's delay (tests make it short). */
  webhookRetryDelayMs?: number;
  /** Countersign's keys (default the test key alone). */
  signing?: CountersignSettings['signing'];
  /** How long one Slack call may take (default Countersign's, 10 s). */
  slackTimeoutMs?: number;
  /** How often overdue renderings are repaired (default Countersign's, 5 s). */
  repairEveryMs?: number;
  /** How often groups read from Slack user groups are read again (default Countersign's, 5 min). */
  userGroupRefreshMs?: number;
  /** More options for the Slack stand-in (rate limits, trigger expiry). */
  emulator?: Partial<SlackEmulatorOptions>;
  /** Called with the started Slack stand-in before Countersign starts (faults present from the first call). */
  beforeStart?: (slack: SlackEmulator) => void;
  /** Where Countersign logs (default: JSON lines on stdout at `error`); tests read failures from it. */
  logger?: Logger;
}

export async function botStack(name: string, options: BotStackOptions = {}): Promise<BotStack> {
  const slack = createSlackEmulator({
    rateLimit: false,
    ...options.emulator,
    users: [...DEFAULT_USERS, ...EXTRA_USERS, ...(options.users ?? [])],
    channels: [...DEFAULT_CHANNELS, ...(options.channels ?? [])],
    // The page's clicks reach a Socket Mode bot too (an HTTP one would need its port before it starts).
    ...(options.socketMode ? { interactions: { socketMode: true } as const } : {}),
  });
  await slack.start();
  options.beforeStart?.(slack);
  const prefix = stackPrefix(name);
  const port = await findFreePort();
  const url = options.redisUrl ?? redisUrl();
  const settings: CountersignSettings = {
    config: options.config ?? freightConfig,
    secrets: { [FREIGHT_AGENT]: FREIGHT_SECRET, ...options.secrets },
    signing: options.signing ?? testSigning,
    redisUrl: url,
    prefix,
    slack: {
      ...(options.socketMode
        ? { botToken: slack.botToken, appToken: slack.appToken, apiUrl: slack.url }
        : { botToken: slack.botToken, signingSecret: SIGNING_SECRET, apiUrl: slack.url }),
      ...(options.slackTimeoutMs === undefined ? {} : { timeoutMs: options.slackTimeoutMs }),
    },
    ...(options.repairEveryMs === undefined ? {} : { repairEveryMs: options.repairEveryMs }),
    ...(options.userGroupRefreshMs === undefined ? {} : { userGroupRefreshMs: options.userGroupRefreshMs }),
    port,
    logLevel: 'error',
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.webhookRetryDelayMs === undefined
      ? {}
      : { webhookRetryDelayMs: options.webhookRetryDelayMs }),
  };
  let countersign: Countersign;
  try {
    countersign = await startCountersign(settings);
  } catch (error) {
    await slack.stop();
    throw error;
  }
  const baseUrl = `http://127.0.0.1:${port}`;
  const client = new AgentClient({
    url: baseUrl,
    agent: FREIGHT_AGENT,
    secret: FREIGHT_SECRET,
    publicKeys: testSigning.jwks,
  });
  const agentRequest: BotStack['agentRequest'] = async (method, path, body = '', as = {}) => {
    const headers = signedHeaders({
      secret: as.secret ?? FREIGHT_SECRET,
      agent: as.agent ?? FREIGHT_AGENT,
      method,
      pathWithQuery: path,
      body,
      now: as.now ?? Date.now(),
    });
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...headers, 'content-type': 'application/json' },
      ...(method === 'GET' || method === 'HEAD' ? {} : { body }),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: returned as text
    }
    return { status: response.status, body: parsed, headers: response.headers };
  };
  const eventsUrl = `${baseUrl}/slack/events`;
  /** An interaction payload to the bot, as Slack would send it in this mode. */
  const send = (payload: Parameters<typeof postInteraction>[2]): Promise<InteractionResponse> =>
    options.socketMode
      ? slack.socketMode.deliver(payload)
      : postInteraction(eventsUrl, SIGNING_SECRET, payload);

  const until = async <T>(read: () => T | undefined | false, timeoutMs = 10_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = read();
      if (value !== undefined && value !== false) return value;
      if (Date.now() > deadline) throw new Error('botStack.until: timed out');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  const clickVia =
    (deliver: typeof send): BotStack['click'] =>
    async (userId, message, actionId, pick) => {
      const action = pick ? pick(message.blocks) : buttonAction(message.blocks, actionId);
      const payload = buildBlockActionsPayload({
        user: { id: userId },
        container: { type: 'message', channel: { id: message.channel }, message },
        action,
      });
      const answer = await deliver(payload);
      return { status: answer.status, body: answer.body };
    };
  const click = clickVia(send);
  const replicas: Replica[] = [];

  return {
    slack,
    get countersign() {
      return countersign;
    },
    async replica() {
      const replicaPort = await findFreePort();
      const started = await startCountersign({ ...settings, port: replicaPort });
      const replicaEvents = `http://127.0.0.1:${replicaPort}/slack/events`;
      let stopped: Promise<void> | undefined;
      const replica: Replica = {
        countersign: started,
        click: clickVia((payload) => postInteraction(replicaEvents, SIGNING_SECRET, payload)),
        stop: () => {
          stopped ??= started.stop();
          return stopped;
        },
      };
      replicas.push(replica);
      return replica;
    },
    async restart() {
      await countersign.stop();
      countersign = await startCountersign(settings);
      return countersign;
    },
    client,
    agentRequest,
    eventsUrl,
    baseUrl,
    prefix,
    cards: () => slack.state.messages('C0OPS'),
    card: (runId) =>
      until(() =>
        slack.state
          .messages('C0OPS')
          .find((message) => cardRunId(message) === runId && message.text.length > 0),
      ),
    thread: (card) => slack.state.replies(card.channel, card.ts).filter((reply) => reply.ts !== card.ts),
    until,
    async rendered(runId) {
      const deadline = Date.now() + 10_000;
      while ((await countersign.approvals.changedMark(runId)) !== undefined) {
        if (Date.now() > deadline) throw new Error(`botStack.rendered: run ${runId} is still not shown`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
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
      const answer = await send(payload);
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
      const answer = await send(payload);
      return { status: answer.status, body: answer.body };
    },
    async stop() {
      await client.close();
      for (const replica of replicas) await replica.stop();
      await countersign.stop();
      await slack.stop();
      await removeStackState(url, prefix);
    },
  };
}

/** Obliterates the freight stack's queues under `prefix` and deletes the rest of its keys. */
async function removeStackState(url: string, prefix: string): Promise<void> {
  const admin = new Redis(url);
  try {
    for (const queue of QUEUES) {
      const q = new Queue(queue, { connection: admin, prefix: bullPrefix(prefix) });
      await q.obliterate({ force: true });
      await q.close();
    }
    await deleteKeysUnder(admin, prefix);
  } finally {
    admin.disconnect();
  }
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
