/**
 * Playing Slack towards the bot: signed interaction requests (`POST /slack/events`, form body
 * `payload=<json>`) with payloads shaped like test/fixtures/slack-protocol/*.json. Used by tests, and by
 * the emulator's page when a person clicks.
 *
 * Trigger ids minted here are accepted by the emulator's views.open/views.push (see trigger-ids.ts).
 */
import { createHmac } from 'node:crypto';
import type { Block, SlackView, ViewStateValues } from './slack-objects.ts';
import { initialStateValues, mergeStateValues, type OptionChoice } from './state-values.ts';
import { mintTriggerId } from './trigger-ids.ts';

/** The headers Slack signs every request with. */
export interface SlackSignatureHeaders {
  readonly 'X-Slack-Request-Timestamp': string;
  readonly 'X-Slack-Signature': string;
}

/**
 * Sign a request body the way Slack does: `v0=` + hex HMAC-SHA256(secret, `v0:<timestamp>:<body>`).
 *
 * @example
 * signSlackRequest('secret', 'payload=%7B%7D', 1775462400)
 * // { 'X-Slack-Request-Timestamp': '1775462400', 'X-Slack-Signature': 'v0=…' }
 */
export function signSlackRequest(
  signingSecret: string,
  body: string,
  timestampSeconds: number,
): SlackSignatureHeaders {
  const digest = createHmac('sha256', signingSecret)
    .update(`v0:${timestampSeconds}:${body}`, 'utf8')
    .digest('hex');
  return { 'X-Slack-Request-Timestamp': String(timestampSeconds), 'X-Slack-Signature': `v0=${digest}` };
}

// --- payloads -------------------------------------------------------------------------------------------

/** The person interacting. */
export interface InteractingUser {
  readonly id: string;
  /** Slack handle (default: the id, lower-cased). */
  readonly name?: string;
}

/** Fields every interaction payload shares; all defaulted to the ids in test/fixtures/slack-protocol. */
export interface InteractionOptions {
  readonly user: InteractingUser;
  readonly team?: { readonly id: string; readonly domain: string };
  readonly apiAppId?: string;
  /** The legacy verification token Slack still sends (Bolt ignores it). */
  readonly verificationToken?: string;
  /** Default: a fresh one for `user` (see trigger-ids.ts). */
  readonly triggerId?: string;
  /** Epoch ms for action_ts and the trigger id (default Date.now()). */
  readonly nowMs?: number;
}

/** The element a person used, as they used it. */
export type BlockActionInput =
  | {
      readonly type: 'button';
      readonly actionId: string;
      readonly blockId: string;
      readonly text: string;
      readonly value?: string;
      readonly style?: 'primary' | 'danger';
    }
  | {
      readonly type: 'static_select' | 'overflow' | 'radio_buttons';
      readonly actionId: string;
      readonly blockId: string;
      readonly selectedOption: OptionChoice;
      readonly placeholder?: string;
    }
  | {
      readonly type: 'checkboxes' | 'multi_static_select';
      readonly actionId: string;
      readonly blockId: string;
      readonly selectedOptions: readonly OptionChoice[];
      readonly placeholder?: string;
    }
  | {
      readonly type: 'datepicker';
      readonly actionId: string;
      readonly blockId: string;
      readonly selectedDate: string;
    }
  | {
      readonly type: 'timepicker';
      readonly actionId: string;
      readonly blockId: string;
      /** `HH:mm` */
      readonly selectedTime: string;
    }
  | {
      readonly type: 'datetimepicker';
      readonly actionId: string;
      readonly blockId: string;
      /** Unix seconds. */
      readonly selectedDateTime: number;
    };

/** A message the action happened on: an emulator message fits, and so does a hand-written one. */
export interface MessageLike {
  readonly ts: string;
  readonly text?: string | undefined;
  readonly blocks?: readonly Block[] | undefined;
  readonly thread_ts?: string | undefined;
  readonly user?: string | undefined;
  readonly bot_id?: string | undefined;
  readonly app_id?: string | undefined;
}

/** A view the action or submission happened in: an emulator view fits; only `id` is required. */
export type ViewLike = { readonly id: string } & {
  readonly [K in keyof SlackView]?: SlackView[K] | undefined;
};

/** Where the action happened. */
export type ActionContainer =
  | {
      readonly type: 'message';
      readonly channel: { readonly id: string; readonly name?: string };
      readonly message: MessageLike;
      readonly isEphemeral?: boolean;
      /** Default: a hooks.slack.com URL, which the emulator does not serve. */
      readonly responseUrl?: string;
    }
  | { readonly type: 'view'; readonly view: ViewLike; readonly stateValues?: ViewStateValues };

type Json = { readonly [key: string]: unknown };

/** A `block_actions` payload (see block_actions.message.json and block_actions.view.json). */
export type BlockActionsPayload = Json & {
  readonly type: 'block_actions';
  readonly trigger_id: string;
  readonly user: Json;
  readonly container: Json;
  readonly actions: readonly Json[];
};

