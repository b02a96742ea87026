/**
 * Composition root (docs/architecture.md §12): reads the environment and the config, connects Redis, and starts
 * the approval service, the intake worker, decision delivery, the timers (expiry, escalation) and the
 * Slack bot, then reconciles pending runs with their timers. `startCountersign` is the same wiring with
 * settings passed in, for the demo, integration tests and benchmarks.
 */
import { pathToFileURL } from 'node:url';
import { ApprovalService, MessageLedger, RefusalLog } from './approvals/index.ts';
import { createBot } from './bot/app.ts';
import { Metrics } from './bot/metrics.ts';
import { type CountersignConfig, isConfigError } from './config/define-config.ts';
import { readEnv, resolveAgentSecrets } from './config/env.ts';
import { loadConfig } from './config/load.ts';
import { isCountersignError } from './pipeline/index.ts';
import {
  createDecisionSink,
  createRedisConnection,
  installShutdownHandlers,
  type ReconcileSummary,
  reconcileTimers,
  startIntakeWorker,
  startTimersWorker,
  TimerScheduler,
} from './queue/index.ts';

export interface CountersignSettings {
  readonly config: CountersignConfig;
  readonly secrets: Readonly<Record<string, string>>;
  readonly redisUrl: string;
  readonly prefix: string;
  readonly slack: {
    readonly botToken: string;
    readonly signingSecret?: string;
    readonly appToken?: string;
    readonly apiUrl?: string;
  };
  readonly port: number;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  readonly clock?: () => number;
  /** How often decisions committed but not confirmed delivered are re-sent (default 15 s). */
  readonly outboxSweepMs?: number;
}

export interface Countersign {
  readonly approvals: ApprovalService;
  /** Where the Slack messages that show each run are. */
  readonly messages: MessageLedger;
  readonly metrics: Metrics;
  /** The run timers on the `timers` queue. */
  readonly timers: TimerScheduler;
  /** Boot-time reconciliation of pending runs with their timers; runs in the background after start. */
  readonly reconciled: Promise<ReconcileSummary>;
  /** Stops taking work, finishes what is active, closes connections. Idempotent. */
  stop(): Promise<void>;
}

/** Starts everything and resolves once the bot is listening. */
export async function startCountersign(settings: CountersignSettings): Promise<Countersign> {
  const clock = settings.clock ?? Date.now;
  // Approval state and reads on one connection, BullMQ producers on another: BullMQ defines its ~50
  // scripts on a connection it is given, and ioredis copies every defined script into each MULTI.
  const redis = createRedisConnection(settings.redisUrl, { role: 'client', name: 'countersign' });
  const queues = createRedisConnection(settings.redisUrl, { role: 'client', name: 'countersign-queues' });
  const workerConnection = createRedisConnection(settings.redisUrl, {
    role: 'worker',
    name: 'countersign-intake',
  });
  const timersConnection = createRedisConnection(settings.redisUrl, {
    role: 'worker',
    name: 'countersign-timers',
  });
  const sink = createDecisionSink({ connection: queues, prefix: settings.prefix });
  const secrets = (agent: string) =>
    Object.hasOwn(settings.secrets, agent) ? settings.secrets[agent] : undefined;
  const metrics = new Metrics();
  /** Failures nobody sees in Slack: logged with their code, and counted. */
  const onError = (error: unknown, context: string) => {
    metrics.error(error);
    const code = isCountersignError(error) ? ` [${error.code}]` : '';
    console.error(`countersign: ${context}${code}:`, error);
  };
  const approvals = new ApprovalService({
    onError,
    redis,
    config: settings.config,
    secrets,
    prefix: settings.prefix,
    clock,
    deliver: sink.deliver,
  });
  const messages = new MessageLedger(redis, approvals.keys);
  const timers = new TimerScheduler({
    connection: queues,
    prefix: settings.prefix,
    escalation: settings.config.escalation,
    clock,
  });
  const bot = createBot({
    ...settings.slack,
    port: settings.port,
    logLevel: settings.logLevel,
    config: settings.config,
    approvals,
    messages,
    redis,
    metrics,
    clock,
    onError,
  });
  // What approvals committed, fanned out: timers first (an expiry must not wait for Slack), then
  // metrics, then Slack.
  approvals.onCommitted(async (result) => {
    await timers.onCommitted(result);
    metrics.observe(result);
    await bot.presenter.show(result);
  });
  const intake = startIntakeWorker({
    connection: workerConnection,
    service: approvals,
    refusals: new RefusalLog(redis, approvals.keys, clock),
    redis,
    keys: approvals.keys,
    agents: settings.config.agents,
    secrets,
    prefix: settings.prefix,
    onDuplicate: async (run) => {
      await timers.schedule(run);
      await bot.presenter.ensureCard(run);
    },
  });
  const timersWorker = startTimersWorker({
    connection: timersConnection,
    service: approvals,
    prefix: settings.prefix,
    clock,
  });
  const sweep = setInterval(() => {
    approvals.redeliverUndelivered().catch((error: unknown) => onError(error, 'outbox sweep'));
  }, settings.outboxSweepMs ?? 15_000);
  sweep.unref();
  await bot.start();

  let stopping: Promise<void> | undefined;
  const reconciled = reconcileTimers({
    service: approvals,
    ensure: async (run) => {
      await timers.ensure(run);
      await bot.presenter.ensureCard(run);
    },
    clock,
    stopped: () => stopping !== undefined,
    onError: (error, runId) => onError(error, `reconciling the timers of run ${runId}`),
  }).catch((error: unknown): ReconcileSummary => {
    onError(error, 'reconciling timers');
    return { checked: 0, expired: 0, failed: 1 };
  });
  return {
    approvals,
    messages,
    metrics,
    timers,
    reconciled,
    stop() {
      stopping ??= (async () => {
        clearInterval(sweep);
        await intake.close();
        await timersWorker.close();
        await reconciled;
        await bot.stop();
        await approvals.drain();
        await timers.close();
        await sink.close();
        await Promise.all([redis, queues, workerConnection, timersConnection].map((c) => c.quit()));
      })();
      return stopping;
    },
  };
}

