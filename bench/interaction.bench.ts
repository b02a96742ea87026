import { App, LogLevel } from '@slack/bolt';
import { FREIGHT_AGENT, freightContext, freightSteps, freightSummary } from '../examples/freight/plans.ts';
import { AgentClient } from '../src/client/index.ts';
import { findFreePort, startRedisServer } from '../src/devtools/redis-server.ts';
import { createSlackEmulator, type EmulatedMessage, type SlackEmulator } from '../src/emulator/index.ts';
import { startCountersign } from '../src/main.ts';
import { benchConfig } from './bench-config.ts';
import { type Benchmark, type BenchRow, median, percentile } from './harness.ts';
import { benchSigning } from './signing.ts';
import { approveRequest } from './slack-clicks.ts';

/**
 * interaction: how fast the bot answers an `approve` click over HTTP (signed like Slack, through Bolt's
 * HTTP receiver), at a steady offered rate (100 clicks/s for 10 s; 2.5 s with `--quick`), each click on
 * a different pending run of the freight plan (so each one commits an approval, seals and delivers a
 * decision and updates the card). The baseline is a bare Bolt app on the same machine, with the same
 * signing secret and payloads, whose `approve` handler only acks — measured in the same run, in rounds
 * alternating with Countersign's so that load from elsewhere on the machine hits both alike.
 *
 * Countersign acks before doing the work, so ack latency is mostly signature check and routing, under
 * the load of the work the earlier clicks left behind. The second figure, click → card updated (the
 * emulator's chat.update for that run), is the time a person waits to see the outcome: for context.
 *
 * The load is open-loop: clicks leave on schedule whether or not earlier ones were answered, and latency
 * is measured from the scheduled time, so a stalled server cannot hide its queue. Everything runs on a
 * private redis-server and a private Slack emulator.
 */
