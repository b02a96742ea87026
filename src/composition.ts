import type { Redis } from 'ioredis';
import type { ApprovalService, UseCaseResult } from './approvals/index.ts';
import type { Metrics } from './bot/metrics.ts';
import type { ErrorReporter, Logger } from './log.ts';
import {
  createRedisConnection,
  isRedisConnectionError,
  type ReconcileSummary,
  type RedisOutages,
  type RenderQueue,
  reconcileTimers,
  type TimerScheduler,
  type WebhookSink,
} from './queue/index.ts';

/**
 * The connections: approval state and reads on one, BullMQ producers on another (BullMQ defines its
 * ~50 scripts on a connection it is given, and ioredis copies every defined script into each MULTI),
 * one per worker (blocking reads), and one subscriber for every long poll.
 */
export function openConnections(url: string, outages: RedisOutages) {
  return {
    redis: createRedisConnection(url, { role: 'client', name: 'countersign', outages }),
    queues: createRedisConnection(url, { role: 'client', name: 'countersign-queues', outages }),
    timersWorker: createRedisConnection(url, { role: 'worker', name: 'countersign-timers', outages }),
    webhooksWorker: createRedisConnection(url, { role: 'worker', name: 'countersign-webhooks', outages }),
    renderWorker: createRedisConnection(url, { role: 'worker', name: 'countersign-render', outages }),
    subscriber: createRedisConnection(url, { role: 'worker', name: 'countersign-long-polls', outages }),
    health: createRedisConnection(url, {
      role: 'client',
      name: 'countersign-health',
      offlineQueue: false,
      outages,
    }),
  };
}

/** Every secret the settings hold: none of them may appear in a log line. */
export function secretsIn(settings: {
  readonly secrets: Readonly<Record<string, string>>;
  readonly slack: { readonly botToken: string; readonly signingSecret?: string; readonly appToken?: string };
  readonly metricsToken?: string;
  readonly redisUrl: string;
}): string[] {
  const { botToken, signingSecret, appToken } = settings.slack;
  return [
    ...Object.values(settings.secrets),
    botToken,
    ...(signingSecret === undefined ? [] : [signingSecret]),
    ...(appToken === undefined ? [] : [appToken]),
    ...(settings.metricsToken === undefined ? [] : [settings.metricsToken]),
    ...redisPassword(settings.redisUrl),
  ];
}

/** The password in a `redis://user:password@host` URL, if any. */
function redisPassword(url: string): string[] {
  try {
    const { password } = new URL(url);
    return password === '' ? [] : [password, decodeURIComponent(password)];
  } catch {
    return [];
  }
}

/** One info line per committed change of a run: what happened, to which run, by whom. */
export function logCommitted(logger: Logger, result: UseCaseResult): void {
  if (!('run' in result) || result.run === undefined) return;
  const { run } = result;
  logger.info(
    {
      runId: run.runId,
      agent: run.agent,
      version: run.version,
      status: run.status,
      ...(run.decidedBy === undefined ? {} : { decidedBy: run.decidedBy }),
    },
    `run ${result.kind}`,
  );
}

export async function closeAll(
  timers: TimerScheduler,
  webhooks: WebhookSink,
  render: RenderQueue,
  connections: Readonly<Record<string, Redis>>,
): Promise<void> {
  await timers.close();
  await webhooks.close();
  await render.close();
  await Promise.all(Object.values(connections).map((connection) => connection.quit()));
}

/**
 * Failures nobody sees in Slack: logged with their code and what they concern, and counted. One that
 * only says Redis is unreachable is a debug line: the outage itself is logged once (RedisOutages).
 */
export function reporter(metrics: Metrics, logger: Logger): ErrorReporter {
  return (error, context, fields) => {
    metrics.error(error);
    logger[isRedisConnectionError(error) ? 'debug' : 'error']({ ...fields, err: error }, context);
  };
}

/**
 * The process-level guard: an error that escaped every handler (a library's callback, a stray
 * promise) is reported and the process keeps serving. Approval state lives in Redis behind
 * compare-and-set commits, so a request that failed half-way left nothing half-done in memory; dying
 * would only drop the other requests in flight. Returns the function that removes the guard.
 */
export function guardProcess(report: ErrorReporter): () => void {
  const rejected = (reason: unknown) => report(reason, 'an unhandled promise rejection (kept running)');
  const thrown = (error: unknown) => report(error, 'an uncaught exception (kept running)');
  process.on('unhandledRejection', rejected);
  process.on('uncaughtException', thrown);
  return () => {
    process.off('unhandledRejection', rejected);
    process.off('uncaughtException', thrown);
  };
}

/** Runs marked changed before `olderThan` and not shown since: rendered again (their job was lost or failed). */
export async function repairRenderings(
  approvals: ApprovalService,
  requestRender: (runId: string) => Promise<void>,
  olderThan: number,
  stopped: () => boolean = () => false,
): Promise<void> {
  for (const runId of await approvals.changedRuns(olderThan)) {
    if (stopped()) return;
    await requestRender(runId);
  }
}