/** `npm start`: everything from the environment; clear messages instead of stack traces for setup errors. */
async function main(): Promise<void> {
  const env = readEnv();
  if (!env.ok) return fail('invalid environment', env.problems);
  const { SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, SLACK_APP_TOKEN, SLACK_API_URL } = env.env;
  if (SLACK_BOT_TOKEN === undefined)
    return fail('missing Slack credentials', ['SLACK_BOT_TOKEN is not set (xoxb-…)']);
  if (SLACK_APP_TOKEN === undefined && SLACK_SIGNING_SECRET === undefined) {
    return fail('missing Slack credentials', [
      'set SLACK_SIGNING_SECRET for the HTTP receiver, or SLACK_APP_TOKEN for Socket Mode',
    ]);
  }
  let config: CountersignConfig;
  try {
    config = await loadConfig(env.env.COUNTERSIGN_CONFIG);
  } catch (error) {
    if (isConfigError(error)) return fail(`invalid config ${env.env.COUNTERSIGN_CONFIG}`, error.problems);
    throw error;
  }
  const secrets = resolveAgentSecrets(config);
  if (!secrets.ok) return fail('missing agent secrets', secrets.problems);
  const countersign = await startCountersign({
    config,
    secrets: secrets.secrets,
    redisUrl: env.env.REDIS_URL,
    prefix: env.env.COUNTERSIGN_PREFIX,
    slack: {
      botToken: SLACK_BOT_TOKEN,
      ...(SLACK_SIGNING_SECRET === undefined ? {} : { signingSecret: SLACK_SIGNING_SECRET }),
      ...(SLACK_APP_TOKEN === undefined ? {} : { appToken: SLACK_APP_TOKEN }),
      ...(SLACK_API_URL === undefined ? {} : { apiUrl: SLACK_API_URL }),
    },
    port: env.env.PORT,
    logLevel: env.env.LOG_LEVEL,
  });
  installShutdownHandlers([() => countersign.stop()]);
  const mode =
    SLACK_APP_TOKEN === undefined ? `HTTP on port ${env.env.PORT} (POST /slack/events)` : 'Socket Mode';
  console.log(`countersign: listening — ${mode}; GET /healthz, GET /metrics`);
}

function fail(what: string, problems: readonly string[]): void {
  console.error(`countersign: ${what}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  process.exitCode = 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
