import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { FREIGHT_AGENT, freightContext, freightSteps, freightSummary } from '../examples/freight/plans.ts';
import type { Keys } from '../src/approvals/index.ts';
import { AgentClient, buildPlanText, createRunIdGenerator } from '../src/client/index.ts';
import { findFreePort, startRedisServer } from '../src/devtools/redis-server.ts';
import { createSlackEmulator } from '../src/emulator/index.ts';
import { startCountersign } from '../src/main.ts';
import { createRedisConnection } from '../src/queue/index.ts';
import { BENCH_AGENT_SECRET, BENCH_SIGNING_SECRET, benchConfig } from './bench-config.ts';
import { type Benchmark, median, pool, type Sample } from './harness.ts';
import { benchSigning } from './signing.ts';

/**
 * gateway: plans/second from `client.submit` (the agent client over HTTP: local checks, a signed
 * `POST /v1/runs`) to a stored v1 — the gateway's 202, sent after validation and the commit. The
 * whole bot runs in this process (`startCountersign`: Bolt's HTTP receiver serving the gateway, the
 * render queue and its worker), and cards really are posted, through the render queue, to the Slack
 * emulator in this process with its rate limits off. A round is timed to its last 202; the cards
 * still being posted then are waited for, untimed, before the next round, so neither side's round
 * pays for the other's backlog.
 *
 * Baseline, alternating rounds in the same run, with the same number of requests in flight: a bare
 * `node:http` server that reads the body, `JSON.parse`s it, does one zod parse of an equivalent schema
 * and one Redis `SET` of the body under the run id, then answers 202 — sent the same plan text by plain
 * `fetch`. Also: Redis memory per pending run of the 3-step freight plan (MEMORY USAGE of the run's own
 * keys), and for context the server's `used_memory` growth per submission.
 */
export const gatewayBenchmark: Benchmark = {
  name: 'gateway',
  async run({ quick, log }) {
    const inFlight = 32;
    const count = quick ? 200 : 1000;
    const repetitions = quick ? 3 : 5;
    // The subject's rate climbs for its first few thousand plans while V8 compiles the hot paths.
    const warmup = quick ? 500 : 3000;
    const closers: (() => Promise<unknown>)[] = [];
    try {
      const server = await startRedisServer();
      closers.push(() => server.stop());
      const slack = createSlackEmulator({ rateLimit: false });
      await slack.start();
      closers.push(() => slack.stop());
      const signing = benchSigning();
      const port = await findFreePort();
      const countersign = await startCountersign({
        config: benchConfig,
        secrets: { [FREIGHT_AGENT]: BENCH_AGENT_SECRET },
        signing,
        redisUrl: server.url,
        prefix: 'bench',
        slack: { botToken: slack.botToken, signingSecret: BENCH_SIGNING_SECRET, apiUrl: slack.url },
        port,
        logLevel: 'error',
      });
      closers.push(() => countersign.stop());
      const client = new AgentClient({
        url: `http://127.0.0.1:${port}`,
        agent: FREIGHT_AGENT,
        secret: BENCH_AGENT_SECRET,
        publicKeys: signing.publicKeys,
      });
      closers.push(() => client.close());
      const redis = createRedisConnection(server.url, { role: 'client', name: 'bench-gateway' });
      closers.push(() => redis.quit());

      let cardsPosted = 0;
      const unsubscribe = slack.state.subscribe((event) => {
        if (event.type === 'message_posted' && event.message.metadata?.event_payload.run_id !== undefined)
          cardsPosted++;
      });
      closers.push(async () => unsubscribe());

      const plan = {
        summary: freightSummary,
        context: freightContext,
        steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
        expiresIn: '2h',
      };
      let submitted = 0;
      const subjectRound = async (n: number): Promise<{ rate: number; runIds: string[] }> => {
        const runIds: string[] = [];
        const start = performance.now();
        await pool(n, inFlight, async () => {
          const { runId, status } = await client.submit(plan);
          if (status !== 'pending') throw new Error(`gateway: run ${runId} is ${status}, not pending`);
          runIds.push(runId);
        });
        const rate = (n / (performance.now() - start)) * 1000;
        submitted += n;
        await until(() => cardsPosted >= submitted, 120_000, `${submitted} cards posted`);
        return { rate, runIds };
      };

      const baseline = await startBaselineServer(redis);
      closers.push(() => baseline.stop());
      const nextRunId = createRunIdGenerator();
      const baselineRound = async (n: number): Promise<number> => {
        const start = performance.now();
        await pool(n, inFlight, async () => {
          const built = buildPlanText(plan, { agent: FREIGHT_AGENT, runId: nextRunId(), now: Date.now() });
          if (!built.ok) throw new Error('gateway: the benchmark plan does not build');
          const response = await fetch(baseline.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: built.text,
          });
          await response.arrayBuffer();
          if (response.status !== 202) throw new Error(`gateway: baseline answered HTTP ${response.status}`);
        });
        return (n / (performance.now() - start)) * 1000;
      };

      log(
        `gateway: warm-up (${warmup} plans a side), then ${repetitions} rounds of ${count} plans (client.submit → stored v1, ${inFlight} in flight) vs a bare node:http + zod + SET …`,
      );
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
        log(
          `gateway: round ${i + 1}/${repetitions}: ${Math.round(round.rate)} plans/s · baseline ${Math.round(baselineRates.at(-1) ?? 0)}/s`,
        );
      }
      const subject = summarize(subjectRates);
      const base = summarize(baselineRates);
      const ratio = subject.median / base.median;

      log('gateway: measuring memory per pending run …');
      const perRun = await runKeyBytes(redis, countersign.approvals.keys, lastRunIds.slice(0, 100));
      const growth = await usedMemoryGrowth(redis, () => subjectRound(count).then(() => undefined), count);
      return [
        {
          name: `gateway (client.submit → stored v1, ${inFlight} in flight; cards posted to the emulator)`,
          unit: 'plans/s',
          value: Math.round(subject.median),
          baseline: Math.round(base.median),
          ratio,
          spread: subject.spread,
          target: '≥ 0.5 × baseline',
          pass: ratio >= 0.5,
        },
        {
          name: 'gateway memory per pending run (run keys)',
          unit: 'B',
          value: perRun,
          baseline: null,
          ratio: null,
          spread: 0,
          target: '≤ 8192 B',
          pass: perRun <= 8192,
        },
        {
          name: 'gateway used_memory growth per submission (incl. indexes, render jobs in flight)',
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
      for (const close of closers.reverse()) await close();
    }
  },
};