/** A `view_submission` payload (see view_submission.json). */
export type ViewSubmissionPayload = Json & {
  readonly type: 'view_submission';
  readonly trigger_id: string;
  readonly view: Json;
};

/** A `view_closed` payload (see view_closed.json). */
export type ViewClosedPayload = Json & { readonly type: 'view_closed'; readonly view: Json };

/**
 * A `block_actions` payload: a button click or a selection, on a message or in a modal.
 *
 * @example
 * const card = slack.state.messages('C0OPS')[0]!;
 * const payload = buildBlockActionsPayload({
 *   user: { id: 'U0OP1', name: 'dana' },
 *   container: { type: 'message', channel: { id: 'C0OPS', name: 'ops-approvals' }, message: card },
 *   action: buttonAction(card.blocks, 'approve'),
 * });
 */
export function buildBlockActionsPayload(
  input: InteractionOptions & { readonly container: ActionContainer; readonly action: BlockActionInput },
): BlockActionsPayload {
  const nowMs = input.nowMs ?? Date.now();
  const common = commonFields(input, nowMs);
  const action = { ...actionFields(input.action), action_ts: (nowMs / 1000).toFixed(6) };
  const { container } = input;
  if (container.type === 'view') {
    return {
      type: 'block_actions',
      ...common,
      container: { type: 'view', view_id: container.view.id },
      view: viewFields(container.view, container.stateValues, common.team.id),
      actions: [action],
    };
  }
  const { channel, message } = container;
  return {
    type: 'block_actions',
    ...common,
    container: {
      type: 'message',
      message_ts: message.ts,
      channel_id: channel.id,
      is_ephemeral: container.isEphemeral ?? false,
    },
    channel: {
      id: channel.id,
      name: channel.name ?? (channel.id.startsWith('D') ? 'directmessage' : channel.id),
    },
    message: {
      type: 'message',
      subtype: 'bot_message',
      ts: message.ts,
      ...(message.thread_ts === undefined ? {} : { thread_ts: message.thread_ts }),
      ...(message.user === undefined ? {} : { user: message.user }),
      bot_id: message.bot_id ?? 'B0BOT',
      app_id: message.app_id ?? common.api_app_id,
      text: message.text ?? '',
      blocks: message.blocks ?? [],
    },
    state: { values: {} },
    response_url:
      container.responseUrl ??
      `https://hooks.slack.com/actions/${common.team.id}/${Math.floor(nowMs)}/emulator`,
    actions: [action],
  };
}

/**
 * A `view_submission` payload: the person pressed the modal's submit button with these input values.
 *
 * @example
 * buildViewSubmissionPayload({
 *   user: { id: 'U0FIN1' },
 *   view: slack.state.modalStack('U0FIN1')[0]!,
 *   values: inputValues({ 'arg:s4:amount': stateValue.number('1489.00') }),
 * });
 */
export function buildViewSubmissionPayload(
  input: InteractionOptions & { readonly view: ViewLike; readonly values?: ViewStateValues },
): ViewSubmissionPayload {
  const common = commonFields(input, input.nowMs ?? Date.now());
  return {
    type: 'view_submission',
    ...common,
    view: viewFields(input.view, input.values, common.team.id),
    response_urls: [],
  };
}

/** A `view_closed` payload (sent only for modals opened with notify_on_close). */
export function buildViewClosedPayload(
  input: Omit<InteractionOptions, 'triggerId'> & { readonly view: ViewLike; readonly isCleared?: boolean },
): ViewClosedPayload {
  const { trigger_id: _unused, ...common } = commonFields(input, input.nowMs ?? Date.now());
  return {
    type: 'view_closed',
    ...common,
    view: viewFields(input.view, undefined, common.team.id),
    is_cleared: input.isCleared ?? false,
  };
}

/**
 * The {@link BlockActionInput} for clicking the button `actionId` among `blocks` (in an actions block or
 * a section accessory). Throws when there is no such button: the test is wrong, not the bot.
 */
export function buttonAction(blocks: readonly Block[], actionId: string): BlockActionInput {
  for (const block of blocks) {
    const elements = [...(Array.isArray(block.elements) ? block.elements : []), block.accessory];
    for (const element of elements) {
      if (!isJsonObject(element) || element.type !== 'button' || element.action_id !== actionId) continue;
      const text =
        isJsonObject(element.text) && typeof element.text.text === 'string' ? element.text.text : '';
      return {
        type: 'button',
        actionId,
        blockId: typeof block.block_id === 'string' ? block.block_id : '',
        text,
        ...(typeof element.value === 'string' ? { value: element.value } : {}),
        ...(element.style === 'primary' || element.style === 'danger' ? { style: element.style } : {}),
      };
    }
  }
  throw new Error(`no button with action_id ${JSON.stringify(actionId)} in these blocks`);
}

// --- sending --------------------------------------------------------------------------------------------

/** Slack waits this long for an interaction's acknowledgement (HTTP answer or Socket Mode ack). */
export const SLACK_ACK_TIMEOUT_MS = 3_000;

