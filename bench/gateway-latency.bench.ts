import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { FREIGHT_AGENT, freightContext, freightSteps, freightSummary } from '../examples/freight/plans.ts';
import { findFreePort, startRedisServer } from '../src/devtools/redis-server.ts';
import { createSlackEmulator } from '../src/emulator/index.ts';
import { PATHS, signedHeaders } from '../src/protocol/index.ts';
import { startBenchChild } from './bot-child.ts';
import { type Benchmark, type BenchRow, median, percentile } from './harness.ts';

/**
 * gateway_latency: the agent gateway over real HTTP, the bot (`startCountersign`, the freight config
 * with its rate limit raised: bench/bot-process.ts and bench/bench-config.ts) in a process of its own; the Slack emulator
 * and the load generator here.
 *
 * 1. `POST /v1/runs` at 200 plans/s, open loop: request i is sent at t0 + i·5 ms whether or not the
 *    earlier ones were answered, and its latency runs from that scheduled time to the last byte of
 *    the answer. Each body is a distinct freight plan (its own runId, two review steps: it stays
 *    pending), signed as the agent. Baseline, in alternating rounds of the same run: a bare
 *    `node:http` server in a child process too (bench/bare-gateway.ts) that reads the body, checks the
 *    same signature with the same function and answers 202. A warm-up round each, not counted; then
 *    5 rounds × 10 s a side (2 × 3 s with --quick).
 * 2. Long polls: 5,000 pending runs (500 with --quick) whose plans expire at one shared moment; the
 *    bot's RSS before opening the polls and while 5,000 `GET /v1/runs/{id}/decision?wait=60` are held;
 *    then, when the runs expire, the time from each decision's `decidedAt` to its answer's arrival.
 *    A poll answered 202 (its wait ended), anything but an `expired` decision, or an error is unanswered.
 */
