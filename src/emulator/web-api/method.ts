/**
 * The shape of one emulated Web API method, and the answers it gives. A method reads decoded arguments,
 * changes the workspace, and returns Slack's JSON answer; it never throws for bad input.
 */
import type { Workspace } from '../workspace.ts';

/** Arguments after decoding (form or JSON body, JSON-string fields parsed, token removed). */
export type ApiArgs = { readonly [key: string]: unknown };

/** A Web API answer body: `{ ok: true, … }` or `{ ok: false, error, … }`. */
export type SlackResponse =
  | { readonly ok: true; readonly [key: string]: unknown }
  | { readonly ok: false; readonly error: string; readonly [key: string]: unknown };

/** What a method may use besides its arguments. */
export interface MethodContext {
  readonly workspace: Workspace;
  /** Socket Mode: hands out single-use WebSocket URLs (apps.connections.open). */
  readonly socketMode: { openConnection(): string };
  /** The emulator's clock (epoch ms). */
  readonly now: () => number;
  /** How long a trigger id stays good after it was minted (Slack: 3000 ms). */
  readonly triggerTtlMs: number;
}

/** Which token a method takes: the bot token (`xoxb-…`) or the app-level token (`xapp-…`). */
export type TokenType = 'bot' | 'app';

/** One Web API method. */
export interface WebApiMethod {
  /** The token it takes (default `bot`); the other one is refused with `not_allowed_token_type`. */
  readonly token?: TokenType;
  run(args: ApiArgs, context: MethodContext): SlackResponse;
}

/** A successful answer. */
export function ok(body: { readonly [key: string]: unknown } = {}): SlackResponse {
  return { ok: true, ...body };
}

/** A failed answer, with Slack's `[ERROR] …` lines in response_metadata when there are details. */
export function fail(
  error: string,
  details: readonly string[] = [],
  extra: { readonly [key: string]: unknown } = {},
): SlackResponse {
  return {
    ok: false,
    error,
    ...extra,
    ...(details.length > 0
      ? { response_metadata: { messages: details.map((detail) => `[ERROR] ${detail}`) } }
      : {}),
  };
}
