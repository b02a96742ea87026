import type { IncomingMessage, ServerResponse } from 'node:http';
import { App, LogLevel } from '@slack/bolt';
import type { Redis } from 'ioredis';
import type { ApprovalService, UseCaseResult } from '../approvals/index.ts';
import type { CountersignConfig } from '../config/index.ts';
import { registerListeners } from './listeners.ts';
import type { Metrics } from './metrics.ts';
import { Presenter } from './presenter.ts';
import { SlackGateway } from './slack-gateway.ts';

export interface BotOptions {
  readonly botToken: string;
  /** HTTP mode: requests to `POST /slack/events` are checked against it. */
  readonly signingSecret?: string;
  /** Socket Mode when set. */
  readonly appToken?: string;
  /** Web API base URL (an emulator); default Slack's. */
  readonly apiUrl?: string;
  readonly port: number;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  readonly config: CountersignConfig;
  readonly approvals: ApprovalService;
  readonly redis: Redis;
  readonly metrics: Metrics;
  readonly clock?: () => number;
  readonly onError?: (error: unknown, context: string) => void;
  /** Every use-case result, before it is shown (see Presenter: the timers hook in here). */
  readonly onResult?: (result: UseCaseResult) => Promise<void>;
}

export interface Bot {
  readonly app: App;
  readonly presenter: Presenter;
  readonly gateway: SlackGateway;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const LOG_LEVELS = { debug: LogLevel.DEBUG, info: LogLevel.INFO, warn: LogLevel.WARN, error: LogLevel.ERROR };

/**
 * The Bolt app: HTTP receiver (`POST /slack/events`, signature-checked by Bolt) or Socket Mode, plus
 * `GET /healthz` (Redis and Slack reachability) and `GET /metrics` (Prometheus).
 */
export function createBot(options: BotOptions): Bot {
  const clock = options.clock ?? Date.now;
  const onError = options.onError ?? ((error, context) => console.error(`countersign: ${context}:`, error));
  const socketMode = options.appToken !== undefined;
  const app = new App({
    token: options.botToken,
    ...(options.signingSecret === undefined ? {} : { signingSecret: options.signingSecret }),
    ...(socketMode ? { socketMode: true, appToken: options.appToken } : {}),
    port: options.port,
    logLevel: LOG_LEVELS[options.logLevel],
    clientOptions: {
      ...(options.apiUrl === undefined ? {} : { slackApiUrl: options.apiUrl }),
    },
    customRoutes: [
      { path: '/healthz', method: ['GET'], handler: (_req, res) => void health(res) },
      { path: '/metrics', method: ['GET'], handler: (_req, res) => void metrics(res) },
    ],
    // Socket Mode: `port` serves the custom routes; the receiver's own WebClient (apps.connections.open)
    // takes installerOptions.clientOptions, so SLACK_API_URL goes there too. Bolt 5.1 would default them
    // to the App's clientOptions object and the socket client then writes its retryConfig (100 retries)
    // into it: the handshake gets an object of its own.
    ...(socketMode
      ? {
          installerOptions: {
            port: options.port,
            clientOptions: options.apiUrl === undefined ? {} : { slackApiUrl: options.apiUrl },
          },
        }
      : {}),
  });
  // Listeners keep working after their ack (the HTTP answer); stop() waits for them.
  const inFlight = new Set<Promise<void>>();
  app.use(async ({ next }) => {
    const running = next();
    inFlight.add(running);
    try {
      await running;
    } finally {
      inFlight.delete(running);
    }
  });
  const gateway = new SlackGateway(app.client, Presenter.ledger(options.approvals));
  const presenter = new Presenter({
    approvals: options.approvals,
    gateway,
    config: options.config,
    metrics: options.metrics,
    clock,
    ...(options.onResult === undefined ? {} : { onResult: options.onResult }),
    onError,
  });
  registerListeners(app, {
    approvals: options.approvals,
    presenter,
    gateway,
    config: options.config,
    clock,
    onError,
  });
  app.error(async (error) => onError(error, 'a Slack request'));

  async function health(res: ServerResponse<IncomingMessage>): Promise<void> {
    const [redis, slack] = await Promise.all([
      options.redis.ping().then(
        () => 'ok',
        (error: unknown) => `unreachable: ${error instanceof Error ? error.message : String(error)}`,
      ),
      app.client.auth.test().then(
        () => 'ok',
        (error: unknown) => `unreachable: ${error instanceof Error ? error.message : String(error)}`,
      ),
    ]);
    const ok = redis === 'ok' && slack === 'ok';
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok, redis, slack }));
  }

  async function metrics(res: ServerResponse<IncomingMessage>): Promise<void> {
    const rendered = await options.metrics.render();
    res.writeHead(200, { 'content-type': rendered.contentType });
    res.end(rendered.body);
  }

  return {
    app,
    presenter,
    gateway,
    start: async () => {
      await app.start(options.port);
    },
    stop: async () => {
      await app.stop();
      // Interactions already answered may still be updating Slack: let them finish while Redis is open.
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
