import { Queue, Worker } from 'bullmq';
import { FREIGHT_AGENT, freightContext, freightSteps, freightSummary } from '../examples/freight/plans.ts';
import { AgentClient, createRunIdGenerator, type Decision } from '../src/client/index.ts';
import { findFreePort, startRedisServer } from '../src/devtools/redis-server.ts';
import { createSlackEmulator } from '../src/emulator/index.ts';
import { signSubmission } from '../src/pipeline/index.ts';
import { bullPrefix, createRedisConnection } from '../src/queue/index.ts';
import { startBotProcess } from './bot-child.ts';
import { type Benchmark, type BenchRow, median, percentile } from './harness.ts';
import { approveRequest } from './slack-clicks.ts';

/**
 * end_to_end: the whole loop at a steady offered load (50 plans/s; 20 s in all, 3 s with `--quick`),
 * open loop: `client.submit` → card posted at the Slack emulator → a signed `approve` click over HTTP
 * the moment the card appears → the decision received by the agent's durable consumer
 * (`client.onDecision`, long polls of the gateway's decision feed). Legs, p50 and p99: submit→card, click→decision, submit→decision.
 *
 * Baseline, in the same run and in alternating rounds at the same rate: bare BullMQ add → process →
 * add → process — the signed submission through one queue, whose processor adds the decision (the
 * same bytes the agent received) to a second queue. submit→card is compared with the first hop,
 * click→decision with the second, submit→decision with both.
 *
 * The bot (`startCountersign`: Bolt over HTTP, the agent gateway, timers, rendering, decision delivery) runs in a process
 * of its own (bench/bot-process.ts); the emulator, the agent client, the clicks and the baseline run
 * here. Also: the bot process's RSS after the load and 3 s idle.
 */
