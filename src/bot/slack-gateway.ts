import type { Block, HomeView, KnownBlock, ModalView } from '@slack/types';
import {
  ErrorCode,
  type Logger,
  type LogLevel,
  type WebAPIPlatformError,
  type WebAPIRateLimitedError,
  WebClient,
} from '@slack/web-api';
import { z } from 'zod';
import type { MessageRef } from '../approvals/message-ledger.ts';
import { CountersignError } from '../pipeline/index.ts';

export type { MessageRef };

/** A message as views/ builds it: fallback text plus blocks. */
export interface SlackMessage {
  readonly text: string;
  readonly blocks: readonly (KnownBlock | Block)[];
}

/** What Countersign writes into a message's metadata so it can find the message again. */
export interface MessageTag {
  readonly runId: string;
  /** The message's name in the run's ledger (`card`, `diff:v2`, `escalation:…`). */
  readonly name: string;
}

/** The clients the gateway uses, each configured for one kind of call (see `createSlackClients`). */
export interface SlackClients {
  /**
   * Answers to people (ephemerals, modal updates): retried by @slack/web-api, with a timeout. Kept apart
   * from rendering, so a card update waiting out a 429 never delays someone's answer.
   */
  readonly interactive: WebClient;
  /**
   * Rendering: updates, history, DMs — idempotent, so retried after a 5xx or a timeout, with a timeout.
   * A 429 is not retried by the client but by the gateway, after exactly Slack's Retry-After.
   */
  readonly background: WebClient;
  /**
   * `chat.postMessage`: never retried blindly (a retry after an unknown outcome posts twice); also
   * `usergroups.users.list`, whose caller retries on its own schedule (a start-up must not wait out
   * half an hour of retries).
   */
  readonly posts: WebClient;
  /** `views.open` only: never waits behind back-off; a trigger id dies 3 s after the click. */
  readonly modals: WebClient;
}

/** No Slack call may hang a rendering or a listener for longer than this. */
export const SLACK_TIMEOUT_MS = 10_000;
/** Slack refuses a trigger id 3 s after the click: a form that cannot open by then is not opened. */
const MODAL_TIMEOUT_MS = 2_500;

/**
 * The gateway's clients (see `SlackClients`): each keeps its own queue, so back-off on one kind of call
 * never holds another.
 */
export function createSlackClients(options: {
  readonly token: string;
  readonly apiUrl?: string;
  readonly logLevel?: LogLevel;
  /** Where the clients log (then `logLevel` is the logger's). */
  readonly logger?: Logger;
  /** How long one call may take (default `SLACK_TIMEOUT_MS`; opening a modal never waits past 2.5 s). */
  readonly timeoutMs?: number;
  /** The client for answers to people (the Bolt app's); by default a new one with retries and the timeout. */
  readonly interactive?: WebClient;
}): SlackClients {
  const base = {
    ...(options.apiUrl === undefined ? {} : { slackApiUrl: options.apiUrl }),
    ...(options.logger !== undefined
      ? { logger: options.logger }
      : options.logLevel === undefined
        ? {}
        : { logLevel: options.logLevel }),
  };
  const timeout = options.timeoutMs ?? SLACK_TIMEOUT_MS;
  return {
    interactive: options.interactive ?? new WebClient(options.token, { ...base, timeout }),
    background: new WebClient(options.token, { ...base, timeout, rejectRateLimitedCalls: true }),
    posts: new WebClient(options.token, { ...base, timeout, retryConfig: { retries: 0 } }),
    modals: new WebClient(options.token, {
      ...base,
      timeout: Math.min(timeout, MODAL_TIMEOUT_MS),
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
    }),
  };
}

/** The card's metadata type (kept from before other messages were tagged; cards keep it). */
const CARD_EVENT = 'countersign_card';
const MESSAGE_EVENT = 'countersign_message';

const historySchema = z.object({
  messages: z
    .array(
      z.object({
        ts: z.string(),
        metadata: z
          .object({ event_type: z.string(), event_payload: z.record(z.string(), z.unknown()).optional() })
          .optional(),
      }),
    )
    .default([]),
  response_metadata: z.object({ next_cursor: z.string().optional() }).optional(),
});

/** How many pages of history a search reads at most (200 messages each). */
const SEARCH_PAGES = 10;

/**
 * The one module that talks to Slack's Web API. Posting is never blindly retried: a post whose outcome
 * is unknown is looked for — by the metadata every message carries — before it is sent again. Modals
 * open on a client of their own that answers at once rather than queueing behind rate-limit back-off.
 */
export class SlackGateway {
  private readonly pacer = new RateLimitPacer();

  constructor(private readonly clients: SlackClients) {}

