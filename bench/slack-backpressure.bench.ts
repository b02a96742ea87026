import { FREIGHT_AGENT, freightContext, freightSteps, freightSummary } from '../examples/freight/plans.ts';
import { AgentClient, type SubmitInput } from '../src/client/index.ts';
import { findFreePort, startRedisServer } from '../src/devtools/redis-server.ts';
import { createSlackEmulator, type EmulatedMessage, SLACK_RATE_LIMITS } from '../src/emulator/index.ts';
import { BENCH_AGENT_SECRET, BENCH_SIGNING_SECRET } from './bench-config.ts';
import { startBotProcess } from './bot-child.ts';
import { type Benchmark, type BenchRow, percentile, pool } from './harness.ts';
import { approveRequest, buttonCount } from './slack-clicks.ts';

/**
 * slack_backpressure (issue 14): the Slack emulator at Slack's published limits (`SLACK_RATE_LIMITS`:
 * chat.postMessage 1/s per channel with a burst of 5, chat.update 50/min with a burst of 10), and 1,000
 * runs expiring at the same instant among 10,000 pending (100 among 1,000 with `--quick`).
 *
 * Seeding is real: every run is submitted by the agent client over HTTP and its card posted by the bot,
 * with the emulator's limits switched off (`setRateLimited(false)`); once every card is posted they are
 * switched on, from full buckets, and the expiring runs' `expiresAt` (one whole second, set after the
 * other runs were seeded) arrives. The bot runs in a child process (bench/bot-process.ts, the freight
 * config without escalation, so no escalation storm joins the expiry storm in a long run); the
 * emulator, the agent's decision feed (`client.onDecision`, long polls) and the clicks run here.
 *
 * Measured from `expiresAt`: each `expired` decision's arrival at the agent; each expiring card's first
 * update that shows "expired" and no button; at the end, cards of decided runs still showing buttons.
 * Meanwhile, from `expiresAt`, signed approve clicks on other pending runs at 5/s for 6 s (open loop:
 * each timed from its scheduled send to the end of the HTTP answer). Their cards' updates share
 * chat.update's quota with the expired cards'.
 */
