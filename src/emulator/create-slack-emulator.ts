/**
 * A local stand-in for Slack's Web API: an HTTP server speaking the subset the bot uses, over an
 * in-memory workspace that tests can read and a page can watch, with a Socket Mode endpoint beside it.
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import { ResponseUrls } from './app-requests.ts';
import { FaultSwitch, type SlackFaults } from './faults.ts';
import { IdMint } from './ids.ts';
import { type InteractionTarget, PageInteractions } from './page/page-interactions.ts';
import type { Persona } from './page/page-protocol.ts';
import { createPageRoutes } from './page/page-routes.ts';
import { MethodRateLimiter, type RateLimit, type RateLimits } from './rate-limiter.ts';
import { createRoutedServer } from './server.ts';
import type { EmulatedIdentity, EmulatedUsergroup } from './slack-objects.ts';
import { SOCKET_MODE_PATH, type SocketModeEndpoint, SocketModeServer } from './socket-mode.ts';
import { SLACK_TRIGGER_TTL_MS } from './trigger-ids.ts';
import { createWebApiHandler } from './web-api/handle-request.ts';
import { WEB_API_METHODS } from './web-api/methods/index.ts';
import {
  type ChannelSeed,
  readOnlyState,
  type UserSeed,
  Workspace,
  type WorkspaceState,
} from './workspace.ts';
import type { EmulatorCall } from './workspace-events.ts';

/** Options for {@link createSlackEmulator}; every one has a default. */
export interface SlackEmulatorOptions {
  /** Port to listen on (default 0: a free one). */
  readonly port?: number;
  /** Interface to listen on (default 127.0.0.1). */
  readonly host?: string;
  /** The only bot token accepted (default {@link DEFAULT_BOT_TOKEN}). */
  readonly botToken?: string;
  /** The only app-level token accepted, by apps.connections.open (default {@link DEFAULT_APP_TOKEN}). */
  readonly appToken?: string;
  /** chat.postMessage per channel (default burst 5, then 1/s); `false` turns limiting off. */
  readonly rateLimit?: RateLimit | false;
  /**
   * Limits per method, over the `rateLimit` default (e.g. {@link SLACK_RATE_LIMITS} for Slack's tiers);
   * a method named `false` is not limited. Default: none besides `rateLimit`.
   */
  readonly rateLimits?: RateLimits;
  /** Workspace members (default {@link DEFAULT_USERS}); the bot user is always added. */
  readonly users?: readonly UserSeed[];
  /** Channels (default {@link DEFAULT_CHANNELS}). */
  readonly channels?: readonly ChannelSeed[];
  /** User groups (S…) for usergroups.users.list (default none). */
  readonly usergroups?: readonly EmulatedUsergroup[];
  /** Team and bot identity (defaults match test/fixtures/slack-protocol: T0TEAM, U0BOT, B0BOT, A0APP). */
  readonly identity?: Partial<EmulatedIdentity>;
  /**
   * How long a trigger id minted by `mintTriggerId` (the payload builders, the page) can be exchanged by
   * views.open/views.push, counted on the `now` clock (default Slack's 3000 ms; `Infinity`: never expire).
   */
  readonly triggerTtlMs?: number;
  /** Clock in epoch ms, for message ts, hashes, rate limits and trigger expiry (default Date.now). */
  readonly now?: () => number;
  /** Where faults inside the emulator are reported (default console.error). */
  readonly logError?: (message: string, error: unknown) => void;
  /**
   * The app the page's clicks and submissions go to: over HTTP, signed as Slack signs them (e.g.
   * `{ url: 'http://127.0.0.1:3000/slack/events', signingSecret }`), or `{ socketMode: true }` for the app
   * connected over Socket Mode. Without it the page only shows.
   */
  readonly interactions?: InteractionTarget;
  /** Who the page's visitor can act as (default: every member, by real name). */
  readonly personas?: readonly Persona[];
}

