import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import config from '../examples/freight/countersign.config.ts';
import { FREIGHT_AGENT, freightContext, freightSteps, freightSummary } from '../examples/freight/plans.ts';
import { ApprovalService, RefusalLog } from '../src/approvals/index.ts';
import { AgentClient } from '../src/client/index.ts';
import { startRedisServer } from '../src/devtools/redis-server.ts';
import { signSubmission } from '../src/pipeline/index.ts';
import {
  bullPrefix,
  createDecisionSink,
  createRedisConnection,
  INTAKE_CONCURRENCY,
  type IntakeWorker,
  startIntakeWorker,
} from '../src/queue/index.ts';
import { type Benchmark, median, type Sample } from './harness.ts';

/**
 * intake: plans/second from `client.submit` to a stored v1 (the card port is a no-op, as if Slack
 * posting were stubbed at the gateway), against a baseline of bare BullMQ — `queue.add` of a job of
 * the same size and a no-op processor — with the same worker concurrency, both in one run on a private
 * redis-server. Also: Redis memory per pending run of the 3-step freight plan (MEMORY USAGE of the
 * run's own keys; and, for context, the server's used_memory growth per submission, which includes the
 * completed intake job BullMQ keeps for an hour, the nonce and the index entries).
 */
export const intakeBenchmark: Benchmark = {
  name: 'intake',
  async run({ quick, log }) {
    const server = await startRedisServer();
    const secret = 'bench-freight-secret-0123456789';
    const prefix = 'bench';
    // The intake worker's default, for both sides.
    const concurrency = INTAKE_CONCURRENCY;
    // Connections as startCountersign opens them: state, BullMQ producers, workers.
    const redis = createRedisConnection(server.url, { role: 'client' });
    const queues = createRedisConnection(server.url, { role: 'client' });
    const workerConnection = createRedisConnection(server.url, { role: 'worker' });
    const sink = createDecisionSink({ connection: queues, prefix });
    const secrets = (agent: string) => (agent === FREIGHT_AGENT ? secret : undefined);
    const service = new ApprovalService({ redis, config, secrets, prefix, deliver: sink.deliver });
    const client = new AgentClient({ redisUrl: server.url, agent: FREIGHT_AGENT, secret, prefix });
    let stored = 0;
    let storedTarget = 0;
    let allStored: () => void = () => {};
    // Where the bot would post the card: every committed pending run counts as stored.
    service.onCommitted((result) => {
      if (result.kind === 'pending' && ++stored === storedTarget) allStored();
    });
    const intake: IntakeWorker = startIntakeWorker({
      connection: workerConnection,
      service,
      refusals: new RefusalLog(redis, service.keys),
      redis,
      keys: service.keys,
      agents: config.agents,
      secrets,
      prefix,
      concurrency,
    });

    const plan = {
      summary: freightSummary,
      context: freightContext,
      steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
      expiresIn: '2h',
    };
    const subjectRound = async (count: number): Promise<{ rate: number; runIds: string[] }> => {
      stored = 0;
      storedTarget = count;
      const done = new Promise<void>((resolve) => {
        allStored = resolve;
      });
      const start = performance.now();
      const submitted = await Promise.all(Array.from({ length: count }, () => client.submit(plan)));
      await within(done, 120_000, `${count} plans stored`);
      return { rate: (count / (performance.now() - start)) * 1000, runIds: submitted.map((s) => s.runId) };
    };

    // The baseline job carries a signed submission of the same plan: the same bytes through BullMQ.
    const sample = signSubmission(
      {
        agent: FREIGHT_AGENT,
        runId: 'baseline',
        nonce: 'baseline-nonce',
        issuedAt: Date.now(),
        plan: JSON.stringify({
          runId: '0190a6e4-0000-7000-8000-000000000000',
          agent: FREIGHT_AGENT,
          ...plan,
        }),
      },
      secret,
    );
    const bare = new Queue('baseline', { connection: queues, prefix: bullPrefix(prefix) });
    let processed = 0;
    let processedTarget = 0;
    let allProcessed: () => void = () => {};
    const bareWorker = new Worker(
      'baseline',
      async () => {
        if (++processed === processedTarget) allProcessed();
      },
      { connection: workerConnection, prefix: bullPrefix(prefix), concurrency },
    );
    let bareId = 0;
    const baselineRound = async (count: number): Promise<number> => {
      processed = 0;
      processedTarget = count;
      const done = new Promise<void>((resolve) => {
        allProcessed = resolve;
      });
      const start = performance.now();
      await Promise.all(
        Array.from({ length: count }, () =>
          bare.add('job', sample, {
            jobId: `bare-${bareId++}`,
            removeOnComplete: { age: 3600, count: 10_000 },
          }),
        ),
      );
      await within(done, 120_000, `${count} bare jobs processed`);
      return (count / (performance.now() - start)) * 1000;
    };

    try {
      const count = quick ? 200 : 1000;
      const repetitions = quick ? 3 : 5;
      log(
        `intake: ${repetitions} rounds of ${count} plans (client.submit → stored v1) vs bare BullMQ add+process …`,
      );
      // Warm-up long enough for the JIT: the subject's rate climbs for its first few thousand plans
      // (measured: ~2,000/s in the first round of 1,000, ~4,000/s from the fourth on).
      const warmup = quick ? 500 : 3000;
      for (let done = 0; done < warmup; done += count) {
        await subjectRound(Math.min(count, warmup - done));
        await baselineRound(Math.min(count, warmup - done));
      }
      const subjectRates: number[] = [];
      const baselineRates: number[] = [];
      let lastRunIds: string[] = [];
      for (let i = 0; i < repetitions; i++) {
        const round = await subjectRound(count);
        subjectRates.push(round.rate);
        lastRunIds = round.runIds;
        baselineRates.push(await baselineRound(count));
      }
      const subject = summarize(subjectRates);
      const baseline = summarize(baselineRates);
      const ratio = subject.median / baseline.median;

      log('intake: measuring memory per pending run …');
      const perRun = await runKeyBytes(redis, service, lastRunIds.slice(0, 100));
      const growth = await usedMemoryGrowth(redis, () => subjectRound(count).then(() => undefined), count);
      return [
        {
          name: 'intake',
          unit: 'plans/s',
          value: Math.round(subject.median),
          baseline: Math.round(baseline.median),
          ratio,
          spread: subject.spread,
          target: '≥ 0.5 × baseline',
          pass: ratio >= 0.5,
        },
        {
          name: 'intake memory per pending run (run keys)',
          unit: 'B',
          value: perRun,
          baseline: null,
          ratio: null,
          spread: 0,
          target: '≤ 8192 B',
          pass: perRun <= 8192,
        },
        {
          name: 'intake used_memory growth per submission (incl. kept job, nonce, indexes)',
          unit: 'B',
          value: growth,
          baseline: null,
          ratio: null,
          spread: 0,
          target: 'for context',
          pass: true,
        },
      ];
    } finally {
      await client.close();
      await intake.close();
      await bareWorker.close();
      await bare.close();
      await sink.close();
      await workerConnection.quit();
      await queues.quit();
      await redis.quit();
      await server.stop();
    }
  },
};