export const slackBackpressureBenchmark: Benchmark = {
  name: 'slack_backpressure',
  async run({ quick, log }) {
    const pending = quick ? 1_000 : 10_000;
    const expiring = quick ? 100 : 1_000;
    const clickRate = 5;
    const clickCount = 30;
    const chatUpdatePerMinute = 50;
    const budgetMs = (expiring / chatUpdatePerMinute) * 60_000 + 60_000;
    const inFlight = 32;
    const closers: (() => Promise<unknown>)[] = [];
    try {
      const redis = await startRedisServer();
      closers.push(() => redis.stop());
      const slack = createSlackEmulator({ rateLimits: SLACK_RATE_LIMITS, logError: () => {} });
      slack.setRateLimited(false);
      await slack.start();
      closers.push(() => slack.stop());
      const port = await findFreePort();
      const bot = await startBotProcess({
        AGENT_SECRET: BENCH_AGENT_SECRET,
        REDIS_URL: redis.url,
        CS_PREFIX: 'bench',
        SLACK_API_URL: slack.url,
        SLACK_SIGNING_SECRET: BENCH_SIGNING_SECRET,
        PORT: String(port),
        BENCH_CONFIG: 'freight-without-escalation',
      });
      closers.push(() => bot.stop());
      const agent = new AgentClient({
        url: `http://127.0.0.1:${port}`,
        agent: FREIGHT_AGENT,
        secret: BENCH_AGENT_SECRET,
      });
      closers.push(() => agent.close());
      const eventsUrl = `http://127.0.0.1:${port}/slack/events`;

      // What Slack shows, as it changes: cards by run, and when each watched card first converged.
      const cards = new Map<string, EmulatedMessage>();
      const expiringRuns = new Set<string>();
      const clickedRuns = new Set<string>();
      const converged = new Map<string, number>();
      const unsubscribe = slack.state.subscribe((event) => {
        if (event.type !== 'message_posted' && event.type !== 'message_updated') return;
        const runId = event.message.metadata?.event_payload.run_id;
        if (typeof runId !== 'string' || event.message.thread_ts !== undefined) return;
        cards.set(runId, event.message);
        if (event.type !== 'message_updated' || converged.has(runId)) return;
        const want = expiringRuns.has(runId) ? 'expired' : clickedRuns.has(runId) ? 'approved' : undefined;
        if (want !== undefined && shows(event.message, want)) converged.set(runId, Date.now());
      });
      closers.push(async () => unsubscribe());
      const expiredAt = new Map<string, number>();
      const wrongStatus: string[] = [];
      const stopFeed = agent.onDecision((decision) => {
        if (!expiringRuns.has(decision.runId) || expiredAt.has(decision.runId)) return;
        if (decision.status !== 'expired') wrongStatus.push(`${decision.runId} was ${decision.status}`);
        expiredAt.set(decision.runId, Date.now());
      });
      closers.push(stopFeed);

      const plan = (expiry: Pick<SubmitInput, 'expiresIn' | 'expiresAt'>): SubmitInput => ({
        summary: freightSummary,
        context: freightContext,
        steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
        ...expiry,
      });
      const submit = async (count: number, input: SubmitInput): Promise<string[]> => {
        const runIds: string[] = [];
        await pool(count, inFlight, async () => {
          const { runId, status } = await agent.submit(input);
          if (status !== 'pending') throw new Error(`slack_backpressure: run ${runId} is ${status}`);
          runIds.push(runId);
        });
        return runIds;
      };

      log(`slack_backpressure: seeding ${pending - expiring} pending runs (2 h) with Slack's limits off …`);
      const seedStart = Date.now();
      const others = await submit(pending - expiring, plan({ expiresIn: '2h' }));
      await until(
        () => cards.size >= others.length,
        600_000,
        () => `${cards.size}/${others.length} cards posted`,
      );
      const perPlanMs = (Date.now() - seedStart) / others.length;
      // Time to seed the expiring runs and post their cards, twice over, and a margin.
      const expiresAt = Math.ceil((Date.now() + 2 * perPlanMs * expiring + 10_000) / 1000) * 1000;
      log(
        `slack_backpressure: seeded and posted at ${Math.round(1000 / perPlanMs)} runs/s; ${expiring} runs expiring at ${new Date(expiresAt).toISOString()} …`,
      );
      for (const runId of await submit(expiring, plan({ expiresAt: new Date(expiresAt) })))
        expiringRuns.add(runId);
      await until(
        () => cards.size >= pending,
        300_000,
        () => `${cards.size}/${pending} cards posted`,
      );
      if (Date.now() > expiresAt - 1000) {
        throw new Error(
          'slack_backpressure: seeding took longer than planned, so the runs expired before Slack’s limits were switched on; run it again on a quieter machine',
        );
      }
      slack.setRateLimited(true);
      const clickCards = others.slice(0, clickCount).map((runId) => {
        const card = cards.get(runId);
        if (card === undefined) throw new Error(`slack_backpressure: no card for run ${runId}`);
        clickedRuns.add(runId);
        return card;
      });
      log(
        `slack_backpressure: limits on; waiting for the expiry, then ${clickCount} approve clicks at ${clickRate}/s on other runs …`,
      );
      await sleep(expiresAt - 500 - Date.now());
      // The bot's CPU from just before expiresAt until the last expired decision is out (the clicks
      // of that time included): the work an expiry costs, which decides how fast a storm clears.
      // BENCH_STORM_PROFILE=<file.cpuprofile>: the bot's CPU profile of the same window (a diagnosis;
      // the profiler's own cost is in that run's figures).
      const profilePath = process.env.BENCH_STORM_PROFILE;
      const stopProfile = profilePath === undefined ? undefined : await bot.profile();
      const cpuBefore = await bot.cpu();
      let stormCpuMs: number | undefined;
      void until(
        () => expiredAt.size >= expiring,
        60_000,
        () => '',
      )
        .then(async () => {
          stormCpuMs = (await bot.cpu()) - cpuBefore;
          if (stopProfile !== undefined && profilePath !== undefined) await stopProfile(profilePath);
        })
        .catch(() => {});
      await sleep(expiresAt - Date.now());

      const acks = await clicks(eventsUrl, clickCards, clickRate, expiresAt);
      log(
        `slack_backpressure: approve acks (ms, in click order): ${acks.map((ack) => Math.round(ack)).join(' ')}`,
      );
      await until(
        () => expiredAt.size >= expiring,
        30_000,
        () => `${expiredAt.size}/${expiring} expired decisions at the agent`,
      ).catch(() => {});
      const early = [...expiredAt.values()].map((at) => at - expiresAt);
      log(
        `slack_backpressure: ${expiredAt.size}/${expiring} expired decisions at the agent, p50 ${Math.round(percentile(early, 50))} ms, p99 ${Math.round(percentile(early, 99))} ms after expiresAt; bot CPU ${stormCpuMs === undefined ? '?' : (stormCpuMs / expiring).toFixed(2)} ms per expiry; waiting for the cards …`,
      );
      // BENCH_STORM_ONLY=1: stop here, after the storm's decisions and clicks (a diagnosis while
      // working on the storm; the convergence rows, and so a benchmark result, need the full run).
      if (process.env.BENCH_STORM_ONLY === '1') return [];
      const deadline = expiresAt + budgetMs + 120_000;
      let lastLog = Date.now();
      const watched = () => [...expiringRuns, ...clickedRuns];
      for (;;) {
        const received = expiredAt.size;
        const done = watched().filter((runId) => converged.has(runId)).length;
        if (received === expiring && done === expiringRuns.size + clickedRuns.size) break;
        if (Date.now() > deadline) break;
        if (Date.now() - lastLog > 30_000) {
          lastLog = Date.now();
          const updates = slack.calls.filter((call) => call.method === 'chat.update');
          log(
            `slack_backpressure: +${Math.round((Date.now() - expiresAt) / 1000)} s: ${received}/${expiring} expired decisions at the agent, ${done}/${expiringRuns.size + clickedRuns.size} cards converged; chat.update ${updates.filter((c) => c.status === 200).length} done, ${updates.filter((c) => c.status === 429).length} answered 429`,
          );
        }
        await sleep(200);
      }
      if (wrongStatus.length > 0)
        throw new Error(`slack_backpressure: ${wrongStatus.slice(0, 3).join('; ')}`);

      const decisionLatencies = [...expiredAt.values()].map((at) => at - expiresAt);
      const expiredConverged = [...expiringRuns].flatMap((runId) => converged.get(runId) ?? []);
      const allConverged = expiredConverged.length === expiring;
      const lastCardMs = allConverged ? Math.max(...expiredConverged) - expiresAt : Date.now() - expiresAt;
      const stale = watched().filter((runId) => {
        const card = cards.get(runId);
        return card === undefined || buttonCount(card.blocks) > 0;
      }).length;
      const updates = slack.calls.filter((call) => call.method === 'chat.update');
      const limited = updates.filter((call) => call.status === 429).length;
      const ackP99 = percentile(acks, 99);
      const p99 = percentile(decisionLatencies, 99);
      const of = `${expiring.toLocaleString('en-US')} of ${pending.toLocaleString('en-US')}`;
      const row = (name: string, unit: string, value: number, target: string, pass: boolean): BenchRow => ({
        name,
        unit,
        value: Math.round(value * 100) / 100,
        baseline: null,
        ratio: null,
        spread: 0,
        target,
        pass,
      });
      return [
        row(
          `slack_backpressure expiresAt → expired decision at the agent p99 (${expiredAt.size}/${expiring} received; ${of} expiring)`,
          'ms',
          p99,
          '< 2,000 ms, every one',
          expiredAt.size === expiring && p99 < 2000,
        ),
        row(
          'slack_backpressure expiresAt → expired decision at the agent p50',
          'ms',
          percentile(decisionLatencies, 50),
          'for context',
          true,
        ),
        row(
          `slack_backpressure expiresAt → last expired card shown without buttons (${expiredConverged.length}/${expiring})`,
          's',
          lastCardMs / 1000,
          `≤ ${budgetMs / 1000} s (${expiring} ÷ 50/min + 1 min)`,
          allConverged && lastCardMs <= budgetMs,
        ),
        row(
          `slack_backpressure cards of decided runs still showing buttons at the end (of ${watched().length})`,
          'cards',
          stale,
          '0',
          stale === 0,
        ),
        row(
          `slack_backpressure interaction ack p99 (${acks.length} approve clicks at ${clickRate}/s from expiresAt)`,
          'ms',
          ackP99,
          '< 100 ms',
          ackP99 < 100,
        ),
        row('slack_backpressure interaction ack p50', 'ms', percentile(acks, 50), 'for context', true),
        row(
          'slack_backpressure bot CPU per expiry (expiresAt → last expired decision, clicks of that time included)',
          'ms',
          stormCpuMs === undefined ? Number.NaN : stormCpuMs / expiring,
          'for context',
          true,
        ),
        row(
          `slack_backpressure chat.update calls answered 429 (of ${updates.length})`,
          'calls',
          limited,
          'for context',
          true,
        ),
      ];
    } finally {
      for (const close of closers.reverse()) await close();
    }
  },
};