export const endToEndBenchmark: Benchmark = {
  name: 'end_to_end',
  async run({ quick, log }) {
    const rate = 50;
    const rounds = quick ? 2 : 4;
    const perRound = Math.round((rate * (quick ? 3 : 20)) / rounds);
    const warmup = quick ? 25 : 100;
    const secret = 'bench-freight-secret-0123456789';
    const signingSecret = 'bench-signing-secret-0123456789abcdef';
    const prefix = 'bench';

    const closers: (() => Promise<unknown>)[] = [];
    try {
      const redis = await startRedisServer();
      closers.push(() => redis.stop());
      const slack = createSlackEmulator({ rateLimit: false });
      await slack.start();
      closers.push(() => slack.stop());
      const port = await findFreePort();
      const bot = await startBotProcess({
        AGENT_SECRET: secret,
        REDIS_URL: redis.url,
        CS_PREFIX: prefix,
        SLACK_API_URL: slack.url,
        SLACK_SIGNING_SECRET: signingSecret,
        PORT: String(port),
      });
      closers.push(() => bot.stop());
      const startRssMiB = (await bot.rss()) / 2 ** 20;
      const agent = new AgentClient({ url: `http://127.0.0.1:${port}`, agent: FREIGHT_AGENT, secret });
      closers.push(() => agent.close());
      const eventsUrl = `http://127.0.0.1:${port}/slack/events`;

      // One record per run: times of each leg's end, from performance.now().
      const runs = new Map<
        string,
        { submitted: number; card?: number; clicked?: number; decided?: number }
      >();
      const failures: string[] = [];
      let lastDecision: Decision | undefined;
      const unsubscribe = slack.state.subscribe((event) => {
        if (event.type !== 'message_posted') return;
        const runId = event.message.metadata?.event_payload.run_id;
        const run = typeof runId === 'string' ? runs.get(runId) : undefined;
        if (run === undefined || run.card !== undefined) return;
        run.card = performance.now();
        // Click as soon as the card is there; the click→decision leg is timed from here.
        const request = approveRequest(event.message, signingSecret);
        run.clicked = performance.now();
        fetch(eventsUrl, { method: 'POST', headers: request.headers, body: request.body }).then(
          async (response) => {
            await response.arrayBuffer();
            if (response.status !== 200) failures.push(`approve answered HTTP ${response.status}`);
          },
          (error: unknown) => failures.push(error instanceof Error ? error.message : String(error)),
        );
      });
      closers.push(async () => unsubscribe());
      const stopConsumer = agent.onDecision(async (decision) => {
        const run = runs.get(decision.runId);
        if (run === undefined || run.decided !== undefined) return;
        if (decision.status !== 'approved') failures.push(`${decision.runId} was ${decision.status}`);
        run.decided = performance.now();
        lastDecision = decision;
      });
      closers.push(stopConsumer);

      const plan = {
        summary: freightSummary,
        context: freightContext,
        steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
        expiresIn: '2h',
      };
      const nextRunId = createRunIdGenerator();
      const subjectRound = async (count: number) => {
        const started: string[] = [];
        await openLoop(count, rate, async (due) => {
          // The run is known before it is sent: its card may reach the emulator before the 202
          // reaches this process.
          const runId = nextRunId();
          runs.set(runId, { submitted: due });
          started.push(runId);
          await agent.submit({ ...plan, runId });
        });
        const deadline = performance.now() + 60_000;
        for (;;) {
          if (failures.length > 0) throw new Error(`end_to_end: ${failures.slice(0, 3).join('; ')}`);
          const done = started.filter((runId) => runs.get(runId)?.decided !== undefined).length;
          if (done === count) break;
          if (performance.now() > deadline)
            throw new Error(`end_to_end: ${done}/${count} decisions received`);
          await sleep(20);
        }
        const legs = started.map((runId) => {
          const run = runs.get(runId);
          if (run?.card === undefined || run.clicked === undefined || run.decided === undefined)
            throw new Error(`end_to_end: run ${runId} incomplete`);
          return {
            card: run.card - run.submitted,
            click: run.decided - run.clicked,
            total: run.decided - run.submitted,
          };
        });
        return {
          card: legs.map((leg) => leg.card),
          click: legs.map((leg) => leg.click),
          total: legs.map((leg) => leg.total),
        };
      };

      // The baseline: the same bytes through two bare queues, add → process → add → process.
      const connection = createRedisConnection(redis.url, { role: 'client', name: 'bench-baseline' });
      const workerConnection = createRedisConnection(redis.url, { role: 'worker', name: 'bench-baseline-w' });
      closers.push(() => Promise.all([connection.quit(), workerConnection.quit()]));
      const submission = signSubmission(
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
      const bullOptions = { prefix: bullPrefix(prefix) };
      const first = new Queue('baseline-first', { connection, ...bullOptions });
      const second = new Queue('baseline-second', { connection, ...bullOptions });
      const hops = new Map<
        string,
        { added: number; firstDone?: number; secondAdded?: number; done?: number }
      >();
      let decisionBytes: unknown = {};
      const firstWorker = new Worker(
        'baseline-first',
        async (job) => {
          const hop = hops.get(job.id ?? '');
          if (hop === undefined) return;
          hop.firstDone = performance.now();
          hop.secondAdded = hop.firstDone;
          await second.add('decision', decisionBytes, { jobId: job.id ?? '', removeOnComplete: 1000 });
        },
        { connection: workerConnection, concurrency: 8, ...bullOptions },
      );
      const secondWorker = new Worker(
        'baseline-second',
        async (job) => {
          const hop = hops.get(job.id ?? '');
          if (hop !== undefined) hop.done = performance.now();
        },
        { connection: workerConnection.duplicate(), concurrency: 16, ...bullOptions },
      );
      closers.push(async () => {
        await firstWorker.close();
        await secondWorker.close();
        await secondWorker.disconnect();
        await first.close();
        await second.close();
      });
      let hopId = 0;
      const baselineRound = async (count: number) => {
        const started: string[] = [];
        await openLoop(count, rate, async (due) => {
          const id = `hop-${hopId++}`;
          hops.set(id, { added: due });
          started.push(id);
          await first.add('submit', submission, { jobId: id, removeOnComplete: 1000 });
        });
        const deadline = performance.now() + 60_000;
        while (started.some((id) => hops.get(id)?.done === undefined)) {
          if (performance.now() > deadline) throw new Error('end_to_end: baseline jobs not processed');
          await sleep(20);
        }
        const legs = started.map((id) => {
          const hop = hops.get(id);
          if (hop?.firstDone === undefined || hop.secondAdded === undefined || hop.done === undefined)
            throw new Error(`end_to_end: baseline ${id} incomplete`);
          return {
            card: hop.firstDone - hop.added,
            click: hop.done - hop.secondAdded,
            total: hop.done - hop.added,
          };
        });
        return {
          card: legs.map((leg) => leg.card),
          click: legs.map((leg) => leg.click),
          total: legs.map((leg) => leg.total),
        };
      };

      log(`end_to_end: warm-up (${warmup} plans at ${rate}/s, and as many bare jobs) …`);
      await subjectRound(warmup);
      if (lastDecision === undefined) throw new Error('end_to_end: no decision in the warm-up');
      decisionBytes = lastDecision;
      await baselineRound(warmup);

      log(
        `end_to_end: ${rounds} rounds of ${perRound} plans at ${rate}/s (submit → card → approve → decision), alternating with bare BullMQ …`,
      );
      const subject: Awaited<ReturnType<typeof subjectRound>>[] = [];
      const baseline: Awaited<ReturnType<typeof baselineRound>>[] = [];
      let botCpuMs = 0;
      for (let round = 0; round < rounds; round++) {
        const cpuBefore = await bot.cpu();
        subject.push(await subjectRound(perRound));
        botCpuMs += (await bot.cpu()) - cpuBefore;
        baseline.push(await baselineRound(perRound));
        log(
          `end_to_end: round ${round + 1}/${rounds}: submit→card p99 ${ms(percentile(subject.at(-1)?.card ?? [], 99))}, submit→decision p99 ${ms(percentile(subject.at(-1)?.total ?? [], 99))}`,
        );
      }

      log('end_to_end: bot idle for 3 s, then reading its RSS …');
      await sleep(3000);
      const rssMiB = (await bot.rss()) / 2 ** 20;

      const rows: BenchRow[] = [];
      const legs = [
        ['submit→card', 'card', 'first hop'],
        ['click→decision', 'click', 'second hop'],
        ['submit→decision', 'total', 'both hops'],
      ] as const;
      for (const [label, leg, hop] of legs) {
        for (const p of [50, 99]) {
          const value = summary(
            subject.map((r) => r[leg]),
            p,
          );
          const base = summary(
            baseline.map((r) => r[leg]),
            p,
          );
          const isTarget = leg === 'card' && p === 99;
          rows.push({
            name: `end_to_end ${label} p${p} (${rate} plans/s; baseline: bare BullMQ ${hop})`,
            unit: 'ms',
            value: twoDecimals(value.all),
            baseline: twoDecimals(base.all),
            ratio: value.all / base.all,
            spread: value.spread,
            target: isTarget ? '< 250 ms' : 'for context',
            pass: isTarget ? value.all < 250 : true,
          });
        }
      }
      rows.push({
        name: 'end_to_end bot CPU per plan (submit, card, click, decision; user + system)',
        unit: 'ms',
        value: twoDecimals(botCpuMs / (rounds * perRound)),
        baseline: null,
        ratio: null,
        spread: 0,
        target: 'for context',
        pass: true,
      });
      rows.push({
        name: 'bot RSS just after start (for context)',
        unit: 'MiB',
        value: twoDecimals(startRssMiB),
        baseline: null,
        ratio: null,
        spread: 0,
        target: 'for context',
        pass: true,
      });
      rows.push({
        name: 'bot idle RSS (bot process after the end_to_end load, 3 s idle)',
        unit: 'MiB',
        value: twoDecimals(rssMiB),
        baseline: null,
        ratio: null,
        spread: 0,
        target: '< 150 MB',
        pass: rssMiB * 2 ** 20 < 150e6,
      });
      return rows;
    } finally {
      for (const close of closers.reverse()) await close();
    }
  },
};

/** Starts `count` operations at `rate`/s on schedule (not waiting for earlier ones); `due` is the scheduled time. */
async function openLoop(count: number, rate: number, start: (due: number) => Promise<void>): Promise<void> {
  const interval = 1000 / rate;
  const begin = performance.now() + 20;
  const inflight: Promise<void>[] = [];
  for (let index = 0; index < count; index++) {
    const due = begin + index * interval;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    inflight.push(start(due));
  }
  await Promise.all(inflight);
}

/** The p-th percentile over all rounds, and its spread over rounds ((max − min) / median). */
function summary(rounds: readonly (readonly number[])[], p: number): { all: number; spread: number } {
  const values = rounds.map((latencies) => percentile(latencies, p));
  const mid = median(values);
  return {
    all: percentile(rounds.flat(), p),
    spread: mid === 0 ? 0 : (Math.max(...values) - Math.min(...values)) / mid,
  };
}

const twoDecimals = (value: number) => Math.round(value * 100) / 100;
const ms = (value: number) => `${value.toFixed(1)} ms`;
const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));