  /** Posts a tagged message (in a thread when `threadTs` is given) and returns where it is. */
  async post(input: {
    channel: string;
    threadTs?: string;
    message: SlackMessage;
    tag: MessageTag;
  }): Promise<MessageRef> {
    const posted = await this.clients.posts.chat.postMessage({
      channel: input.channel,
      ...(input.threadTs === undefined ? {} : { thread_ts: input.threadTs }),
      text: input.message.text,
      blocks: [...input.message.blocks],
      unfurl_links: false,
      unfurl_media: false,
      metadata: metadataOf(input.tag),
    });
    return { channel: posted.channel ?? input.channel, ts: posted.ts ?? '' };
  }

  /**
   * Posts a notice that belongs to no run (the drift alarm): no metadata, never retried blindly (the
   * caller claims it first, so a lost answer is at worst one notice posted again after its lease).
   */
  async notice(channel: string, message: SlackMessage): Promise<MessageRef> {
    const posted = await this.clients.posts.chat.postMessage({
      channel,
      text: message.text,
      blocks: [...message.blocks],
      unfurl_links: false,
      unfurl_media: false,
    });
    return { channel: posted.channel ?? channel, ts: posted.ts ?? '' };
  }

  /**
   * The messages posted with `tag` in a channel (or a thread), oldest first. Reads the newest
   * 2,000 messages (`SEARCH_PAGES` pages of 200) — a post whose answer was lost is among the newest, and
   * no clock is trusted to bound the search (Slack's and ours may disagree).
   */
  async find(input: { channel: string; threadTs?: string; tag: MessageTag }): Promise<MessageRef[]> {
    const found: { ts: string }[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < SEARCH_PAGES; page++) {
      const args = {
        channel: input.channel,
        include_all_metadata: true,
        limit: 200,
        ...(cursor === undefined ? {} : { cursor }),
      };
      const { threadTs } = input;
      const answer = historySchema.parse(
        threadTs === undefined
          ? await this.pacer.call('conversations.history', () =>
              this.clients.background.conversations.history(args),
            )
          : await this.pacer.call('conversations.replies', () =>
              this.clients.background.conversations.replies({ ...args, ts: threadTs }),
            ),
      );
      for (const message of answer.messages) if (isTagged(message.metadata, input.tag)) found.push(message);
      cursor = answer.response_metadata?.next_cursor || undefined;
      if (cursor === undefined) break;
    }
    return found
      .sort((a, b) => Number(a.ts) - Number(b.ts))
      .map((message) => ({ channel: input.channel, ts: message.ts }));
  }

  /** Replaces a message's content. */
  async update(ref: Pick<MessageRef, 'channel' | 'ts'>, message: SlackMessage): Promise<void> {
    await this.pacer.call('chat.update', () =>
      this.clients.background.chat.update({
        channel: ref.channel,
        ts: ref.ts,
        text: message.text,
        blocks: [...message.blocks],
      }),
    );
  }

  /** A private answer only `user` sees (refusals, explanations). */
  async whisper(channel: string, user: string, message: SlackMessage): Promise<void> {
    await this.clients.interactive.chat.postEphemeral({
      channel,
      user,
      text: message.text,
      blocks: [...message.blocks],
    });
  }

  /**
   * The name to show for a person (users.info): their full name, else their display name; undefined
   * when Slack has none or does not answer (the views then show a mention, which Slack draws as the name).
   */
  async personName(userId: string): Promise<string | undefined> {
    try {
      const answer = await this.pacer.call('users.info', () =>
        this.clients.background.users.info({ user: userId }),
      );
      const user = answer.user;
      const name = [user?.profile?.real_name, user?.real_name, user?.profile?.display_name, user?.name].find(
        (candidate) => candidate !== undefined && candidate.trim() !== '',
      );
      return name?.trim();
    } catch {
      return undefined;
    }
  }

  /** Publishes a person's App Home tab (replacing what it showed). */
  async publishHome(userId: string, view: HomeView): Promise<void> {
    await this.pacer.call('views.publish', () =>
      this.clients.background.views.publish({ user_id: userId, view }),
    );
  }

  /** The link that opens a message in Slack (`chat.getPermalink`). */
  async permalink(ref: Pick<MessageRef, 'channel' | 'ts'>): Promise<string> {
    const answer = await this.pacer.call('chat.getPermalink', () =>
      this.clients.background.chat.getPermalink({ channel: ref.channel, message_ts: ref.ts }),
    );
    if (answer.permalink === undefined)
      throw new CountersignError('slack_unexpected', 'chat.getPermalink returned no permalink');
    return answer.permalink;
  }

  /** The members of a Slack user group (`usergroups.users.list`). */
  async usergroupMembers(usergroup: string): Promise<readonly string[]> {
    const answer = await this.pacer.call('usergroups.users.list', () =>
      this.clients.posts.usergroups.users.list({ usergroup }),
    );
    return answer.users ?? [];
  }

