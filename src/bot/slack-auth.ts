/**
 * Slack's answer to `auth.test`, checked when the bot starts and kept: `/healthz` reports it without
 * calling Slack on every probe (a probe every few seconds would spend Slack's rate limit and wait on
 * Slack's latency). A failure is checked again in the background when probed, at most every 5 s.
 */
import type { WebClient } from '@slack/web-api';

export interface SlackAuthStatus {
  readonly ok: boolean;
  /** `ok`, or a short reason: `invalid_auth`, `no answer within 5 s`, `checking`. */
  readonly reason: string;
}

/** A failed check is repeated, on a probe, at most this often. */
const RECHECK_MS = 5_000;
/** How long one `auth.test` may take before it counts as failed. */
const CHECK_TIMEOUT_MS = 5_000;

export class SlackAuth {
  private status: SlackAuthStatus = { ok: false, reason: 'checking' };
  private identity: { botId?: string; botUserId?: string; teamId?: string } = {};
  private checkedAt = Number.NEGATIVE_INFINITY;
  private running: Promise<SlackAuthStatus> | undefined;

  constructor(
    private readonly client: () => WebClient,
    private readonly options: { readonly recheckMs?: number; readonly clock?: () => number } = {},
  ) {}

  /** Calls `auth.test` (one at a time) and keeps the answer. */
  check(): Promise<SlackAuthStatus> {
    this.running ??= this.call().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** The kept answer; a failure older than `recheckMs` starts a new check in the background. */
  current(): SlackAuthStatus {
    const now = (this.options.clock ?? Date.now)();
    if (!this.status.ok && now - this.checkedAt >= (this.options.recheckMs ?? RECHECK_MS)) void this.check();
    return this.status;
  }

  /**
   * Bolt's `authorize` for a single workspace: the bot token and the identity the last good
   * `auth.test` gave. Bolt's own token authorization calls `auth.test` in its constructor and keeps a
   * rejected promise forever when Slack refused or could not be reached at that moment — every later
   * request then fails — and leaves the rejection unhandled.
   */
  authorization(botToken: string): { botToken: string; botId?: string; botUserId?: string; teamId?: string } {
    return { botToken, ...this.identity };
  }

  private async call(): Promise<SlackAuthStatus> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS / 1000} s`)),
        CHECK_TIMEOUT_MS,
      );
    });
    try {
      const answer = await Promise.race([this.client().auth.test(), timeout]);
      this.identity = {
        ...(answer.bot_id === undefined ? {} : { botId: answer.bot_id }),
        ...(answer.user_id === undefined ? {} : { botUserId: answer.user_id }),
        ...(answer.team_id === undefined ? {} : { teamId: answer.team_id }),
      };
      this.status = { ok: true, reason: 'ok' };
    } catch (error) {
      this.status = { ok: false, reason: reasonOf(error) };
    } finally {
      clearTimeout(timer);
      this.checkedAt = (this.options.clock ?? Date.now)();
    }
    return this.status;
  }
}

/** Slack's error code when it gave one (`invalid_auth`), else the message, kept short. */
function reasonOf(error: unknown): string {
  const data = (error as { data?: { error?: unknown } }).data;
  if (typeof data?.error === 'string') return data.error;
  const message = error instanceof Error ? error.message : String(error);
  return message.length > 120 ? `${message.slice(0, 117)}…` : message;
}
