/**
 * Slack's side of a person using the page: a click or a submission becomes an interaction payload sent
 * to the app exactly as Slack would send it — signed to its `/slack/events`, or in an envelope over its
 * Socket Mode connection — and the app's answer is applied (`response_action` errors, update, push,
 * clear; an empty answer closes the modal).
 */
import { z } from 'zod';
import {
  buildAppHomeOpenedEvent,
  buildSlashCommand,
  postEvent,
  postSlashCommand,
  ResponseUrls,
} from '../app-requests.ts';
import {
  type ActionContainer,
  buildBlockActionsPayload,
  buildViewClosedPayload,
  buildViewSubmissionPayload,
  type InteractionResponse,
  isJsonObject,
  postInteraction,
  SLACK_ACK_TIMEOUT_MS,
} from '../interactions.ts';
import type { Block, SlackView, ViewStateValues } from '../slack-objects.ts';
import { type EnvelopeType, isSocketModeError, type SocketModeEndpoint } from '../socket-mode.ts';
import { decodeView } from '../web-api/methods/views.ts';
import type { Workspace } from '../workspace.ts';
import type {
  PageActionRequest,
  PageActionResult,
  PageCloseRequest,
  PageCloseResult,
  PageFailure,
  PageSubmitRequest,
  PageSubmitResult,
} from './page-protocol.ts';

/**
 * Where interactions go: the app's request URL and the signing secret Slack would sign with, or the app
 * connected over Socket Mode (the emulator's `socketMode` endpoint).
 */
export type InteractionTarget =
  | {
      /** e.g. `http://127.0.0.1:3000/slack/events` */
      readonly url: string;
      readonly signingSecret: string;
      /** How long to wait for the app's answer (Slack: 3000 ms). */
      readonly ackTimeoutMs?: number;
    }
  | {
      readonly socketMode: true;
      /** How long to wait for the app's acknowledgement (Slack: 3000 ms). */
      readonly ackTimeoutMs?: number;
    };

const submissionAnswer = z.union([
  z.looseObject({
    response_action: z.literal('errors'),
    errors: z.record(z.string(), z.string()),
  }),
  z.looseObject({ response_action: z.literal('update'), view: z.unknown() }),
  z.looseObject({ response_action: z.literal('push'), view: z.unknown() }),
  z.looseObject({ response_action: z.literal('clear') }),
]);

const failure = (error: string, message: string): PageFailure => ({ ok: false, error, message });

/** Relays the page's clicks and submissions to the app and applies its answers to the workspace. */
export class PageInteractions {
  /** `response_action: "errors"` per view, valid while the view keeps the hash it was answered for. */
  readonly #errors = new Map<string, { readonly hash: string; readonly errors: Record<string, string> }>();

  constructor(
    private readonly deps: {
      readonly workspace: Workspace;
      readonly target: InteractionTarget | undefined;
      /** Where `{ socketMode: true }` delivers. */
      readonly socketMode: Pick<SocketModeEndpoint, 'deliver'>;
      readonly now: () => number;
      /** Where slash commands' response URLs lead (answers become the person's ephemerals). */
      readonly responses?: ResponseUrls;
    },
  ) {}

  /** The person opened the app's Home tab: `app_home_opened` to the app (it publishes the tab). */
  async homeOpened(userId: string): Promise<PageActionResult> {
    const { workspace, target } = this.deps;
    if (workspace.user(userId) === undefined) return failure('user_not_found', `There is no user ${userId}.`);
    if (target === undefined) return notConfigured();
    const home = workspace.homeView(userId);
    const envelope = buildAppHomeOpenedEvent({
      user: userId,
      team: workspace.identity.teamId,
      apiAppId: workspace.identity.appId,
      nowMs: this.deps.now(),
      ...(home === undefined ? {} : { viewId: home.id }),
    });
    const timeoutMs = target.ackTimeoutMs ?? SLACK_ACK_TIMEOUT_MS;
    const sent =
      'socketMode' in target
        ? await deliverOverSocket(this.deps.socketMode, envelope, timeoutMs, 'events_api')
        : await sendOverHttp(target, timeoutMs, () =>
            postEvent(target.url, target.signingSecret, envelope, { timeoutMs }),
          );
    return sent.ok ? { ok: true, status: sent.response.status } : sent;
  }