export const gatewayLatencyBenchmark: Benchmark = {
  name: 'gateway_latency',
  async run({ quick, log }) {
    const rate = 200;
    const rounds = quick ? 2 : 5;
    const perRound = rate * (quick ? 3 : 10);
    const warmup = rate * (quick ? 2 : 5);
    const polls = quick ? 500 : 5000;
    const secret = 'bench-freight-secret-0123456789';
    const signingSecret = 'bench-signing-secret-0123456789abcdef';

    const closers: (() => Promise<unknown>)[] = [];
    // One socket per request in flight, none shared between the two servers' rounds.
    const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
    closers.push(async () => agent.destroy());
    try {
      const redis = await startRedisServer();
      closers.push(() => redis.stop());
      const slack = createSlackEmulator({ rateLimit: false });
      await slack.start();
      closers.push(() => slack.stop());
      const botPort = await findFreePort();
      const bot = await startBenchChild('bot-process', {
        AGENT_SECRET: secret,
        REDIS_URL: redis.url,
        CS_PREFIX: 'bench',
        SLACK_API_URL: slack.url,
        SLACK_SIGNING_SECRET: signingSecret,
        PORT: String(botPort),
      });
      closers.push(() => bot.stop());
      const barePort = await findFreePort();
      const bare = await startBenchChild('bare-gateway', { AGENT_SECRET: secret, PORT: String(barePort) });
      closers.push(() => bare.stop());

      const send = (
        port: number,
        method: 'GET' | 'POST',
        path: string,
        body: string,
        timeoutMs: number,
      ): Promise<{ status: number; text: string }> =>
        new Promise((resolve, reject) => {
          const headers = {
            ...signedHeaders({
              secret,
              agent: FREIGHT_AGENT,
              method,
              pathWithQuery: path,
              body,
              now: Date.now(),
            }),
            ...(method === 'POST'
              ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }
              : {}),
          };
          const req = request({ host: '127.0.0.1', port, method, path, headers, agent, timeout: timeoutMs });
          req.on('response', (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
            );
            res.on('error', reject);
          });
          req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
          req.on('error', reject);
          req.end(body);
        });

      const planBody = (expiry: { expiresIn: string } | { expiresAt: string }) =>
        JSON.stringify({
          runId: randomUUID(),
          agent: FREIGHT_AGENT,
          summary: freightSummary,
          context: freightContext,
          ...expiry,
          steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
        });

      // 1. Latency, open loop, alternating subject and baseline.
      const failures: string[] = [];
      const round = async (port: number, count: number): Promise<number[]> => {
        const bodies = Array.from({ length: count }, () => planBody({ expiresIn: '2h' }));
        const latencies: number[] = [];
        await openLoop(count, rate, async (index, due) => {
          try {
            const answer = await send(port, 'POST', PATHS.runs, bodies[index] ?? '', 30_000);
            if (answer.status !== 202) failures.push(`HTTP ${answer.status}: ${answer.text.slice(0, 200)}`);
          } catch (error) {
            failures.push(error instanceof Error ? error.message : String(error));
          }
          latencies.push(performance.now() - due);
        });
        return latencies;
      };
      log(`gateway_latency: warm-up (${warmup} plans at ${rate}/s to the bot, as many to the bare server) …`);
      await round(botPort, warmup);
      await round(barePort, warmup);
      if (failures.length > 0)
        throw new Error(`gateway_latency: warm-up: ${failures.slice(0, 3).join('; ')}`);
      log(
        `gateway_latency: ${rounds} rounds of ${perRound} plans at ${rate}/s, alternating with the bare server …`,
      );
      const subject: number[][] = [];
      const baseline: number[][] = [];
      for (let index = 0; index < rounds; index++) {
        // Alternate which side goes first, so neither always follows the other's garbage.
        if (index % 2 === 0) {
          subject.push(await round(botPort, perRound));
          baseline.push(await round(barePort, perRound));
        } else {
          baseline.push(await round(barePort, perRound));
          subject.push(await round(botPort, perRound));
        }
        log(
          `gateway_latency: round ${index + 1}/${rounds}: p99 ${ms(percentile(subject.at(-1) ?? [], 99))} (bare ${ms(percentile(baseline.at(-1) ?? [], 99))})`,
        );
      }
      const postFailures = failures.length;
      if (postFailures > 0) log(`gateway_latency: ${postFailures} submissions failed: ${failures[0]}`);

      // 2. Long polls on runs that expire together.
      const submitConcurrency = 32;
      // The expiry: 20 s after the submissions should be done at the rate the latency rounds offered.
      const submitBudgetMs = (polls / rate) * 1000;
      const expiresAtMs = Math.ceil((Date.now() + submitBudgetMs + 20_000) / 1000) * 1000;
      const expiresAt = new Date(expiresAtMs).toISOString();
      log(`gateway_latency: submitting ${polls} runs that all expire at ${expiresAt} …`);
      const runIds: string[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: submitConcurrency }, async () => {
          while (next < polls) {
            next++;
            const body = planBody({ expiresAt });
            const answer = await send(botPort, 'POST', PATHS.runs, body, 30_000);
            if (answer.status !== 202)
              throw new Error(`gateway_latency: submission answered HTTP ${answer.status}: ${answer.text}`);
            runIds.push((JSON.parse(body) as { runId: string }).runId);
          }
        }),
      );
      const headroomMs = expiresAtMs - Date.now();
      log(`gateway_latency: submitted; ${(headroomMs / 1000).toFixed(1)} s to the expiry`);
      if (headroomMs < 8_000)
        throw new Error(`gateway_latency: submissions too slow: ${headroomMs} ms left before the expiry`);
      await sleep(1000);
      const rssBefore = await bot.rss();
      const heapBefore = await bot.heap();

      log(`gateway_latency: opening ${polls} long polls (wait=60) …`);
      const answered: number[] = [];
      const unanswered: string[] = [];
      /** decidedAt − expiresAt: how late the expiry itself was committed (for context). */
      const late: number[] = [];
      let written = 0;
      const sendPoll = (runId: string) => {
        const promise = send(botPort, 'GET', PATHS.decision(runId, 60), '', 90_000);
        written++;
        return promise;
      };
      const pollsDone = Promise.all(
        runIds.map(async (runId, index) => {
          // Open them in batches, not 5,000 SYNs at once at the listen backlog.
          await sleep(Math.floor(index / 250) * 20);
          try {
            const answer = await sendPoll(runId);
            const arrived = Date.now();
            if (answer.status !== 200) {
              unanswered.push(`HTTP ${answer.status}`);
              return;
            }
            const decision = JSON.parse(answer.text) as { status?: string; decidedAt?: string };
            if (decision.status !== 'expired') {
              unanswered.push(`decision ${decision.status}`);
              return;
            }
            const decidedAt = Date.parse(decision.decidedAt ?? '');
            answered.push(arrived - decidedAt);
            late.push(decidedAt - expiresAtMs);
          } catch (error) {
            unanswered.push(error instanceof Error ? error.message : String(error));
          }
        }),
      );
      // Held: every request sent, then a moment for the bot to take them all in.
      while (written < polls) await sleep(50);
      await sleep(3000);
      const rssHeld = await bot.rss();
      const heapHeld = await bot.heap();
      const pending = polls - answered.length - unanswered.length;
      log(
        `gateway_latency: ${pending} polls held; bot RSS ${mib(rssBefore)} → ${mib(rssHeld)} MiB, heap in use ${mib(heapBefore)} → ${mib(heapHeld)} MiB; expiry in ${((expiresAtMs - Date.now()) / 1000).toFixed(1)} s …`,
      );
      if (Date.now() > expiresAtMs)
        throw new Error('gateway_latency: the runs expired before all the polls were open');
      await pollsDone;
      if (unanswered.length > 0)
        log(
          `gateway_latency: ${unanswered.length} polls unanswered, e.g. ${unanswered.slice(0, 3).join('; ')}`,
        );
      // Let the bot's own expiry work settle before it is stopped: its stop does not wait for an
      // expiry sweep already running (every 5 s), which then fails on closed connections.
      await sleep(6000);
      const p99 = answered.length > 0 ? percentile(answered, 99) : Number.NaN;
      const max = answered.length > 0 ? Math.max(...answered) : Number.NaN;
      log(
        `gateway_latency: expiry committed after expiresAt p50 ${ms(percentile(late, 50))}, p99 ${ms(percentile(late, 99))}`,
      );
      log(
        `gateway_latency: answered after decision p50 ${ms(percentile(answered, 50))}, p99 ${ms(p99)}, max ${ms(max)}`,
      );

      const rows: BenchRow[] = [];
      for (const p of [99, 50]) {
        const value = summary(subject, p);
        const base = summary(baseline, p);
        const isTarget = p === 99;
        rows.push({
          name: `gateway POST /v1/runs p${p} (${rate} plans/s open loop; baseline: bare node:http + signature check)`,
          unit: 'ms',
          value: twoDecimals(value.all),
          baseline: twoDecimals(base.all),
          ratio: value.all / base.all,
          spread: value.spread,
          target: isTarget ? 'p99 < 50 ms' : 'for context',
          pass: isTarget ? value.all < 50 && postFailures === 0 : true,
        });
      }
      const count = (name: string, value: number, target: string, pass: boolean, unit = '') => {
        rows.push({ name, unit, value, baseline: null, ratio: null, spread: 0, target, pass });
      };
      count('gateway POST /v1/runs not answered 202', postFailures, '0', postFailures === 0, 'requests');
      count(
        `long polls held: extra RSS (${polls.toLocaleString('en-US')} polls)`,
        twoDecimals((rssHeld - rssBefore) / 1e6),
        '< 100 MB',
        rssHeld - rssBefore < 100e6,
        'MB',
      );
      count(
        'long polls held: extra V8 heap in use (for context; garbage included)',
        twoDecimals((heapHeld - heapBefore) / 1e6),
        'for context',
        true,
        'MB',
      );
      count(
        `long polls answered after decision p99 (decidedAt → answer, ${polls.toLocaleString('en-US')} expiring at once)`,
        twoDecimals(p99),
        '< 1 s',
        p99 < 1000,
        'ms',
      );
      count(
        'long polls answered after decision max',
        twoDecimals(max),
        '< 1 s (every poll)',
        max < 1000,
        'ms',
      );
      count(
        'long polls: expiry committed after expiresAt p99 (for context)',
        late.length > 0 ? twoDecimals(percentile(late, 99)) : Number.NaN,
        'for context',
        true,
        'ms',
      );
      count('long polls unanswered', unanswered.length, '0', unanswered.length === 0, 'polls');
      return rows;
    } finally {
      for (const close of closers.reverse()) await close();
    }
  },
};

/**
 * Starts `count` operations at `rate`/s on schedule, not waiting for earlier ones; `due` is operation
 * i's scheduled time (t0 + i / rate). Operations that fall due while the loop sleeps start together.
 */
async function openLoop(
  count: number,
  rate: number,
  start: (index: number, due: number) => Promise<void>,
): Promise<void> {
  const interval = 1000 / rate;
  const begin = performance.now() + 20;
  const inflight: Promise<void>[] = [];
  for (let index = 0; index < count; index++) {
    const due = begin + index * interval;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    inflight.push(start(index, due));
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
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));
