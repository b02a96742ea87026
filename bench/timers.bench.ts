import type { Redis } from 'ioredis';
import config from '../examples/freight/countersign.config.ts';
import { FREIGHT_AGENT, freightPlan } from '../examples/freight/plans.ts';
import { ApprovalService, type RunView, type UseCaseResult } from '../src/approvals/index.ts';
import { createRunIdGenerator } from '../src/client/run-id.ts';
import { startRedisServer } from '../src/devtools/redis-server.ts';
import {
  createRedisConnection,
  escalateJobId,
  expireJobId,
  expiryJob,
  nextChainJob,
  startTimersWorker,
  TIMER_JOB_OPTIONS,
  TIMERS_QUEUE,
  TimerScheduler,
} from '../src/queue/index.ts';
import { type Benchmark, percentile } from './harness.ts';
import { benchSigning } from './signing.ts';

/**
 * timers: with N pending runs (100,000; 10,000 with --quick) each holding its expiry job and its next
 * escalation job (the freight config: level 1 after 15 min), how late do 1,000 expiries due at the
 * same instant fire — from `expiresAt` to the moment the timers worker calls `expire` (and, for context,
 * to the committed decision) — and how much Redis memory does one pending run take, state and timers.
 *
 * Everything runs on a private redis-server. The 1,000 runs that expire are real: stored by
 * `submitPlan`, scheduled by `TimerScheduler.schedule`, expired by the real worker and processor (the
 * presenter records times instead of calling Slack; decisions go to the real decision queue). The
 * other runs are seeded fast as faithful copies of one real pending run: every key of its state (run
 * hash, version, journal, message refs) copied under a new run id with the id rewritten inside (ids
 * have the same length, so sizes are exact; the copies' journal hash chains are not re-computed), its
 * index entries, and the same two timer jobs the scheduler gives a run — same ids, data and options.
 * Memory per pending run is the server's `used_memory` growth over that seeding, divided by the count.
 */