export const interactionBenchmark: Benchmark = {
  name: 'interaction',
  async run({ quick, log }) {
    const rate = 100;
    const clicks = Math.round(rate * (quick ? 2.5 : 10));
    const rounds = quick ? 2 : 5;
    const warmup = quick ? 50 : 100;
    const secret = 'bench-freight-secret-0123456789';
    const signingSecret = 'bench-signing-secret-0123456789abcdef';

    // Everything started is stopped in reverse order, also when a later start fails.
    const closers: (() => Promise<unknown>)[] = [];
    try {
      const redis = await startRedisServer();
      closers.push(() => redis.stop());
      const slack = createSlackEmulator({ rateLimit: false });
      await slack.start();
      closers.push(() => slack.stop());
      const subjectPort = await findFreePort();
      const signing = benchSigning();
      const countersign = await startCountersign({
        config: benchConfig,
        secrets: { [FREIGHT_AGENT]: secret },
        signing,
        redisUrl: redis.url,
        prefix: 'bench',
        slack: { botToken: slack.botToken, signingSecret, apiUrl: slack.url },
        port: subjectPort,
        logLevel: 'error',
      });
      closers.push(() => countersign.stop());
      const baselinePort = await findFreePort();
      const baselineApp = new App({
        token: slack.botToken,
        signingSecret,
        logLevel: LogLevel.ERROR,
        clientOptions: { slackApiUrl: slack.url },
      });
      baselineApp.action('approve', async ({ ack }) => {
        await ack();
      });
      await baselineApp.start(baselinePort);
      closers.push(() => baselineApp.stop());
      const agent = new AgentClient({
        url: `http://127.0.0.1:${subjectPort}`,
        agent: FREIGHT_AGENT,
        secret,
        publicKeys: signing.publicKeys,
      });
      closers.push(() => agent.close());
      const cardUpdates = new CardUpdates(slack);
      closers.push(async () => cardUpdates.close());

      log(`interaction: submitting ${2 * warmup + clicks} freight plans and waiting for their cards …`);
      const cards = await pendingCards(slack, agent, 2 * warmup + clicks);
      const subjectUrl = `http://127.0.0.1:${subjectPort}/slack/events`;
      const baselineUrl = `http://127.0.0.1:${baselinePort}/slack/events`;
      const warmSubject = cards.slice(warmup, 2 * warmup);
      const measuredCards = cards.slice(2 * warmup);

      log(`interaction: warm-up (${warmup} clicks on each app) …`);
      await openLoop(baselineUrl, signingSecret, cards.slice(0, warmup), rate);
      await openLoop(subjectUrl, signingSecret, warmSubject, rate, cardUpdates);
      await cardUpdates.waitFor(warmSubject, 30_000);

      const perRound = Math.ceil(clicks / rounds);
      log(
        `interaction: ${clicks} approve clicks at ${rate}/s on each app, in ${rounds} alternating rounds …`,
      );
      const baseline: number[][] = [];
      const subject: number[][] = [];
      const updated: number[][] = [];
      for (let round = 0; round < rounds; round++) {
        const roundCards = measuredCards.slice(round * perRound, (round + 1) * perRound);
        baseline.push(await openLoop(baselineUrl, signingSecret, roundCards, rate));
        subject.push(await openLoop(subjectUrl, signingSecret, roundCards, rate, cardUpdates));
        updated.push(await cardUpdates.waitFor(roundCards, 60_000));
      }
      const notApproved = await countNotApproved(countersign.approvals, measuredCards);
      if (notApproved > 0) throw new Error(`interaction: ${notApproved} clicked runs are not approved`);

      const ack = latencySummary(subject);
      const base = latencySummary(baseline);
      const card = latencySummary(updated);
      const ratio = ack.p99 / base.p99;
      log(
        `interaction: ack p50 ${ms(ack.p50)} p99 ${ms(ack.p99)} · baseline p50 ${ms(base.p50)} p99 ${ms(base.p99)} · p99 ratio ${ratio.toFixed(2)} · card updated p50 ${ms(card.p50)} p99 ${ms(card.p99)}`,
      );
      const row = (
        name: string,
        value: number,
        baselineValue: number | null,
        spread: number,
        target: string,
        pass: boolean,
      ): BenchRow => ({
        name,
        unit: 'ms',
        value: twoDecimals(value),
        baseline: baselineValue === null ? null : twoDecimals(baselineValue),
        ratio: baselineValue === null ? null : value / baselineValue,
        spread,
        target,
        pass,
      });
      return [
        row(
          `interaction ack p99 (approve at ${rate}/s)`,
          ack.p99,
          base.p99,
          ack.p99Spread,
          '< 100 ms and < 3 × baseline',
          ack.p99 < 100 && ratio < 3,
        ),
        row(
          `interaction ack p50 (approve at ${rate}/s)`,
          ack.p50,
          base.p50,
          ack.p50Spread,
          'for context',
          true,
        ),
        row('interaction click → card updated p50', card.p50, null, card.p50Spread, 'informational', true),
        row('interaction click → card updated p99', card.p99, null, card.p99Spread, 'informational', true),
      ];
    } finally {
      for (const close of closers.reverse()) await close();
    }
  },
};

/** Submits `count` freight plans through the agent client and resolves with their cards, in order. */
async function pendingCards(
  slack: SlackEmulator,
  agent: AgentClient,
  count: number,
): Promise<EmulatedMessage[]> {
  const plan = {
    summary: freightSummary,
    context: freightContext,
    steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
    expiresIn: '2h',
  };
  const runIds: string[] = [];
  for (let i = 0; i < count; i += 100) {
    const batch = Array.from({ length: Math.min(100, count - i) }, () => agent.submit(plan));
    runIds.push(...(await Promise.all(batch)).map((submitted) => submitted.runId));
  }
  const deadline = performance.now() + 120_000;
  for (;;) {
    const byRun = new Map(
      slack.state.messages('C0OPS').map((message) => [message.metadata?.event_payload.run_id, message]),
    );
    const cards = runIds.flatMap((runId) => byRun.get(runId) ?? []);
    if (cards.length === count) return cards;
    if (performance.now() > deadline)
      throw new Error(`interaction: only ${cards.length}/${count} cards posted`);
    await sleep(50);
  }
}

