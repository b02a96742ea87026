import { App, type CustomRoute, HTTPReceiver, LogLevel, type Logger as SlackLogger } from '@slack/bolt';
import type { Redis } from 'ioredis';
import type { ApprovalService, MessageLedger } from '../approvals/index.ts';
import type { CountersignConfig } from '../config/index.ts';
import type { ErrorReporter, Logger } from '../log.ts';
import { CardLinkCache, HomePublisher } from './app-home.ts';
import { DriftWatch } from './drift-watch.ts';
import { InFlight } from './in-flight.ts';
import { LeadInsights } from './lead-insights.ts';
import { registerInboxListeners } from './listeners/inbox.ts';
import { registerListeners } from './listeners/index.ts';
import type { Metrics } from './metrics.ts';
import { Presenter } from './presenter.ts';
import { Renderer } from './renderer.ts';
import { botRoutes } from './routes.ts';
import { SlackAuth } from './slack-auth.ts';
import { createSlackClients, SLACK_TIMEOUT_MS, SlackGateway } from './slack-gateway.ts';
import { slackLogger } from './slack-logger.ts';
import { screenSlackRequests } from './slack-requests.ts';
import { checkSlackSignatures } from './slack-signature.ts';

export interface BotOptions {
  readonly botToken: string;
  /** HTTP mode: requests to `POST /slack/events` are checked against it. */
  readonly signingSecret?: string;
  /** Socket Mode when set. */
  readonly appToken?: string;
  /** Web API base URL (an emulator); default Slack's. */
  readonly apiUrl?: string;
  /** How long one Slack call may take (default `SLACK_TIMEOUT_MS`). */
  readonly timeoutMs?: number;
  readonly port: number;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** Where Bolt and the Web API clients log (default: Bolt's console logger at `logLevel`). */
  readonly logger?: Logger;
  readonly config: CountersignConfig;
  readonly approvals: ApprovalService;
  readonly messages: MessageLedger;
  /** A connection without an offline queue, for `/healthz`'s PING (routes.ts). */
  readonly healthRedis: Redis;
  readonly metrics: Metrics;
  /** When set, `/metrics` answers only `Authorization: Bearer <token>`. */
  readonly metricsToken?: string;
  readonly clock?: () => number;
  readonly onError?: ErrorReporter;
  /** More HTTP routes on the bot's port (the agent gateway), in HTTP and in Socket Mode. */
  readonly routes?: readonly CustomRoute[];
  /** How long App Home refreshes are gathered before publishing (default 1 s). */
  readonly homeDebounceMs?: number;
}

export interface Bot {
  readonly app: App;
  readonly presenter: Presenter;
  /** Brings Slack up to a run's committed state (the render queue's worker calls it). */
  readonly renderer: Renderer;
  readonly gateway: SlackGateway;
  /** People's App Home tabs (published on opening, refreshed after renderings). */
  readonly homes: HomePublisher;
  /** The agents' drift alarms, posted when approvals raises them. */
  readonly drift: DriftWatch;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const LOG_LEVELS = { debug: LogLevel.DEBUG, info: LogLevel.INFO, warn: LogLevel.WARN, error: LogLevel.ERROR };

/**
 * The Bolt app: HTTP receiver (`POST /slack/events`, signature-checked by Bolt) or Socket Mode, plus
 * `GET /healthz` and `GET /metrics` (routes.ts), the listeners (listeners/), and the presenter and
 * gateway they answer through.
 */
export function createBot(options: BotOptions): Bot {
  const clock = options.clock ?? Date.now;
  const onError: ErrorReporter =
    options.onError ?? ((error, context) => console.error(`countersign: ${context}:`, error));
  const logging = {
    logLevel: LOG_LEVELS[options.logLevel],
    ...(options.logger === undefined ? {} : { logger: slackLogger(options.logger) }),
  };
  const clients = createSlackClients({
    token: options.botToken,
    ...logging,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.apiUrl === undefined ? {} : { apiUrl: options.apiUrl }),
  });
  const slackAuth = new SlackAuth(() => clients.interactive);
  const customRoutes: CustomRoute[] = [
    ...botRoutes({
      healthRedis: options.healthRedis,
      slackAuth,
      metrics: options.metrics,
      ...(options.metricsToken === undefined ? {} : { metricsToken: options.metricsToken }),
    }),
    ...(options.routes ?? []),
  ];
  const app: App = new App({
    authorize: async () => slackAuth.authorization(options.botToken),
    ...logging,
    clientOptions: {
      ...(options.apiUrl === undefined ? {} : { slackApiUrl: options.apiUrl }),
      timeout: options.timeoutMs ?? SLACK_TIMEOUT_MS,
    },
    ...(options.appToken === undefined
      ? { receiver: httpReceiver({ ...options, clock, customRoutes }, logging) }
      : { customRoutes, port: options.port, ...socketModeOptions(options) }),
  });
  const inFlight = new InFlight();
  app.use(inFlight.middleware);
  const gateway = new SlackGateway(clients);
  const presenter = new Presenter({ gateway, clock });
  const links = new CardLinkCache({ messages: options.messages, gateway });
  const homes = new HomePublisher({
    approvals: options.approvals,
    config: options.config,
    links,
    leads: new LeadInsights({
      window: options.approvals.editWindow,
      config: options.config,
      now: () => options.approvals.now(),
    }),
    gateway,
    clock,
    onError,
    ...(options.homeDebounceMs === undefined ? {} : { debounceMs: options.homeDebounceMs }),
  });
  const renderer = new Renderer({
    runs: options.approvals,
    messages: options.messages,
    gateway,
    config: options.config,
    clock,
    onError,
    links,
    homes,
  });
  registerListeners(app, {
    approvals: options.approvals,
    presenter,
    gateway,
    config: options.config,
    clock,
    onError,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  registerInboxListeners(app, { approvals: options.approvals, homes, links, clock, onError });
  app.error(async (error) => onError(error, 'a Slack request'));
  const drift = new DriftWatch({
    window: options.approvals.editWindow,
    config: options.config,
    gateway,
    links,
    now: () => options.approvals.now(),
    onError,
  });
  return {
    app,
    presenter,
    renderer,
    gateway,
    homes,
    drift,
    start: async () => {
      // Slack's verdict on the token, kept for /healthz. Not waited for, and not fatal: a Slack that is
      // down at start is re-checked, and clicks are served meanwhile (they are signature-checked).
      void slackAuth.check().then((auth) => {
        if (!auth.ok) onError(new Error(`Slack auth.test failed: ${auth.reason}`), 'checking the bot token');
      });
      await app.start(options.port);
    },
    stop: async () => {
      await homes.close();
      await app.stop();
      // Interactions already answered may still be updating Slack: let them finish while Redis is open.
      await inFlight.drain();
    },
  };
}

/**
 * HTTP mode: the receiver for `POST /slack/events` and the custom routes. Slack's signature is checked
 * on Redis's time, in front of Bolt (slack-signature.ts; Bolt's own check, on this process's clock, is
 * off); then the body must have the shape Bolt reads (slack-requests.ts), so a signed but malformed
 * body is a 400, never a crash.
 */
function httpReceiver(
  options: {
    readonly signingSecret?: string | undefined;
    readonly port: number;
    readonly clock: () => number;
    readonly customRoutes: CustomRoute[];
  },
  logging: { readonly logLevel: LogLevel; readonly logger?: SlackLogger },
): HTTPReceiver {
  if (options.signingSecret === undefined)
    throw new Error('the HTTP receiver needs a signing secret (or give an app token for Socket Mode)');
  const receiver = new HTTPReceiver({
    signingSecret: options.signingSecret,
    port: options.port,
    customRoutes: options.customRoutes,
    signatureVerification: false,
    ...logging,
  });
  checkSlackSignatures(receiver, { signingSecret: options.signingSecret, clock: options.clock });
  screenSlackRequests(receiver);
  return receiver;
}

/**
 * Socket Mode when an app token is given. `port` then serves only the custom routes; the receiver's own
 * WebClient (apps.connections.open) takes installerOptions.clientOptions, so SLACK_API_URL goes there
 * too. Bolt 5.1 would default them to the App's clientOptions object and the socket client then writes
 * its retryConfig (100 retries) into it: the handshake gets an object of its own.
 */
function socketModeOptions(options: Pick<BotOptions, 'appToken' | 'apiUrl' | 'port' | 'timeoutMs'>) {
  if (options.appToken === undefined) return {};
  return {
    socketMode: true,
    appToken: options.appToken,
    installerOptions: {
      port: options.port,
      clientOptions: {
        ...(options.apiUrl === undefined ? {} : { slackApiUrl: options.apiUrl }),
        timeout: options.timeoutMs ?? SLACK_TIMEOUT_MS,
      },
    },
  };
}