/** Whether a card shows `status` in its text and offers no button. */
function shows(card: EmulatedMessage, status: string): boolean {
  return card.text.includes(status) && buttonCount(card.blocks) === 0;
}

/**
 * One signed approve click per card at `rate`/s from `start` (epoch ms), open loop; resolves with each
 * click's ms from its scheduled send to the end of its answer. Any answer but 200 fails the benchmark.
 */
async function clicks(
  url: string,
  cards: readonly EmulatedMessage[],
  rate: number,
  start: number,
): Promise<number[]> {
  const latencies: number[] = new Array(cards.length).fill(0);
  const failures: string[] = [];
  const inflight: Promise<void>[] = [];
  for (const [index, card] of cards.entries()) {
    const due = start + (index * 1000) / rate;
    await sleep(due - Date.now());
    const request = approveRequest(card, BENCH_SIGNING_SECRET);
    inflight.push(
      fetch(url, { method: 'POST', headers: request.headers, body: request.body }).then(
        async (response) => {
          await response.arrayBuffer();
          latencies[index] = Date.now() - due;
          if (response.status !== 200) failures.push(`HTTP ${response.status}`);
        },
        (error: unknown) => {
          failures.push(error instanceof Error ? error.message : String(error));
        },
      ),
    );
  }
  await Promise.all(inflight);
  if (failures.length > 0)
    throw new Error(`slack_backpressure: approve clicks answered ${failures.slice(0, 5).join(', ')}`);
  return latencies;
}

async function until(done: () => boolean, ms: number, progress: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline)
      throw new Error(`slack_backpressure: gave up after ${ms / 1000} s: ${progress()}`);
    await sleep(50);
  }
}

const sleep = (milliseconds: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, milliseconds)));