/** Boot-time reconciliation in the background: timers and a rendering for every pending run. */
export function reconcile(deps: {
  readonly approvals: ApprovalService;
  readonly timers: TimerScheduler;
  readonly requestRender: (runId: string) => Promise<void>;
  readonly clock: () => number;
  readonly onError: ErrorReporter;
  readonly stopped: () => boolean;
}): Promise<ReconcileSummary> {
  return reconcileTimers({
    service: deps.approvals,
    ensure: async (run) => {
      await deps.timers.ensure(run);
      await deps.requestRender(run.runId);
    },
    clock: deps.clock,
    stopped: deps.stopped,
    onError: (error, runId) => deps.onError(error, `reconciling the timers of run ${runId}`, { runId }),
  }).catch((error: unknown): ReconcileSummary => {
    deps.onError(error, 'reconciling timers');
    return { checked: 0, expired: 0, failed: 1 };
  });
}

/**
 * The process's periodic work (outbox sweep, render repair, expiry sweep): each task runs at most once
 * at a time (a sweep still busy when its interval comes round is not started again beside itself), and
 * `close()` stops the intervals and waits for whatever is running, so a stop never cuts a sweep off
 * between its Redis writes nor closes a connection under it.
 */
export function periodicWork(onError: ErrorReporter) {
  const running = new Map<string, Promise<void>>();
  const intervals: ReturnType<typeof setInterval>[] = [];
  let closed = false;
  const run = (what: string, task: () => Promise<unknown>): void => {
    if (closed || running.has(what)) return;
    const done = task()
      .then(
        () => {},
        (error: unknown) => onError(error, what),
      )
      .finally(() => running.delete(what));
    running.set(what, done);
  };
  return {
    /** Runs `task` now in the background (unless it is already running). */
    run,
    /** Runs `task` every `ms` (the timer does not keep the process alive). */
    every(ms: number, what: string, task: () => Promise<unknown>): void {
      const interval = setInterval(() => run(what, task), ms);
      interval.unref();
      intervals.push(interval);
    },
    /** Whether `close()` was called: long tasks check it between items. */
    closed: () => closed,
    async close(): Promise<void> {
      closed = true;
      for (const interval of intervals) clearInterval(interval);
      await Promise.all(running.values());
    },
  };
}

export interface IdleCollectorOptions {
  /** V8's full collection (`globalThis.gc`, present when Node runs with `--expose-gc`). */
  readonly gc: () => void;
  /** Heap in use (garbage included), bytes. */
  readonly heapUsed?: () => number;
  /** CPU time used by the process so far, ms. */
  readonly cpuMs?: () => number;
  /** How often the process is looked at (default 500 ms). */
  readonly everyMs?: number;
  /** A look that found the process using less CPU than this share of the time is idle (default 0.1). */
  readonly idleShare?: number;
  /** Collect only once this much was allocated since the last collection (default 16 MiB). */
  readonly minGrowth?: number;
}

/**
 * Hands memory back once a burst is over. V8 collects when it allocates, not when the process goes
 * quiet, so after a burst of plans the heap keeps the burst's garbage until the next one: measured on
 * the bot after 800 plans, 76 MiB of heap for 33 MiB in use and an RSS of 148 MiB, unchanged after
 * 40 s idle. The collector runs a full collection when a look (every 500 ms) finds the process idle
 * and the heap grown by `minGrowth` since the last one, and a second one at the next idle look: the
 * first frees the heap, the second what the first left to finalizers (Buffers' memory outside the
 * heap) — measured, RSS 177 → 148 MiB after one, 115 MiB after two. Tens of ms each, only when nothing
 * else is waiting. Returns its stop function.
 */
export function startIdleCollector(options: IdleCollectorOptions): () => void {
  const heapUsed = options.heapUsed ?? (() => process.memoryUsage().heapUsed);
  const cpuMs =
    options.cpuMs ??
    (() => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    });
  const everyMs = options.everyMs ?? 500;
  const idleShare = options.idleShare ?? 0.1;
  const minGrowth = options.minGrowth ?? 16 * 2 ** 20;
  let baseline = heapUsed();
  let lastCpu = cpuMs();
  let followUp = false;
  const interval = setInterval(() => {
    const cpu = cpuMs();
    const idle = cpu - lastCpu < everyMs * idleShare;
    lastCpu = cpu;
    if (!idle) return;
    if (!followUp && heapUsed() - baseline < minGrowth) return;
    options.gc();
    followUp = !followUp;
    baseline = heapUsed();
    lastCpu = cpuMs(); // the collection's own CPU is not activity
  }, everyMs);
  interval.unref();
  return () => clearInterval(interval);
}