/**
 * Sends one approve click per card at `rate`/s, open-loop (on schedule, never waiting for answers), and
 * resolves with each click's latency: ms from its scheduled time to the end of its HTTP answer. Any
 * answer but 200 fails the benchmark. With `updates`, records each click's scheduled time so the card
 * update can be timed from it.
 */
async function openLoop(
  url: string,
  signingSecret: string,
  cards: readonly EmulatedMessage[],
  rate: number,
  updates?: CardUpdates,
): Promise<number[]> {
  const requests = cards.map((card) => approveRequest(card, signingSecret));
  const latencies: number[] = [];
  const failures: string[] = [];
  const interval = 1000 / rate;
  const start = performance.now() + 20;
  const inflight: Promise<void>[] = [];
  for (const [index, request] of requests.entries()) {
    const due = start + index * interval;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    updates?.expect(runIdOf(cards[index]), due);
    inflight.push(
      fetch(url, { method: 'POST', headers: request.headers, body: request.body }).then(
        async (response) => {
          await response.arrayBuffer();
          latencies.push(performance.now() - due);
          if (response.status !== 200) failures.push(`HTTP ${response.status}`);
        },
        (error: unknown) => {
          failures.push(error instanceof Error ? error.message : String(error));
        },
      ),
    );
  }
  await Promise.all(inflight);
  if (failures.length > 0) throw new Error(`interaction: ${url} answered ${failures.slice(0, 5).join(', ')}`);
  return latencies;
}

/** Times from a click's scheduled time to the first chat.update of that run's card. */
class CardUpdates {
  private readonly due = new Map<string, number>();
  private readonly elapsed = new Map<string, number>();
  private readonly unsubscribe: () => void;

  constructor(slack: SlackEmulator) {
    this.unsubscribe = slack.state.subscribe((event) => {
      if (event.type !== 'message_updated') return;
      const runId = event.message.metadata?.event_payload.run_id;
      if (typeof runId !== 'string' || this.elapsed.has(runId)) return;
      const due = this.due.get(runId);
      if (due !== undefined) this.elapsed.set(runId, performance.now() - due);
    });
  }

  expect(runId: string, due: number): void {
    this.due.set(runId, due);
  }

  /** Resolves with the times of `cards`' updates once all arrived. */
  async waitFor(cards: readonly EmulatedMessage[], timeoutMs: number): Promise<number[]> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const times = cards.flatMap((card) => this.elapsed.get(runIdOf(card)) ?? []);
      if (times.length === cards.length) return times;
      if (performance.now() > deadline)
        throw new Error(`interaction: only ${times.length}/${cards.length} cards updated`);
      await sleep(20);
    }
  }

  close(): void {
    this.unsubscribe();
  }
}

function runIdOf(card: EmulatedMessage | undefined): string {
  const runId = card?.metadata?.event_payload.run_id;
  if (typeof runId !== 'string') throw new Error('interaction: a card without its run id');
  return runId;
}

async function countNotApproved(
  approvals: { getRun(runId: string): Promise<{ status: string } | undefined> },
  cards: readonly EmulatedMessage[],
): Promise<number> {
  const runs = await Promise.all(cards.map((card) => approvals.getRun(runIdOf(card))));
  return runs.filter((run) => run?.status !== 'approved').length;
}

/**
 * p50 and p99 over all rounds, and their spread over the rounds ((max − min) / median of the per-round
 * figures), so a one-off stall shows as spread rather than hiding in one number.
 */
function latencySummary(rounds: readonly (readonly number[])[]) {
  const all = rounds.flat();
  const spreadOf = (p: number) => {
    const values = rounds.map((latencies) => percentile(latencies, p));
    const mid = median(values);
    return mid === 0 ? 0 : (Math.max(...values) - Math.min(...values)) / mid;
  };
  return {
    p50: percentile(all, 50),
    p99: percentile(all, 99),
    p50Spread: spreadOf(50),
    p99Spread: spreadOf(99),
  };
}

const twoDecimals = (value: number) => Math.round(value * 100) / 100;
const ms = (value: number) => `${value.toFixed(1)} ms`;
const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));
