/**
 * Composition root (docs/architecture.md §12): reads the environment and the config, connects Redis,
 * and starts the approval service, the agent gateway (HTTP), the timers, decision webhooks and the
 * Slack bot, fans committed results out to them, then reconciles pending runs. `startCountersign` is
 * the same wiring with settings passed in, for the demo, integration tests and benchmarks.
 */
import type { KeyObject } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { ApprovalService, DecisionFeed, MessageLedger, RedisClock } from './approvals/index.ts';
import { readReleases } from './approvals/releases-read.ts';
import { createBot } from './bot/app.ts';
import type { DriftWatch } from './bot/drift-watch.ts';
import { Metrics } from './bot/metrics.ts';
import { UserGroupDirectory } from './bot/user-groups.ts';
import {
  closeAll,
  guardProcess,
  logCommitted,
  openConnections,
  periodicWork,
  reconcile,
  repairRenderings,
  reporter,
  secretsIn,
  startIdleCollector,
} from './composition.ts';
import { rateLimitOf } from './config/config-types.ts';
import { type CountersignConfig, isConfigError } from './config/define-config.ts';
import { readEnv, resolveAgentSecrets } from './config/env.ts';
import { loadConfig } from './config/load.ts';
import { loadSigningKeys } from './config/signing-key.ts';
import { createGateway, DecisionWaiters, RateLimiter } from './gateway/index.ts';
import { createLogger, type ErrorReporter, type Logger, type LogLevel } from './log.ts';
import { CountersignError, type ReceiptSigner } from './pipeline/index.ts';
import {
  checkRedisReadiness,
  createRenderQueue,
  createWebhookSink,
  expireOverdue,
  installShutdownHandlers,
  isRedisConnectionError,
  type ReconcileSummary,
  RedisOutages,
  startRenderWorker,
  startTimersWorker,
  startWebhookWorker,
  TimerScheduler,
} from './queue/index.ts';

export interface CountersignSettings {
  readonly config: CountersignConfig;
  /** Each agent's shared secret: authenticates its requests, signs its webhooks. */
  readonly secrets: Readonly<Record<string, string>>;
  /** Countersign's receipt key, and the public keys the JWKS lists (current first, then previous). */
  readonly signing: { readonly signer: ReceiptSigner; readonly publicKeys: readonly KeyObject[] };
  readonly redisUrl: string;
  readonly prefix: string;
  readonly slack: {
    readonly botToken: string;
    readonly signingSecret?: string;
    readonly appToken?: string;
    readonly apiUrl?: string;
    /** How long one Slack call may take before it counts as failed (default 10 s). */
    readonly timeoutMs?: number;
  };
  readonly port: number;
  readonly logLevel: LogLevel;
  /**
   * Where Countersign logs (default: `createLogger` at `logLevel`, with every secret in these settings
   * scrubbed from its lines).
   */
  readonly logger?: Logger;
  /** When set, `GET /metrics` answers only `Authorization: Bearer <token>` (`METRICS_TOKEN`). */
  readonly metricsToken?: string;
  /**
   * For tests that move time themselves: replaces Redis's time everywhere. Without it transitions
   * decide at Redis's `TIME` and everything else time-based reads Redis's time estimated from this
   * process's clock (`RedisClock`), so replicas whose clocks differ agree (docs/architecture.md §15).
   */
  readonly clock?: () => number;
  /** How often decisions committed but not confirmed delivered are re-sent (default 15 s). */
  readonly outboxSweepMs?: number;
  /** How often the agents' drift alarms are evaluated besides after each edit (default 60 s). */
  readonly driftSweepMs?: number;
  /** The first webhook retry's delay, doubling after (default 10 s). */
  readonly webhookRetryDelayMs?: number;
  /**
   * Keep the process up through an error no handler caught (an unhandled rejection or exception):
   * logged and counted instead. `npm start` sets it; a library user keeps their own handlers.
   */
  readonly guardProcess?: boolean;
  /**
   * Run V8's full collection when the process goes idle after a burst (`startIdleCollector`), if Node
   * runs with `--expose-gc` (`npm start` does). A process-wide setting, like `guardProcess`.
   */
  readonly collectWhenIdle?: boolean;
  /**
   * How often runs whose rendering is overdue (marked changed over this long ago) are rendered again
   * (default 5 s).
   */
  readonly repairEveryMs?: number;
  /** How often approver groups read from Slack user groups are read again (default 5 min). */
  readonly userGroupRefreshMs?: number;
}