/** A running (or ready to run) emulator. */
export interface SlackEmulator {
  /** Base URL for `new WebClient(token, { slackApiUrl })`, ending in `/api/`. Throws before start(). */
  readonly url: string;
  /** The web page that shows the workspace live (`http://host:port/`). Throws before start(). */
  readonly pageUrl: string;
  /** Listen; resolves to {@link url}. Calling it again while running is harmless. */
  start(): Promise<string>;
  /** Close the server and its connections (held requests are cut unanswered). Idempotent. */
  stop(): Promise<void>;
  /** Read-only workspace: messages, views, users, and `subscribe` for live changes. */
  readonly state: WorkspaceState;
  /** Every Web API call so far, oldest first (a copy). */
  readonly calls: readonly EmulatorCall[];
  /**
   * Forget messages, views, calls, used trigger ids, rate-limit buckets (limits on again) and faults (held requests are
   * cut unanswered); keep users and channels.
   */
  reset(): void;
  /** The bot token the emulator accepts. */
  readonly botToken: string;
  /** The app-level token apps.connections.open accepts (Socket Mode). */
  readonly appToken: string;
  /** Socket Mode: wait for the app's connection, deliver interactions to it. */
  readonly socketMode: SocketModeEndpoint;
  /** The fault switch: 429s, 5xx before or after the effect, hangs and slow methods, on demand. */
  readonly faults: SlackFaults;
  /**
   * A response URL for a slash command typed by `user` in `channel` (see `buildSlashCommand`): what the
   * app POSTs there becomes their ephemeral message (a channel message for `in_channel`).
   */
  responseUrl(channel: string, user: string): string;
  /** Changes a user group's members, as an admin would in Slack (until `reset()`). */
  setUsergroupMembers(usergroup: string, users: readonly string[]): void;
  /**
   * Switches rate limiting off (every call goes through: seeding a workspace fast) or back on, from
   * full buckets. On by default when `rateLimit` or `rateLimits` name limits.
   */
  setRateLimited(enabled: boolean): void;
}

export const DEFAULT_BOT_TOKEN = 'xoxb-emulator-token';
export const DEFAULT_APP_TOKEN = 'xapp-emulator-token';

export const DEFAULT_IDENTITY: EmulatedIdentity = {
  teamId: 'T0TEAM',
  teamName: 'Acme',
  teamDomain: 'acme',
  botUserId: 'U0BOT',
  botUserName: 'countersign',
  botId: 'B0BOT',
  appId: 'A0APP',
};

export const DEFAULT_USERS: readonly UserSeed[] = [
  { id: 'U0OP1', name: 'dana', real_name: 'Dana Ortiz', tz: 'Europe/Oslo' },
  { id: 'U0FIN1', name: 'sam', real_name: 'Sam Lindqvist', tz: 'Europe/Oslo' },
  { id: 'U0LEAD1', name: 'lee', real_name: 'Lee Haugen', tz: 'Europe/Oslo' },
];

export const DEFAULT_CHANNELS: readonly ChannelSeed[] = [{ id: 'C0OPS', name: 'ops-approvals' }];

/** Slack: about one message per second per channel, with short bursts. */
export const DEFAULT_RATE_LIMIT: RateLimit = { perSecond: 1, burst: 5 };

/**
 * Create a Slack Web API emulator (call start() to listen).
 *
 * @example
 * const slack = createSlackEmulator({ rateLimit: false });
 * await slack.start();
 * const client = new WebClient(slack.botToken, { slackApiUrl: slack.url });
 * await client.chat.postMessage({ channel: 'C0OPS', text: 'hi' });
 * slack.state.messages('C0OPS'); // [{ text: 'hi', … }]
 * await slack.stop();
 */