  /** Opens a DM with one or more people and returns its channel id. */
  async openDm(users: readonly string[]): Promise<string> {
    const opened = await this.pacer.call('conversations.open', () =>
      this.clients.background.conversations.open({ users: users.join(',') }),
    );
    const id = opened.channel?.id;
    if (id === undefined)
      throw new CountersignError('slack_unexpected', 'conversations.open returned no channel');
    return id;
  }

  /**
   * Opens a modal for a click's trigger id. Slack refuses a trigger id 3 s after the click, so this
   * never waits: a refusal, a rate limit or no answer in time is `too_late` (tell the person to try
   * again) rather than a form that would open late or not at all.
   */
  async openModal(triggerId: string, view: ModalView): Promise<'opened' | 'too_late'> {
    try {
      await this.clients.modals.views.open({ trigger_id: triggerId, view });
      return 'opened';
    } catch {
      return 'too_late';
    }
  }

  async updateModal(viewId: string, view: ModalView, hash?: string): Promise<void> {
    await this.clients.interactive.views.update({
      view_id: viewId,
      view,
      ...(hash === undefined ? {} : { hash }),
    });
  }
}

/** How long one background call waits out Slack's rate limits in all before it fails (its job is retried). */
const RATE_LIMIT_PATIENCE_MS = 60_000;

/**
 * Background calls answered 429 wait out Slack's Retry-After and go again — nothing added to Slack's
 * figure, so rendering goes on at Slack's pace. While a method is limited its calls go one at a time, in
 * the order they came, so the end of a wait sends one call rather than every waiting one (most of which
 * Slack would refuse again). (@slack/web-api's own handling adds its exponential retry backoff to every
 * wait and gives up after 10: in a storm of card updates, calls slept for minutes while Slack's quota
 * went unused.)
 */
class RateLimitPacer {
  private readonly until = new Map<string, number>();
  /** Per limited method, the last call in line. */
  private readonly lines = new Map<string, Promise<unknown>>();

  async call<T>(method: string, send: () => Promise<T>): Promise<T> {
    const giveUpAt = Date.now() + RATE_LIMIT_PATIENCE_MS;
    for (;;) {
      try {
        const limited = (this.until.get(method) ?? 0) > Date.now() || this.lines.has(method);
        return await (limited ? this.inLine(method, send) : send());
      } catch (error) {
        const retryAfterMs = rateLimitedFor(error);
        if (retryAfterMs === undefined || Date.now() + retryAfterMs > giveUpAt) throw error;
        this.until.set(method, Math.max(this.until.get(method) ?? 0, Date.now() + retryAfterMs));
      }
    }
  }

  /** `send` after the calls already in line for `method`, once its Retry-After is over. */
  private inLine<T>(method: string, send: () => Promise<T>): Promise<T> {
    const turn = async () => {
      const wait = (this.until.get(method) ?? 0) - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      return send();
    };
    const result = (this.lines.get(method) ?? Promise.resolve()).then(turn, turn);
    const last = result.catch(() => undefined);
    this.lines.set(method, last);
    void last.then(() => {
      if (this.lines.get(method) === last) this.lines.delete(method);
    });
    return result;
  }
}

/** Milliseconds Slack asked to wait, for a call it answered 429; else undefined. */
function rateLimitedFor(error: unknown): number | undefined {
  if (!(error instanceof Error) || (error as { code?: unknown }).code !== ErrorCode.RateLimitedError)
    return undefined;
  return (error as WebAPIRateLimitedError).retryAfter * 1000;
}

function metadataOf(tag: MessageTag) {
  return tag.name === 'card'
    ? { event_type: CARD_EVENT, event_payload: { run_id: tag.runId } }
    : { event_type: MESSAGE_EVENT, event_payload: { run_id: tag.runId, name: tag.name } };
}

function isTagged(
  metadata: { event_type: string; event_payload?: Record<string, unknown> | undefined } | undefined,
  tag: MessageTag,
): boolean {
  if (metadata?.event_payload?.run_id !== tag.runId) return false;
  if (tag.name === 'card') return metadata.event_type === CARD_EVENT;
  return metadata.event_type === MESSAGE_EVENT && metadata.event_payload.name === tag.name;
}

/** Slack errors worth trying again later: everything else Slack answers is an answer. */
const TRANSIENT = new Set([
  'ratelimited',
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
]);

/**
 * The Slack error code of a call Slack refused for good — a channel the bot is not in, a deleted
 * message, blocks it will not take — or undefined for a failure worth retrying (5xx, 429, a timeout).
 */
export function refusedForGood(error: unknown): string | undefined {
  if (!(error instanceof Error) || (error as { code?: unknown }).code !== ErrorCode.PlatformError)
    return undefined;
  const code = (error as WebAPIPlatformError).data.error;
  return TRANSIENT.has(code) ? undefined : code;
}