export interface Countersign {
  readonly approvals: ApprovalService;
  /** Where the Slack messages that show each run are. */
  readonly messages: MessageLedger;
  readonly metrics: Metrics;
  /** Where it logs (the settings' logger, or the one made from `logLevel`). */
  readonly logger: Logger;
  /** The run timers on the `timers` queue. */
  readonly timers: TimerScheduler;
  /** The agents' drift alarms (evaluated after each edit and on a sweep). */
  readonly drift: DriftWatch;
  /** Boot-time reconciliation of pending runs with their timers; runs in the background after start. */
  readonly reconciled: Promise<ReconcileSummary>;
  /** Stops taking work, finishes what is active, closes connections. Idempotent. */
  stop(): Promise<void>;
}

/** Starts everything and resolves once the bot (and the gateway on its port) is listening. */
export async function startCountersign(settings: CountersignSettings): Promise<Countersign> {
  const logger = settings.logger ?? createLogger({ level: settings.logLevel, secrets: secretsIn(settings) });
  const outages = new RedisOutages((level, fields, message) => logger[level](fields, message));
  const connections = openConnections(settings.redisUrl, outages);
  const redisClock = settings.clock === undefined ? new RedisClock(connections.redis) : undefined;
  await redisClock?.start();
  const clock = settings.clock ?? redisClock?.now ?? Date.now;
  const metrics = new Metrics();
  const onError = reporter(metrics, logger);
  // A queue's or a worker's connection errors: the outage is logged once by `outages`, so each retry is
  // only a debug line (and not counted); anything else is reported.
  const onQueueError: ErrorReporter = (error, context, fields) =>
    isRedisConnectionError(error)
      ? logger.debug({ ...fields, err: error }, context)
      : onError(error, context, fields);
  const unguard = settings.guardProcess === true ? guardProcess(onError) : () => {};
  const gc = (globalThis as { gc?: () => void }).gc;
  const stopCollector =
    settings.collectWhenIdle === true && gc !== undefined ? startIdleCollector({ gc }) : () => {};
  const secretOf = (agent: string) =>
    Object.hasOwn(settings.secrets, agent) ? settings.secrets[agent] : undefined;
  const { redis } = connections;
  const approvalsKeys = { prefix: settings.prefix };
  const webhooks = createWebhookSink({
    connection: connections.queues,
    ...approvalsKeys,
    webhookOf: (agent) => settings.config.agents[agent]?.webhook?.url,
    ...(settings.webhookRetryDelayMs === undefined ? {} : { retryDelayMs: settings.webhookRetryDelayMs }),
    onError: onQueueError,
  });
  let feed: DecisionFeed | undefined;
  const approvals = new ApprovalService({
    redis,
    config: settings.config,
    signer: settings.signing.signer,
    ...approvalsKeys,
    ...(settings.clock === undefined ? {} : { clock: settings.clock }),
    onError,
    // Delivered: into the agent's feed (long polls read it), and to its webhook if it has one.
    deliver: async (decision) => {
      await feed?.append(decision);
      await webhooks.enqueue(decision);
    },
  });
  feed = new DecisionFeed(redis, approvals.keys);
  const messages = new MessageLedger(redis, approvals.keys);
  const timers = new TimerScheduler({
    connection: connections.queues,
    ...approvalsKeys,
    escalation: settings.config.escalation,
    clock,
    onError: onQueueError,
  });
  const waiters = new DecisionWaiters(connections.subscriber, approvals.keys);
  const gateway = createGateway({
    approvals,
    releases: {
      read: (runId) => readReleases(redis, approvals.keys, runId),
    },
    feed,
    waiters,
    config: settings.config,
    secretOf,
    publicKeys: settings.signing.publicKeys,
    rateLimit: new RateLimiter((agent) => rateLimitOf(settings.config, agent), clock),
    metrics: metrics.gateway,
    clock,
    onError,
    recover: async (run) => {
      await timers.schedule(run);
      await requestRender(run.runId);
    },
  });
  const bot = createBot({
    ...settings.slack,
    port: settings.port,
    logLevel: settings.logLevel,
    logger,
    config: settings.config,
    approvals,
    messages,
    healthRedis: connections.health,
    metrics,
    ...(settings.metricsToken === undefined ? {} : { metricsToken: settings.metricsToken }),
    clock,
    onError,
    routes: gateway.routes,
  });
  const render = createRenderQueue({
    connection: connections.queues,
    ...approvalsKeys,
    onError: onQueueError,
    clock,
  });
  /** A rendering of the run as it is now (crash recovery, reconciliation, repair). */
  const requestRender = (runId: string) => render.repair(runId);
  // Approver groups taken from Slack user groups are read before any click or timer is served.
  const userGroups = new UserGroupDirectory({
    config: settings.config,
    read: (usergroup) => bot.gateway.usergroupMembers(usergroup),
    logger,
  });
  try {
    await userGroups.start();
  } catch (error) {
    await closeAll(timers, webhooks, render, connections);
    redisClock?.stop();
    unguard();
    throw error;
  }
  const periodic = periodicWork(onError);
  metrics.watchEditWindows({
    agents: Object.keys(settings.config.agents),
    stats: async (agent) => approvals.editWindow.stats(agent, await approvals.now()),
  });
  // What approvals committed, fanned out: timers, metrics, and a rendering on the render queue — none
  // waits on Slack.
  approvals.onCommitted(async (result) => {
    logCommitted(logger, result);
    await timers.onCommitted(result);
    metrics.observe(result);
    // An edit may push the agent's share of rewritten plans over its drift alarm's threshold.
    if (result.kind === 'edited' && Object.hasOwn(settings.config.drift, result.run.agent))
      periodic.run(`drift alarm ${result.run.agent}`, () => bot.drift.check(result.run.agent));
  });
  approvals.onChanged(async (commit) => {
    await render.enqueue(commit.runId, commit.revision);
    if (commit.showAgainAt !== undefined) await render.enqueueAt(commit.runId, commit.showAgainAt);
  });
  const workers = [
    startTimersWorker({
      connection: connections.timersWorker,
      service: approvals,
      ...approvalsKeys,
      onError: onQueueError,
      logger,
    }),
    startRenderWorker({
      connection: connections.renderWorker,
      redis,
      ...approvalsKeys,
      lockKey: (runId) => `${approvals.keys.forRun(runId).run}:render-lock`,
      render: (runId, revision) => bot.renderer.converge(runId, revision),
      onError: onQueueError,
      logger,
    }),
    startWebhookWorker({
      connection: connections.webhooksWorker,
      ...approvalsKeys,
      webhookOf: (agent) => settings.config.agents[agent]?.webhook?.url,
      secretOf,
      decisionOf: (runId) => approvals.getDecision(runId),
      metrics: metrics.webhooks,
      clock,
      onError: onQueueError,
      logger,
    }),
  ];
  if (userGroups.active) {
    periodic.every(settings.userGroupRefreshMs ?? 5 * 60_000, 'user group refresh', () =>
      userGroups.refresh(),
    );
  }
  periodic.every(settings.outboxSweepMs ?? 15_000, 'outbox sweep', () => approvals.redeliverUndelivered());
  // The edit windows slide (an alarm recovers as time passes), and a raised alarm a process died
  // before posting is posted by the next sweep.
  if (Object.keys(settings.config.drift).length > 0)
    periodic.every(settings.driftSweepMs ?? 60_000, 'drift alarm sweep', () => bot.drift.sweep());
  // Repair: runs whose committed state Slack may not show (a process died between a commit and its
  // rendering job) get a rendering — all of them at start, then every `repairEveryMs` those overdue.
  const repairEvery = settings.repairEveryMs ?? 5_000;
  const repair = (olderThan: number) =>
    repairRenderings(approvals, requestRender, olderThan, periodic.closed);
  periodic.every(repairEvery, 'render repair', () => repair(clock() - repairEvery));
  // Each repair tick also expires runs whose timer is late or lost (at Redis's time, §15).
  periodic.every(repairEvery, 'expiry sweep', () =>
    expireOverdue({ service: approvals, stopped: periodic.closed }),
  );
  await waiters.start();
  await bot.start();

  let stopping: Promise<void> | undefined;
  const reconciled = reconcile({
    approvals,
    timers,
    requestRender,
    clock,
    onError,
    stopped: () => stopping !== undefined,
  });
  periodic.run('render repair', () => repair(Number.POSITIVE_INFINITY));
  return {
    approvals,
    messages,
    metrics,
    logger,
    timers,
    drift: bot.drift,
    reconciled,
    stop() {
      stopping ??= (async () => {
        await periodic.close();
        redisClock?.stop();
        await Promise.all(workers.map((worker) => worker.close()));
        await reconciled;
        await waiters.close();
        await bot.stop();
        await approvals.drain();
        await closeAll(timers, webhooks, render, connections);
        unguard();
        stopCollector();
      })();
      return stopping;
    },
  };
}

