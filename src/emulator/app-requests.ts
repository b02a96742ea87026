/**
 * Playing Slack towards the bot beyond clicks: Events API events (`app_home_opened`, signed JSON to
 * `/slack/events`) and slash commands (signed, form-encoded, with a `response_url` the emulator
 * serves), and the response URLs themselves — what the app POSTs there becomes an ephemeral message
 * for the person who typed the command (or a channel message for `response_type: "in_channel"`).
 */

import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { readBody, sendJson } from './http-io.ts';
import { type InteractionResponse, signSlackRequest } from './interactions.ts';
import type { Route } from './server.ts';
import type { Block } from './slack-objects.ts';
import { mintTriggerId } from './trigger-ids.ts';
import type { Workspace } from './workspace.ts';

type Json = { readonly [key: string]: unknown };

/** The Events API envelope of an `app_home_opened` event (the person opened the app's Home tab). */
export function buildAppHomeOpenedEvent(input: {
  readonly user: string;
  /** The Home view's id, once one was published. */
  readonly viewId?: string;
  readonly team?: string;
  readonly apiAppId?: string;
  readonly nowMs?: number;
}): Json {
  const nowMs = input.nowMs ?? Date.now();
  const team = input.team ?? 'T0TEAM';
  return {
    token: 'legacy-verification-token',
    team_id: team,
    api_app_id: input.apiAppId ?? 'A0APP',
    type: 'event_callback',
    event_id: `Ev${randomBytes(6).toString('hex').toUpperCase()}`,
    event_time: Math.floor(nowMs / 1000),
    event: {
      type: 'app_home_opened',
      user: input.user,
      channel: `D${input.user.slice(1)}`,
      tab: 'home',
      event_ts: (nowMs / 1000).toFixed(6),
      ...(input.viewId === undefined ? {} : { view: { id: input.viewId, type: 'home' } }),
    },
    authorizations: [{ team_id: team, user_id: 'U0BOT', is_bot: true }],
  };
}

/** The form fields of a slash command, as Slack sends them. */
export function buildSlashCommand(input: {
  readonly command: string;
  readonly text: string;
  readonly user: string;
  readonly channel: string;
  readonly responseUrl: string;
  readonly team?: string;
  readonly apiAppId?: string;
  readonly nowMs?: number;
}): Record<string, string> {
  const team = input.team ?? 'T0TEAM';
  return {
    token: 'legacy-verification-token',
    team_id: team,
    team_domain: 'acme',
    channel_id: input.channel,
    channel_name: input.channel,
    user_id: input.user,
    user_name: input.user.toLowerCase(),
    command: input.command,
    text: input.text,
    api_app_id: input.apiAppId ?? 'A0APP',
    is_enterprise_install: 'false',
    response_url: input.responseUrl,
    trigger_id: mintTriggerId(input.user, { nowMs: input.nowMs ?? Date.now() }),
  };
}

/** POST a signed Events API envelope (JSON) to the app, as Slack does. */
export function postEvent(
  eventsUrl: string,
  signingSecret: string,
  envelope: Json,
  options: { readonly timestamp?: number; readonly timeoutMs?: number } = {},
): Promise<InteractionResponse> {
  return signedPost(eventsUrl, signingSecret, JSON.stringify(envelope), 'application/json', options);
}

/** POST a signed slash command (form-encoded) to the app, as Slack does. */
export function postSlashCommand(
  eventsUrl: string,
  signingSecret: string,
  fields: Record<string, string>,
  options: { readonly timestamp?: number; readonly timeoutMs?: number } = {},
): Promise<InteractionResponse> {
  const body = new URLSearchParams(fields).toString();
  return signedPost(eventsUrl, signingSecret, body, 'application/x-www-form-urlencoded', options);
}

async function signedPost(
  url: string,
  signingSecret: string,
  body: string,
  contentType: string,
  options: { readonly timestamp?: number; readonly timeoutMs?: number },
): Promise<InteractionResponse> {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': contentType, ...signSlackRequest(signingSecret, body, timestamp) },
    body,
    ...(options.timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(options.timeoutMs) }),
  });
  const text = await response.text();
  let parsed: unknown = text === '' ? null : text;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: response.status, body: parsed, text };
}

const responseBody = z.looseObject({
  response_type: z.enum(['ephemeral', 'in_channel']).optional(),
  text: z.string().max(40_000).optional(),
  blocks: z.array(z.record(z.string(), z.unknown())).max(50).optional(),
});

/** An answer to a command the app gave in its acknowledgement (or at its response_url). */
export type CommandAnswer = z.infer<typeof responseBody>;

/**
 * The response URLs the emulator hands out with slash commands: `/response/<id>`, each for one
 * person in one channel, usable 5 times in 30 minutes (as Slack's).
 */
export class ResponseUrls {
  readonly #targets = new Map<
    string,
    { readonly channel: string; readonly user: string; uses: number; readonly until: number }
  >();

  constructor(
    private readonly deps: {
      readonly workspace: Workspace;
      readonly origin: () => string;
      readonly now: () => number;
    },
  ) {}

  /** A fresh response URL answering `user` in `channel`. */
  mint(channel: string, user: string): string {
    const id = randomBytes(12).toString('hex');
    this.#targets.set(id, { channel, user, uses: 0, until: this.deps.now() + 30 * 60_000 });
    return `${this.deps.origin()}/response/${id}`;
  }

  /** Shows an answer as Slack would: ephemeral to the person unless `in_channel`. */
  show(channel: string, user: string, answer: CommandAnswer): void {
    const text = answer.text ?? '';
    const blocks = (answer.blocks ?? []) as unknown as readonly Block[];
    if (answer.response_type === 'in_channel') this.deps.workspace.postMessage({ channel, text, blocks });
    else this.deps.workspace.postEphemeral({ channel, user, text, blocks });
  }

  /** Reads an app's acknowledgement body as an answer, when it carries one. */
  static answerIn(body: unknown): CommandAnswer | undefined {
    const parsed = responseBody.safeParse(body);
    return parsed.success && (parsed.data.text !== undefined || parsed.data.blocks !== undefined)
      ? parsed.data
      : undefined;
  }

  /** The `/response/` route. */
  route(): Route {
    return {
      prefix: '/response/',
      handle: async (req: IncomingMessage, res: ServerResponse, rest: string) => {
        const target = this.#targets.get(rest);
        if (req.method !== 'POST' || target === undefined || target.until < this.deps.now())
          return sendJson(res, 404, { ok: false, error: 'expired_url' });
        if (target.uses >= 5) return sendJson(res, 400, { ok: false, error: 'used_url' });
        const raw = await readBody(req, 1024 * 1024);
        if (raw === 'too_large') return sendJson(res, 413, { ok: false, error: 'too_large' });
        let body: unknown;
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          return sendJson(res, 400, { ok: false, error: 'invalid_json' });
        }
        const parsed = responseBody.safeParse(body);
        if (!parsed.success) return sendJson(res, 400, { ok: false, error: 'invalid_payload' });
        target.uses += 1;
        this.show(target.channel, target.user, parsed.data);
        return sendJson(res, 200, { ok: true });
      },
    };
  }

  reset(): void {
    this.#targets.clear();
  }
}