  /**
   * The person typed a slash command in a channel: sent to the app signed and form-encoded, with a
   * response_url; an answer in the acknowledgement, or later at the response_url, is shown to them.
   */
  async command(request: {
    readonly user: string;
    readonly channel: string;
    readonly text: string;
  }): Promise<PageActionResult> {
    const { workspace, target, responses } = this.deps;
    const user = workspace.user(request.user);
    if (user === undefined) return failure('user_not_found', `There is no user ${request.user}.`);
    const channel = workspace.channel(request.channel);
    if (channel === undefined || (channel.is_im && !channel.members.includes(user.id)))
      return failure('channel_not_found', `${user.real_name} cannot see conversation ${request.channel}.`);
    if (target === undefined || responses === undefined) return notConfigured();
    const match = /^(\/[a-z0-9_-]+)(?:\s+([\s\S]*))?$/i.exec(request.text.trim());
    if (match?.[1] === undefined)
      return failure('not_a_command', 'Type a slash command, e.g. /countersign help.');
    const fields = buildSlashCommand({
      command: match[1].toLowerCase(),
      text: match[2] ?? '',
      user: user.id,
      channel: channel.id,
      responseUrl: responses.mint(channel.id, user.id),
      team: workspace.identity.teamId,
      apiAppId: workspace.identity.appId,
      nowMs: this.deps.now(),
    });
    const timeoutMs = target.ackTimeoutMs ?? SLACK_ACK_TIMEOUT_MS;
    const sent =
      'socketMode' in target
        ? await deliverOverSocket(this.deps.socketMode, fields, timeoutMs, 'slash_commands')
        : await sendOverHttp(target, timeoutMs, () =>
            postSlashCommand(target.url, target.signingSecret, fields, { timeoutMs }),
          );
    if (!sent.ok) return sent;
    const answer = ResponseUrls.answerIn(sent.response.body);
    if (answer !== undefined) responses.show(channel.id, user.id, answer);
    return { ok: true, status: sent.response.status };
  }

  /** True when there is an app to send interactions to. */
  get configured(): boolean {
    return this.deps.target !== undefined;
  }

  /** The field errors the app last answered for this view, while it is unchanged. */
  errorsFor(view: SlackView): Readonly<Record<string, string>> {
    const entry = this.#errors.get(view.id);
    return entry !== undefined && entry.hash === view.hash ? entry.errors : {};
  }

  /** A `block_actions` payload for a click or a selection, on a message or in a view. */
  async action(request: PageActionRequest): Promise<PageActionResult> {
    const { workspace } = this.deps;
    const user = workspace.user(request.user);
    if (user === undefined) return failure('user_not_found', `There is no user ${request.user}.`);
    let container: ActionContainer;
    if (request.container.type === 'message') {
      const { channel: channelId, ts } = request.container;
      const channel = workspace.channel(channelId);
      if (channel === undefined || (channel.is_im && !channel.members.includes(user.id))) {
        return failure('channel_not_found', `${user.real_name} cannot see conversation ${channelId}.`);
      }
      const ephemeral = request.container.ephemeral === true;
      const message = ephemeral
        ? ephemeralAsMessage(workspace, channel.id, ts, user.id)
        : workspace.message(channel.id, ts);
      if (message === undefined) return failure('message_not_found', 'That message is gone.');
      container = {
        type: 'message',
        channel: { id: channel.id, ...(channel.name === undefined ? {} : { name: channel.name }) },
        message,
        isEphemeral: ephemeral,
      };
    } else {
      const view = this.#viewOf(user.id, request.container.viewId);
      if (view === undefined) return failure('view_not_found', 'That view is no longer open.');
      const recorded = workspace.recordViewValues(view.id, inputValuesOnly(view, request.container.values));
      container = { type: 'view', view: recorded ?? view, stateValues: request.container.values };
    }
    const target = this.deps.target;
    if (target === undefined) return notConfigured();
    const payload = buildBlockActionsPayload({
      user: { id: user.id, name: user.name },
      container,
      action: request.action,
      nowMs: this.deps.now(),
    });
    const answer = await this.#send(target, payload);
    if (!answer.ok) return answer;
    return { ok: true, status: answer.response.status };
  }