/** A stuck round (a failing processor) fails the benchmark instead of hanging it. */
async function within(done: Promise<void>, ms: number, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`intake benchmark: no ${what} after ${ms} ms`)), ms);
  });
  try {
    await Promise.race([done, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function summarize(values: readonly number[]): Sample {
  const mid = median(values);
  return { median: mid, spread: mid === 0 ? 0 : (Math.max(...values) - Math.min(...values)) / mid };
}

/** Median over `runIds` of the summed MEMORY USAGE of each run's own keys (everything under its hash tag). */
async function runKeyBytes(
  redis: Redis,
  service: ApprovalService,
  runIds: readonly string[],
): Promise<number> {
  const totals: number[] = [];
  for (const runId of runIds) {
    const keys = service.keys.forRun(runId);
    const candidates = [
      keys.run,
      keys.version(1),
      keys.approvals,
      keys.journal,
      keys.decision,
      keys.messages,
      keys.outcomes,
    ];
    let total = 0;
    for (const key of candidates)
      total += Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
    totals.push(total);
  }
  return Math.round(median(totals));
}

/** used_memory after − before a round of `count` submissions, per submission. */
async function usedMemoryGrowth(redis: Redis, round: () => Promise<void>, count: number): Promise<number> {
  const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? 0);
  const before = await usedMemory();
  await round();
  return Math.round(((await usedMemory()) - before) / count);
}
