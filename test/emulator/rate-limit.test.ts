import { WebAPIRateLimitedError, WebClientEvent } from '@slack/web-api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSlackEmulator, mintTriggerId, SLACK_RATE_LIMITS } from '../../src/emulator/index.ts';
import { emulatorClient } from '../helpers/slack-emulator.ts';

describe('Slack emulator rate limiting of chat.postMessage', () => {
  // Two at once, then one per second per channel.
  const slack = createSlackEmulator({
    rateLimit: { perSecond: 1, burst: 2 },
    channels: [
      { id: 'C0OPS', name: 'ops-approvals' },
      { id: 'C0FIN', name: 'finance-approvals' },
    ],
  });
  beforeAll(() => slack.start());
  afterEach(() => slack.reset());
  afterAll(() => slack.stop());

  const post = (channel: string) =>
    fetch(`${slack.url}chat.postMessage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${slack.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel, text: 'hello' }),
    });

  it('answers HTTP 429 with Retry-After once the burst is spent, per channel', async () => {
    expect((await post('C0OPS')).status).toBe(200);
    expect((await post('C0OPS')).status).toBe(200);

    const limited = await post('C0OPS');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(await limited.json()).toEqual({ ok: false, error: 'ratelimited' });

    // Other channels have their own budget; the refused message was not posted.
    expect((await post('C0FIN')).status).toBe(200);
    expect(slack.state.messages('C0OPS')).toHaveLength(2);
    expect(slack.calls.map((call) => call.status)).toEqual([200, 200, 429, 200]);
  });

  it('lets every call through while limits are switched off, then limits again from a full burst', async () => {
    slack.setRateLimited(false);
    for (let i = 0; i < 20; i++) expect((await post('C0OPS')).status).toBe(200);
    slack.setRateLimited(true);
    expect((await post('C0OPS')).status).toBe(200);
    expect((await post('C0OPS')).status).toBe(200);
    expect((await post('C0OPS')).status).toBe(429);
    expect(slack.state.messages('C0OPS')).toHaveLength(22);
  });

  it("is absorbed by WebClient's retry: every message is posted, after waiting", async () => {
    const client = emulatorClient(slack, {
      rejectRateLimitedCalls: false,
      retryConfig: { retries: 5, minTimeout: 0, maxTimeout: 10 },
    });
    const waits: number[] = [];
    client.on(WebClientEvent.RATE_LIMITED, (seconds: number) => waits.push(seconds));

    const started = Date.now();
    for (let i = 0; i < 3; i++) await client.chat.postMessage({ channel: 'C0OPS', text: `update ${i}` });

    expect(slack.state.messages('C0OPS').map((message) => message.text)).toEqual([
      'update 0',
      'update 1',
      'update 2',
    ]);
    expect(waits).toEqual([1]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('surfaces as WebAPIRateLimitedError when the client rejects rate-limited calls', async () => {
    const client = emulatorClient(slack, { rejectRateLimitedCalls: true });
    await client.chat.postMessage({ channel: 'C0OPS', text: '1' });
    await client.chat.postMessage({ channel: 'C0OPS', text: '2' });
    await expect(client.chat.postMessage({ channel: 'C0OPS', text: '3' })).rejects.toSatisfy(
      (error) => error instanceof WebAPIRateLimitedError && error.retryAfter === 1,
    );
  });

  it('can be turned off', async () => {
    const unlimited = createSlackEmulator({ rateLimit: false });
    await unlimited.start();
    try {
      const client = emulatorClient(unlimited);
      for (let i = 0; i < 20; i++) await client.chat.postMessage({ channel: 'C0OPS', text: `m${i}` });
      expect(unlimited.state.messages('C0OPS')).toHaveLength(20);
    } finally {
      await unlimited.stop();
    }
  });
});

const Posted = z.object({ ts: z.string() });

describe('Slack emulator rate tiers (rateLimits: SLACK_RATE_LIMITS)', () => {
  let nowMs = 1_775_462_400_000;
  const slack = createSlackEmulator({
    rateLimit: false,
    rateLimits: SLACK_RATE_LIMITS,
    now: () => nowMs,
    channels: [
      { id: 'C0OPS', name: 'ops-approvals' },
      { id: 'C0FIN', name: 'finance-approvals' },
    ],
  });
  beforeAll(() => slack.start());
  afterEach(() => slack.reset());
  afterAll(() => slack.stop());

  const call = (method: string, body: Record<string, unknown>) =>
    fetch(`${slack.url}${method}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${slack.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('limits chat.update per workspace at Tier 3: a burst of 10, then about 50 a minute', async () => {
    const ops = Posted.parse(
      await (await call('chat.postMessage', { channel: 'C0OPS', text: 'card' })).json(),
    );
    const fin = Posted.parse(
      await (await call('chat.postMessage', { channel: 'C0FIN', text: 'card' })).json(),
    );
    const update = (channel: string, ts: string, text: string) => call('chat.update', { channel, ts, text });

    for (let i = 0; i < 5; i++) expect((await update('C0OPS', ops.ts, `ops ${i}`)).status).toBe(200);
    // Another channel spends the same budget: Slack counts Tier 3 per workspace, not per channel.
    for (let i = 0; i < 5; i++) expect((await update('C0FIN', fin.ts, `fin ${i}`)).status).toBe(200);

    const limited = await update('C0OPS', ops.ts, 'one too many');
    expect(limited.status).toBe(429);
    // One call more takes 60/50 = 1.2 s; Retry-After is whole seconds.
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(await limited.json()).toEqual({ ok: false, error: 'ratelimited' });
    expect(slack.state.message('C0OPS', ops.ts)?.text).toBe('ops 4');

    nowMs += 1_200;
    expect((await update('C0OPS', ops.ts, 'after the wait')).status).toBe(200);
    expect((await update('C0OPS', ops.ts, 'and again')).status).toBe(429);
  });

  it('limits chat.postMessage per channel, and leaves other methods their own budgets', async () => {
    for (let i = 0; i < 5; i++) {
      expect((await call('chat.postMessage', { channel: 'C0OPS', text: `${i}` })).status).toBe(200);
    }
    expect((await call('chat.postMessage', { channel: 'C0OPS', text: 'sixth' })).status).toBe(429);
    expect((await call('chat.postMessage', { channel: 'C0FIN', text: 'elsewhere' })).status).toBe(200);
    expect((await call('conversations.history', { channel: 'C0OPS' })).status).toBe(200);
    expect((await call('auth.test', {})).status).toBe(200);
  });

  it('limits views.open at Tier 4: a burst of 20', async () => {
    const open = () =>
      call('views.open', {
        trigger_id: mintTriggerId('U0OP1', { nowMs }),
        view: { type: 'modal', title: { type: 'plain_text', text: 'Edit plan' }, blocks: [] },
      });
    for (let i = 0; i < 20; i++) expect((await open()).status).toBe(200);
    const limited = await open();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
  });
});

describe('Slack emulator rate limits, opt-in', () => {
  it('leaves every method but chat.postMessage unlimited by default', async () => {
    const slack = createSlackEmulator({ rateLimit: false });
    await slack.start();
    try {
      const client = emulatorClient(slack);
      const { ts } = await client.chat.postMessage({ channel: 'C0OPS', text: 'card' });
      for (let i = 0; i < 60; i++)
        await client.chat.update({ channel: 'C0OPS', ts: ts ?? '', text: `v${i}` });
      expect(slack.state.messages('C0OPS')[0]?.text).toBe('v59');
    } finally {
      await slack.stop();
    }
  });

  it('lets a method of the preset be turned off with false', async () => {
    const slack = createSlackEmulator({ rateLimits: { ...SLACK_RATE_LIMITS, 'chat.update': false } });
    await slack.start();
    try {
      const client = emulatorClient(slack);
      const { ts } = await client.chat.postMessage({ channel: 'C0OPS', text: 'card' });
      for (let i = 0; i < 30; i++)
        await client.chat.update({ channel: 'C0OPS', ts: ts ?? '', text: `v${i}` });
      expect(slack.calls.every((call) => call.status === 200)).toBe(true);
    } finally {
      await slack.stop();
    }
  });
});