  /** A `view_submission` payload for the modal on top of the user's stack; applies the app's answer. */
  async submit(request: PageSubmitRequest): Promise<PageSubmitResult> {
    const { workspace } = this.deps;
    const user = workspace.user(request.user);
    if (user === undefined) return failure('user_not_found', `There is no user ${request.user}.`);
    const view = workspace.modalStack(user.id).at(-1);
    if (view === undefined || view.id !== request.viewId) {
      return failure('view_not_found', 'That modal is no longer open.');
    }
    if (view.submit === undefined) return failure('no_submit', 'This modal has no submit button.');
    const target = this.deps.target;
    if (target === undefined) return notConfigured();
    const recorded = workspace.recordViewValues(view.id, inputValuesOnly(view, request.values)) ?? view;
    this.#errors.delete(view.id);
    const payload = buildViewSubmissionPayload({
      user: { id: user.id, name: user.name },
      view: recorded,
      values: request.values,
      nowMs: this.deps.now(),
    });
    const answer = await this.#send(target, payload);
    if (!answer.ok) return answer;
    const { body } = answer.response;
    if (body === null || (isJsonObject(body) && !('response_action' in body))) {
      workspace.closeTopModal(user.id);
      return { ok: true, outcome: 'closed' };
    }
    const parsed = submissionAnswer.safeParse(body);
    if (!parsed.success) {
      return failure(
        'invalid_response',
        `The app answered with something Slack does not accept: ${answer.response.text.slice(0, 300)}`,
      );
    }
    const action = parsed.data;
    switch (action.response_action) {
      case 'errors': {
        const inputs = new Set(inputBlockIds(view.blocks));
        const unknown = Object.keys(action.errors).filter((blockId) => !inputs.has(blockId));
        if (unknown.length > 0) {
          return failure(
            'invalid_response',
            `The app answered errors for blocks that are not inputs of this view: ${unknown.join(', ')}.`,
          );
        }
        this.#errors.set(view.id, { hash: view.hash, errors: action.errors });
        return { ok: true, outcome: 'errors', errors: action.errors };
      }
      case 'update':
      case 'push': {
        const spec = decodeView(action.view, 'modal');
        if (!spec.ok) {
          return failure(
            'invalid_response',
            `The app's ${action.response_action} view was refused: ${JSON.stringify(spec.response)}`,
          );
        }
        if (action.response_action === 'update') {
          workspace.updateView(view.id, spec.value);
          return { ok: true, outcome: 'updated' };
        }
        const pushed = workspace.pushModal(user.id, spec.value);
        if (typeof pushed === 'string') return failure(pushed, `The app's push was refused (${pushed}).`);
        return { ok: true, outcome: 'pushed' };
      }
      case 'clear':
        workspace.closeModals(user.id);
        return { ok: true, outcome: 'cleared' };
    }
  }

  /** The close button: the top view goes (a `view_closed` is sent first when the view asks for it). */
  async close(request: PageCloseRequest): Promise<PageCloseResult> {
    const { workspace } = this.deps;
    const view = workspace.modalStack(request.user).at(-1);
    if (view === undefined || view.id !== request.viewId) {
      return failure('view_not_found', 'That modal is no longer open.');
    }
    const target = this.deps.target;
    if (view.notify_on_close && target !== undefined) {
      const user = workspace.user(request.user);
      const payload = buildViewClosedPayload({
        user: { id: request.user, ...(user === undefined ? {} : { name: user.name }) },
        view,
        nowMs: this.deps.now(),
      });
      // Slack closes the modal whatever the app answers.
      await this.#send(target, payload);
    }
    workspace.closeTopModal(request.user);
    return { ok: true };
  }