/** SIGTERM stops the process within 10 s, Redis up or down: what is not closed by then is left to BullMQ's stall recovery. */
const SHUTDOWN_DEADLINE_MS = 9_000;

/** `npm start`: everything from the environment; clear messages instead of stack traces for setup errors. */
async function main(): Promise<void> {
  const env = readEnv();
  if (!env.ok) return fail('invalid environment', env.problems);
  const { SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, SLACK_APP_TOKEN, SLACK_API_URL } = env.env;
  const problems: string[] = [];
  if (SLACK_BOT_TOKEN === undefined) problems.push('SLACK_BOT_TOKEN is not set (xoxb-…)');
  if (SLACK_APP_TOKEN === undefined && SLACK_SIGNING_SECRET === undefined) {
    problems.push('set SLACK_SIGNING_SECRET for the HTTP receiver, or SLACK_APP_TOKEN for Socket Mode');
  }
  const signing = loadSigningKeys(env.env);
  if (!signing.ok) problems.push(...signing.problems);
  let config: CountersignConfig;
  try {
    config = await loadConfig(env.env.COUNTERSIGN_CONFIG);
  } catch (error) {
    if (isConfigError(error)) return fail(`invalid config ${env.env.COUNTERSIGN_CONFIG}`, error.problems);
    throw error;
  }
  const secrets = resolveAgentSecrets(config);
  if (!secrets.ok) problems.push(...secrets.problems);
  problems.push(
    ...(await checkRedisReadiness(env.env.REDIS_URL, {
      allowVolatile: env.env.COUNTERSIGN_ALLOW_VOLATILE_REDIS,
    })),
  );
  if (problems.length > 0 || SLACK_BOT_TOKEN === undefined || !signing.ok || !secrets.ok) {
    return fail('cannot start', problems);
  }
  let countersign: Countersign;
  try {
    countersign = await startCountersign({
      config,
      secrets: secrets.secrets,
      signing: { signer: signing.signer, publicKeys: signing.publicKeys },
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
      ...(env.env.METRICS_TOKEN === undefined ? {} : { metricsToken: env.env.METRICS_TOKEN }),
      guardProcess: true,
      collectWhenIdle: true,
    });
  } catch (error) {
    // A Slack user group Slack refuses for good (src/bot/user-groups.ts): said plainly, not as a stack.
    if (error instanceof CountersignError && error.code === 'invalid_config')
      return fail('cannot start', [error.message]);
    throw error;
  }
  const { logger } = countersign;
  installShutdownHandlers([() => countersign.stop()], {
    deadlineMs: SHUTDOWN_DEADLINE_MS,
    log: (line) => logger.info(line),
  });
  const mode =
    SLACK_APP_TOKEN === undefined ? `HTTP on port ${env.env.PORT} (POST /slack/events)` : 'Socket Mode';
  logger.info(
    { port: env.env.PORT, mode: SLACK_APP_TOKEN === undefined ? 'http' : 'socket' },
    `listening — ${mode}; agents on port ${env.env.PORT} (/v1, /.well-known/jwks.json); GET /healthz, GET /metrics`,
  );
}

function fail(what: string, problems: readonly string[]): void {
  console.error(`countersign: ${what}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  process.exitCode = 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