export const timersBenchmark: Benchmark = {
  name: 'timers',
  async run({ quick, log }) {
    const server = await startRedisServer();
    const prefix = 'bench';
    // Connections as startCountersign opens them: state, BullMQ producers, workers.
    const redis = createRedisConnection(server.url, { role: 'client' });
    const queues = createRedisConnection(server.url, { role: 'client' });
    const workerConnection = createRedisConnection(server.url, { role: 'worker' });
    const service = new ApprovalService({
      redis,
      config,
      signer: benchSigning().signer,
      prefix,
    });
    const scheduler = new TimerScheduler({
      connection: queues,
      prefix,
      escalation: config.escalation,
    });
    const nextRunId = createRunIdGenerator();

    const fired = new Map<string, number>();
    const decided = new Map<string, number>();
    const timed = {
      expire: (input: { runId: string; version: number }) => {
        fired.set(input.runId, Date.now());
        return service.expire(input);
      },
      escalate: service.escalate.bind(service),
      remind: service.remind.bind(service),
      now: service.now.bind(service),
    };
    // The listeners' Redis work (stopping the chain) without Slack, which the presenter would do.
    service.onCommitted(async (result: UseCaseResult) => {
      if (result.kind === 'expired') decided.set(result.run.runId, Date.now());
      await scheduler.onCommitted(result);
    });
    const worker = startTimersWorker({ connection: workerConnection, prefix, service: timed });

    try {
      const pending = quick ? 10_000 : 100_000;
      const batch = 1_000;

      // The template: one real pending run with its card posted and its timers scheduled.
      const template = await submit(service, nextRunId(), Date.now() + 2 * 3_600_000);
      await service.recordPosted({
        runId: template.runId,
        version: 1,
        channel: 'C0OPS',
        ts: '1700000000.000100',
      });
      await scheduler.schedule(template);

      log(`timers: seeding ${pending.toLocaleString('en-US')} pending runs (copies of one real run) …`);
      const before = await usedMemory(redis);
      const seedStart = performance.now();
      await seedCopies(redis, service, scheduler, template, pending - 1, nextRunId);
      const perRun = ((await usedMemory(redis)) - before) / (pending - 1);
      log(`timers: seeded in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);
      const breakdown = await runBytes(redis, service, scheduler, template.runId);

      // 1,000 real runs whose expiry falls on the same whole second, far enough ahead to set them up.
      const dueAt = Math.ceil((Date.now() + 15_000) / 1000) * 1000;
      log(`timers: ${batch} real runs expiring together at ${new Date(dueAt).toISOString()} …`);
      const runIds: string[] = [];
      for (let i = 0; i < batch; i += 50) {
        const runs = await Promise.all(
          Array.from({ length: Math.min(50, batch - i) }, () => submit(service, nextRunId(), dueAt)),
        );
        await Promise.all(runs.map((run) => scheduler.schedule(run)));
        runIds.push(...runs.map((run) => run.runId));
      }
      if (Date.now() >= dueAt - 1000) throw new Error('timers benchmark: setting up the batch took too long');
      const delayed = await scheduler.queue.getDelayedCount();
      log(`timers: ${delayed.toLocaleString('en-US')} delayed timer jobs; waiting for the batch …`);

      const deadline = dueAt + 60_000;
      while (decided.size < batch && Date.now() < deadline) await sleep(50);
      if (decided.size < batch) throw new Error(`timers benchmark: only ${decided.size} of ${batch} expired`);

      const lateness = runIds.map((runId) => (fired.get(runId) ?? Number.NaN) - dueAt);
      const decidedLateness = runIds.map((runId) => (decided.get(runId) ?? Number.NaN) - dueAt);
      const p50 = percentile(lateness, 50);
      const p99 = percentile(lateness, 99);
      const decidedP99 = percentile(decidedLateness, 99);
      log(
        `timers: fired min ${Math.min(...lateness)} ms, p50 ${p50} ms, p99 ${p99} ms, max ${Math.max(...lateness)} ms; decided p99 ${decidedP99} ms`,
      );
      const row = (name: string, unit: string, value: number, target: string, pass: boolean) => ({
        name,
        unit,
        value,
        baseline: null,
        ratio: null,
        spread: 0,
        target,
        pass,
      });
      return [
        row(
          `timers lateness p50 (${batch} due at once, ${pending.toLocaleString('en-US')} pending)`,
          'ms',
          p50,
          'for context',
          true,
        ),
        row(
          `timers lateness p99 (${batch} due at once, ${pending.toLocaleString('en-US')} pending)`,
          'ms',
          p99,
          '< 1000 ms',
          p99 < 1000,
        ),
        row('timers expiry committed p99 (same batch)', 'ms', decidedP99, 'for context', true),
        row(
          'timers memory per pending run (state + timers, used_memory growth)',
          'B',
          Math.round(perRun),
          '< 8192 B',
          perRun < 8192,
        ),
        row(
          'timers memory per pending run: state keys (MEMORY USAGE)',
          'B',
          breakdown.state,
          'for context',
          true,
        ),
        row(
          'timers memory per pending run: timer jobs (MEMORY USAGE)',
          'B',
          breakdown.timers,
          'for context',
          true,
        ),
      ];
    } finally {
      await worker.close();
      await scheduler.close();
      await workerConnection.quit();
      await queues.quit();
      await redis.quit();
      await server.stop();
    }
  },
};

/** Stores a pending 3-step freight run expiring at `expiresAt` (whole seconds, as the client sends). */
async function submit(service: ApprovalService, runId: string, expiresAt: number): Promise<RunView> {
  const now = Date.now();
  const envelope = {
    ...freightPlan({ runId, now }),
    expiresAt: new Date(Math.ceil(expiresAt / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
  };
  const result = await service.submitPlan({ runId, agent: FREIGHT_AGENT, raw: JSON.stringify(envelope) });
  if (result.kind !== 'pending')
    throw new Error(`timers benchmark: expected a pending run, got ${result.kind}`);
  return result.run;
}

/**
 * `count` copies of the template run, 1,000 per round trip: its state keys (run id rewritten inside),
 * its index entries, and the same two timer jobs (expiry, first escalation level) the scheduler adds.
 */
async function seedCopies(
  redis: Redis,
  service: ApprovalService,
  scheduler: TimerScheduler,
  template: RunView,
  count: number,
  nextRunId: () => string,
): Promise<void> {
  const keys = service.keys.forRun(template.runId);
  const [runHash, version, journal, messages] = await Promise.all([
    redis.hgetall(keys.run),
    redis.get(keys.version(1)),
    redis.lrange(keys.journal, 0, -1),
    redis.hgetall(keys.messages),
  ]);
  if (version === null) throw new Error('timers benchmark: the template run has no version 1');
  const expiresAt = Date.parse(template.current.plan.expiresAt);
  const rewrite = (text: string, runId: string) => text.replaceAll(template.runId, runId);
  for (let done = 0; done < count; done += 1000) {
    const ids = Array.from({ length: Math.min(1000, count - done) }, nextRunId);
    const writes = redis.pipeline();
    for (const runId of ids) {
      const copy = service.keys.forRun(runId);
      writes.hset(copy.run, runHash);
      writes.set(copy.version(1), rewrite(version, runId));
      writes.rpush(copy.journal, ...journal.map((record) => rewrite(record, runId)));
      writes.hset(copy.messages, messages);
      writes.zadd(service.keys.pending, expiresAt, runId);
      writes.zadd(service.keys.runs, template.createdAt, runId);
    }
    await writes.exec();
    const now = Date.now();
    await scheduler.queue.addBulk(
      ids.flatMap((runId) => {
        const run = { ...template, runId };
        const jobs = [expiryJob(run), nextChainJob(config.escalation[run.agent], run)];
        return jobs.flatMap((job) =>
          job === undefined
            ? []
            : [
                {
                  name: job.data.kind,
                  data: job.data,
                  opts: { ...TIMER_JOB_OPTIONS, jobId: job.id, delay: Math.max(0, job.dueAt - now) },
                },
              ],
        );
      }),
    );
  }
}

/** MEMORY USAGE of one run's state keys and of its two timer jobs' keys. */
async function runBytes(
  redis: Redis,
  service: ApprovalService,
  scheduler: TimerScheduler,
  runId: string,
): Promise<{ state: number; timers: number }> {
  const keys = service.keys.forRun(runId);
  const usage = async (key: string) =>
    Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
  let state = 0;
  for (const key of [keys.run, keys.version(1), keys.approvals, keys.journal, keys.decision, keys.messages])
    state += await usage(key);
  let timers = 0;
  for (const id of [expireJobId(runId, 1), escalateJobId(runId, 1, 1)])
    timers += await usage(`${scheduler.queue.opts.prefix}:${TIMERS_QUEUE}:${id}`);
  return { state, timers };
}

async function usedMemory(redis: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? 0);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