/** The plan as a bare service would check it: the same fields, the tools' own argument schemas. */
const equivalentSchema = z.strictObject({
  runId: z.string(),
  agent: z.string(),
  summary: z.string().optional(),
  context: z.record(z.string(), z.json()).optional(),
  expiresIn: z.string(),
  steps: z.array(
    z.strictObject({
      id: z.string(),
      tool: z.string(),
      args: z.union([...benchConfig.pipeline.tools.values()].map((tool) => tool.args)),
    }),
  ),
});

/** The baseline: a bare node:http server — read the body, JSON.parse, one zod parse, one SET, 202. */
async function startBaselineServer(redis: Redis): Promise<{ url: string; stop(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    readAll(req)
      .then(async (body) => {
        const plan = equivalentSchema.parse(JSON.parse(body));
        await redis.set(`baseline:run:${plan.runId}`, body);
        res.writeHead(202, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ runId: plan.runId, status: 'pending', version: 1 }));
      })
      .catch((error: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(error instanceof Error ? error.message : String(error));
      });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('gateway: baseline has no port');
  return {
    url: `http://127.0.0.1:${address.port}/v1/runs`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Polls `done` until it holds; a stuck round fails the benchmark instead of hanging it. */
async function until(done: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = performance.now() + ms;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`gateway benchmark: no ${what} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function summarize(values: readonly number[]): Sample {
  const mid = median(values);
  return { median: mid, spread: mid === 0 ? 0 : (Math.max(...values) - Math.min(...values)) / mid };
}

/** Median over `runIds` of the summed MEMORY USAGE of each run's own keys (everything under its hash tag). */
async function runKeyBytes(redis: Redis, keys: Keys, runIds: readonly string[]): Promise<number> {
  const totals: number[] = [];
  for (const runId of runIds) {
    const run = keys.forRun(runId);
    const candidates = [
      run.run,
      run.version(1),
      run.approvals,
      run.journal,
      run.decision,
      run.messages,
      run.outcomes,
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
