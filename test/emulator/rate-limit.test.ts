import { WebAPIRateLimitedError, WebClientEvent } from '@slack/web-api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSlackEmulator } from '../../src/emulator/index.ts';
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
