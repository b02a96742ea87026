/**
 * `/healthz` answers within 1 s with 200, or 503 and a short reason: Redis is pinged on a connection
 * without an offline queue (an outage is seen at once, not after a queue of reconnects), Slack's
 * `auth.test` is checked at start and kept. `/metrics` can be kept behind a bearer token. Redis here is
 * a private server this test stops and starts again on the same port.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FREIGHT_AGENT } from '../../examples/freight/plans.ts';
import { findFreePort, type RedisServer, startRedisServer } from '../../src/devtools/redis-server.ts';
import { createSlackEmulator, DEFAULT_BOT_TOKEN, type SlackEmulator } from '../../src/emulator/index.ts';
import { type Countersign, startCountersign } from '../../src/main.ts';
import { botStack, SIGNING_SECRET } from '../support/bot-stack.ts';
import { freightConfig } from '../support/freight.ts';
import { submitFreight } from '../support/freight-edits.ts';
import { eventually, FREIGHT_SECRET, testSigning } from '../support/stack.ts';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
let slack: SlackEmulator;
let redis: RedisServer;
const started: Countersign[] = [];

async function start(options: { botToken?: string } = {}) {
  const port = await findFreePort();
  const countersign = await startCountersign({
    config: freightConfig,
    secrets: { [FREIGHT_AGENT]: FREIGHT_SECRET },
    signing: testSigning,
    redisUrl: redis.url,
    prefix: 'healthz',
    slack: {
      botToken: options.botToken ?? DEFAULT_BOT_TOKEN,
      signingSecret: SIGNING_SECRET,
      apiUrl: slack.url,
    },
    port,
    logLevel: 'error',
    metricsToken: METRICS_TOKEN,
  });
  started.push(countersign);
  return `http://127.0.0.1:${port}`;
}

/** GET /healthz, given at most 1 s to answer. */
async function healthz(base: string) {
  const response = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(1_000) });
  return {
    status: response.status,
    body: (await response.json()) as { ok: boolean; redis: string; slack: string },
  };
}

beforeAll(async () => {
  slack = createSlackEmulator({ rateLimit: false });
  await slack.start();
  redis = await startRedisServer();
});
afterAll(async () => {
  for (const countersign of started) await countersign.stop();
  await redis.stop();
  await slack.stop();
});

describe('/healthz', () => {
  let base: string;
  beforeAll(async () => {
    base = await start();
  });

  it('is 200 with Redis and Slack both fine', async () => {
    expect(await healthz(base)).toEqual({ status: 200, body: { ok: true, redis: 'ok', slack: 'ok' } });
  });

  it('is 503 within 1 s while Redis is down, naming Redis, and 200 again once it is back', async () => {
    const port = redis.port;
    await redis.stop();
    const down = await healthz(base);
    expect(down.status).toBe(503);
    expect(down.body.ok).toBe(false);
    expect(down.body.redis).toMatch(/^(unreachable|no PONG)/);
    expect(down.body.slack).toBe('ok');
    // A second probe during the outage is as quick: nothing piles up behind the reconnect.
    expect((await healthz(base)).status).toBe(503);
    redis = await startRedisServer({ port });
    await eventually(
      async () => ((await healthz(base)).status === 200 ? true : undefined),
      15_000,
      '/healthz to be 200 again',
    );
    expect((await healthz(base)).body).toEqual({ ok: true, redis: 'ok', slack: 'ok' });
  });

  it('is 503 naming Slack when the bot token is refused', async () => {
    const refused = await start({ botToken: 'xoxb-not-a-token-slack-knows' });
    expect(await healthz(refused)).toEqual({
      status: 503,
      body: { ok: false, redis: 'ok', slack: 'auth.test failed: invalid_auth' },
    });
  });
});

describe('Slack not answering auth.test at start', () => {
  it('serves clicks meanwhile, /healthz says so, and turns 200 once Slack answers', async () => {
    const stack = await botStack('healthz-auth', {
      beforeStart: (emulator) =>
        emulator.faults.inject({ method: 'auth.test', kind: 'hang', times: Infinity }),
    });
    try {
      const probe = async () => {
        const response = await fetch(`${stack.baseUrl}/healthz`, { signal: AbortSignal.timeout(1_000) });
        return { status: response.status, body: (await response.json()) as { slack: string } };
      };
      expect(await probe()).toMatchObject({ status: 503, body: { slack: 'checking' } });
      const runId = await submitFreight(stack);
      await stack.click('U0OP1', await stack.card(runId), 'approve');
      expect((await stack.client.waitForDecision(runId, { timeoutMs: 10_000 })).status).toBe('approved');
      await eventually(
        async () =>
          (await probe()).body.slack === 'auth.test failed: no answer within 5 s' ? true : undefined,
        10_000,
        'the check to give up',
      );
      stack.slack.faults.clear();
      stack.slack.faults.release();
      await eventually(
        async () => ((await probe()).status === 200 ? true : undefined),
        15_000,
        '/healthz 200',
      );
    } finally {
      await stack.stop();
    }
  });
});

describe('/metrics with METRICS_TOKEN', () => {
  it('answers 401 without the bearer token or with a wrong one, and the metrics with it', async () => {
    const base = await start();
    const bare = await fetch(`${base}/metrics`);
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toBe('Bearer');
    expect(await bare.text()).toContain('Authorization: Bearer <METRICS_TOKEN>');
    const wrong = await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    const right = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(right.status).toBe(200);
    expect(await right.text()).toContain('countersign_');
  });
});