/**
 * The bot's answer to an interaction. `body` is parsed JSON, the raw text, or null when empty. Over
 * Socket Mode the acknowledgement's payload takes the place of the HTTP body (see socket-mode.ts).
 */
export interface InteractionResponse {
  readonly status: number;
  readonly body: unknown;
  readonly text: string;
}

/**
 * POST a signed interaction to the bot, as Slack does: form body `payload=<json>`, signature headers.
 *
 * @example
 * const { status, body } = await postInteraction('http://127.0.0.1:3000/slack/events', secret, payload);
 */
export async function postInteraction(
  eventsUrl: string,
  signingSecret: string,
  payload: Json,
  options: {
    /** Unix seconds to sign with (default now); set it in the past to test replay refusal. */
    readonly timestamp?: number;
    /** Marks the request as Slack's retry number N (X-Slack-Retry-Num / -Reason). */
    readonly retryNum?: number;
    /** Give up after this long (Slack waits 3 s for an ack); the promise then rejects with a TimeoutError. */
    readonly timeoutMs?: number;
  } = {},
): Promise<InteractionResponse> {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const response = await fetch(eventsUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...signSlackRequest(signingSecret, body, timestamp),
      ...(options.retryNum === undefined
        ? {}
        : { 'X-Slack-Retry-Num': String(options.retryNum), 'X-Slack-Retry-Reason': 'http_timeout' }),
    },
    body,
    ...(options.timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(options.timeoutMs) }),
  });
  const text = await response.text();
  return { status: response.status, body: parseBody(text), text };
}

// --- internals ------------------------------------------------------------------------------------------

/** A JSON object (not an array, not null), as payloads and answers are. */
export function isJsonObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseBody(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function commonFields(input: InteractionOptions, nowMs: number) {
  const team = input.team ?? { id: 'T0TEAM', domain: 'acme' };
  const name = input.user.name ?? input.user.id.toLowerCase();
  return {
    team,
    user: { id: input.user.id, username: name, name, team_id: team.id },
    api_app_id: input.apiAppId ?? 'A0APP',
    token: input.verificationToken ?? 'legacy-verification-token',
    trigger_id: input.triggerId ?? mintTriggerId(input.user.id, { nowMs }),
    enterprise: null,
    is_enterprise_install: false,
  };
}

function actionFields(action: BlockActionInput): Json {
  const base = { type: action.type, action_id: action.actionId, block_id: action.blockId };
  const placeholder = (text: string | undefined) =>
    text === undefined ? {} : { placeholder: { type: 'plain_text', text, emoji: true } };
  switch (action.type) {
    case 'button':
      return {
        ...base,
        text: { type: 'plain_text', text: action.text, emoji: true },
        ...(action.value === undefined ? {} : { value: action.value }),
        ...(action.style === undefined ? {} : { style: action.style }),
      };
    case 'static_select':
    case 'overflow':
    case 'radio_buttons':
      return {
        ...base,
        selected_option: {
          text: { type: 'plain_text', text: action.selectedOption.text, emoji: true },
          value: action.selectedOption.value,
        },
        ...placeholder(action.placeholder),
      };
    case 'checkboxes':
    case 'multi_static_select':
      return {
        ...base,
        selected_options: action.selectedOptions.map((option) => ({
          text: { type: 'plain_text', text: option.text, emoji: true },
          value: option.value,
        })),
        ...placeholder(action.placeholder),
      };
    case 'datepicker':
      return { ...base, selected_date: action.selectedDate };
    case 'timepicker':
      return { ...base, selected_time: action.selectedTime };
    case 'datetimepicker':
      return { ...base, selected_date_time: action.selectedDateTime };
  }
}

/**
 * A view as interaction payloads carry it. `state.values` holds what Slack would send: every input's
 * initial value, overlaid with what was typed into the view so far (the view's own state), overlaid
 * with `values` (what the person entered for this submission or click).
 */
function viewFields(view: ViewLike, values: ViewStateValues | undefined, teamId: string): Json {
  return {
    id: view.id,
    team_id: view.team_id ?? teamId,
    type: view.type ?? 'modal',
    callback_id: view.callback_id ?? '',
    private_metadata: view.private_metadata ?? '',
    hash: view.hash ?? '',
    ...(view.title === undefined ? {} : { title: view.title }),
    ...(view.submit === undefined ? {} : { submit: view.submit }),
    ...(view.close === undefined ? {} : { close: view.close }),
    blocks: view.blocks ?? [],
    state: {
      values: mergeStateValues(
        mergeStateValues(initialStateValues(view.blocks ?? []), view.state?.values ?? {}),
        values ?? {},
      ),
    },
    root_view_id: view.root_view_id ?? view.id,
    previous_view_id: view.previous_view_id ?? null,
    app_id: view.app_id ?? 'A0APP',
    external_id: view.external_id ?? '',
    bot_id: view.bot_id ?? 'B0BOT',
    clear_on_close: view.clear_on_close ?? false,
    notify_on_close: view.notify_on_close ?? false,
  };
}