  /** Sends a payload over the target's transport; failures come back as the page's words. */
  async #send(target: InteractionTarget, payload: { readonly [key: string]: unknown }): Promise<Sent> {
    const timeoutMs = target.ackTimeoutMs ?? SLACK_ACK_TIMEOUT_MS;
    if ('socketMode' in target) return deliverOverSocket(this.deps.socketMode, payload, timeoutMs);
    return postOverHttp(target, payload, timeoutMs);
  }

  /** A live view the user may act in: one of their modals, or their Home tab. */
  #viewOf(userId: string, viewId: string): SlackView | undefined {
    const { workspace } = this.deps;
    const modal = workspace.modalStack(userId).find((view) => view.id === viewId);
    if (modal !== undefined) return modal;
    const home = workspace.homeView(userId);
    return home?.id === viewId ? home : undefined;
  }
}

type Sent = { readonly ok: true; readonly response: InteractionResponse } | PageFailure;

function postOverHttp(
  target: { readonly url: string; readonly signingSecret: string },
  payload: { readonly [key: string]: unknown },
  timeoutMs: number,
): Promise<Sent> {
  return sendOverHttp(target, timeoutMs, () =>
    postInteraction(target.url, target.signingSecret, payload, { timeoutMs }),
  );
}

/** One signed request to the app; failures in the page's words. */
async function sendOverHttp(
  target: { readonly url: string },
  timeoutMs: number,
  send: () => Promise<InteractionResponse>,
): Promise<Sent> {
  let response: InteractionResponse;
  try {
    response = await send();
  } catch (error) {
    if (error instanceof DOMException && error.name === 'TimeoutError') {
      return failure('app_timeout', `The app did not answer within ${timeoutMs} ms.`);
    }
    const reason =
      error instanceof Error
        ? error.cause instanceof Error
          ? error.cause.message
          : error.message
        : String(error);
    return failure('app_unreachable', `The app at ${target.url} could not be reached (${reason}).`);
  }
  if (response.status !== 200) {
    return failure('app_error', `The app answered HTTP ${response.status}.`);
  }
  return { ok: true, response };
}

async function deliverOverSocket(
  socketMode: Pick<SocketModeEndpoint, 'deliver'>,
  payload: { readonly [key: string]: unknown },
  timeoutMs: number,
  type?: EnvelopeType,
): Promise<Sent> {
  try {
    return {
      ok: true,
      response: await socketMode.deliver(payload, { timeoutMs, ...(type === undefined ? {} : { type }) }),
    };
  } catch (error) {
    if (!isSocketModeError(error)) throw error;
    switch (error.code) {
      case 'ack_timeout':
        return failure('app_timeout', `The app did not answer within ${timeoutMs} ms.`);
      case 'no_connection':
        return failure(
          'app_unreachable',
          'No app is connected over Socket Mode: start it with its app-level token (xapp-…) and this emulator as its Slack API URL.',
        );
      case 'connection_closed':
        return failure('app_unreachable', "The app's Socket Mode connection closed before it answered.");
    }
  }
}

function notConfigured(): PageFailure {
  return failure(
    'not_configured',
    'This emulator has no app to send interactions to (createSlackEmulator({ interactions })).',
  );
}

/** An ephemeral message of the user's, in the shape a message container needs. */
function ephemeralAsMessage(workspace: Workspace, channel: string, ts: string, userId: string) {
  const ephemeral = workspace
    .ephemerals(channel)
    .find((candidate) => candidate.message_ts === ts && candidate.user === userId);
  if (ephemeral === undefined) return undefined;
  const { identity } = workspace;
  return {
    ts: ephemeral.message_ts,
    text: ephemeral.text,
    blocks: ephemeral.blocks,
    ...(ephemeral.thread_ts === undefined ? {} : { thread_ts: ephemeral.thread_ts }),
    user: identity.botUserId,
    bot_id: identity.botId,
    app_id: identity.appId,
  };
}

function inputBlockIds(blocks: readonly Block[]): string[] {
  return blocks.flatMap((block) =>
    block.type === 'input' && typeof block.block_id === 'string' ? [block.block_id] : [],
  );
}

/**
 * The values of input blocks only: those are what Slack keeps across `views.update` (a select in an
 * actions block starts afresh).
 */
function inputValuesOnly(view: SlackView, values: ViewStateValues): ViewStateValues {
  const inputs = new Set(inputBlockIds(view.blocks));
  return Object.fromEntries(Object.entries(values).filter(([blockId]) => inputs.has(blockId)));
}