export function createSlackEmulator(options: SlackEmulatorOptions = {}): SlackEmulator {
  const now = options.now ?? Date.now;
  const logError = options.logError ?? ((message, error) => console.error(message, error));
  const botToken = options.botToken ?? DEFAULT_BOT_TOKEN;
  const appToken = options.appToken ?? DEFAULT_APP_TOKEN;
  const workspace = new Workspace(
    {
      identity: { ...DEFAULT_IDENTITY, ...options.identity },
      users: options.users ?? DEFAULT_USERS,
      channels: options.channels ?? DEFAULT_CHANNELS,
      usergroups: options.usergroups ?? [],
    },
    new IdMint(now),
    (error) => logError('slack emulator: a workspace listener threw', error),
  );
  const triggerTtlMs = options.triggerTtlMs ?? SLACK_TRIGGER_TTL_MS;
  if (!(triggerTtlMs >= 0)) throw new RangeError(`triggerTtlMs must be >= 0, got ${triggerTtlMs}`);
  const rateLimit = options.rateLimit ?? DEFAULT_RATE_LIMIT;
  const limiter = new MethodRateLimiter(
    {
      'chat.postMessage': rateLimit === false ? false : { ...rateLimit, per: 'channel' },
      ...options.rateLimits,
    },
    now,
  );
  let calls: EmulatorCall[] = [];
  const faults = new FaultSwitch(now);
  let url: string | undefined;
  const socketMode = new SocketModeServer({
    appId: workspace.identity.appId,
    origin: () => {
      if (url === undefined) throw new Error('the Slack emulator is not started');
      return new URL(url).origin.replace(/^http/, 'ws');
    },
    logError,
  });
  const api = createWebApiHandler({
    workspace,
    methods: WEB_API_METHODS,
    botToken,
    appToken,
    socketMode,
    limiter,
    now,
    triggerTtlMs,
    faults,
    record: (call) => calls.push(call),
    logError,
  });
  const state = readOnlyState(workspace);
  const responses = new ResponseUrls({
    workspace,
    now,
    origin: () => {
      if (url === undefined) throw new Error('the Slack emulator is not started');
      return new URL(url).origin;
    },
  });
  const interactions = new PageInteractions({
    workspace,
    target: options.interactions,
    socketMode,
    now,
    responses,
  });
  const page = createPageRoutes({ workspace, state, interactions, personas: options.personas });
  const server: Server = createRoutedServer(
    [{ prefix: '/api/', handle: api }, responses.route(), ...page],
    logError,
    [{ path: SOCKET_MODE_PATH, upgrade: (req, socket, head) => socketMode.upgrade(req, socket, head) }],
  );

  let starting: Promise<string> | undefined;
  return {
    get url() {
      if (url === undefined)
        throw new Error('the Slack emulator is not started: await emulator.start() first');
      return url;
    },
    get pageUrl() {
      return this.url.replace(/api\/$/, '');
    },
    start() {
      starting ??= (async () => {
        const host = options.host ?? '127.0.0.1';
        server.listen(options.port ?? 0, host);
        await once(server, 'listening');
        const address = server.address();
        if (address === null || typeof address === 'string')
          throw new Error('the emulator has no TCP address');
        const { port } = address;
        url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/api/`;
        return url;
      })();
      return starting;
    },
    async stop() {
      if (!server.listening) return;
      faults.abandonHeld();
      await socketMode.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      url = undefined;
      starting = undefined;
    },
    state,
    get calls() {
      return [...calls];
    },
    reset() {
      calls = [];
      faults.abandonHeld();
      faults.clear();
      limiter.setEnabled(true);
      limiter.reset();
      responses.reset();
      workspace.reset();
    },
    botToken,
    appToken,
    socketMode,
    faults,
    responseUrl: (channel, user) => responses.mint(channel, user),
    setUsergroupMembers: (usergroup, users) => workspace.setUsergroupMembers(usergroup, users),
    setRateLimited(enabled) {
      limiter.setEnabled(enabled);
    },
  };
}
