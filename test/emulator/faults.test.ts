import {
  WebAPIHTTPError,
  WebAPIRateLimitedError,
  WebAPIRequestError,
  type WebClient,
  WebClientEvent,
} from '@slack/web-api';
import { describe, expect, it, vi } from 'vitest';
import { createSlackEmulator, mintTriggerId } from '../../src/emulator/index.ts';
import { emulatorClient, useSlackEmulator } from '../helpers/slack-emulator.ts';

/** A client that retries at once, as @slack/web-api does by default but without its backoff. */
const retrying = { retryConfig: { retries: 2, minTimeout: 0, maxTimeout: 0 } };

const modal = (title: string) => ({
  type: 'modal' as const,
  title: { type: 'plain_text' as const, text: title },
  blocks: [],
});

async function failure(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (error) {
    return error;
  }
  throw new Error('expected the Slack call to fail, but it succeeded');
}

describe('Slack emulator fault switch', () => {
  const env = useSlackEmulator();
  const texts = () => env.slack.state.messages('C0OPS').map((message) => message.text);
  const post = (client: WebClient, text: string) => client.chat.postMessage({ channel: 'C0OPS', text });

  describe('error-after: applied, then answered 5xx', () => {
    it("posts twice when the client's automatic retry sends the message again", async () => {
      env.slack.faults.inject({ method: 'chat.postMessage', kind: 'error-after', status: 503 });
      const answer = await post(emulatorClient(env.slack, retrying), 'Plan awaiting approval');

      expect(answer.ok).toBe(true);
      expect(texts()).toEqual(['Plan awaiting approval', 'Plan awaiting approval']);
      expect(env.slack.calls.map((call) => [call.status, call.fault])).toEqual([
        [503, 'error-after'],
        [200, undefined],
      ]);
    });

    it('posts once and throws WebAPIHTTPError when the client does not retry', async () => {
      env.slack.faults.inject({ method: 'chat.postMessage', kind: 'error-after' });
      const error = await failure(post(env.client, 'Plan awaiting approval'));

      expect(error).toBeInstanceOf(WebAPIHTTPError);
      expect(error).toMatchObject({ statusCode: 500 });
      expect(texts()).toEqual(['Plan awaiting approval']);
    });

    it('opens the modal, and the retry is refused exchanged_trigger_id', async () => {
      env.slack.faults.inject({ method: 'views.open', kind: 'error-after', status: 502 });
      const client = emulatorClient(env.slack, retrying);
      const error = await failure(
        client.views.open({ trigger_id: mintTriggerId('U0OP1'), view: modal('Edit') }),
      );

      expect(error).toMatchObject({ data: { error: 'exchanged_trigger_id' } });
      expect(env.slack.state.modalStack('U0OP1').map((view) => view.title?.text)).toEqual(['Edit']);
    });

    it('updates the message before answering 500', async () => {
      const { ts } = await post(env.client, 'v1');
      env.slack.faults.inject({ method: 'chat.update', kind: 'error-after' });
      await failure(env.client.chat.update({ channel: 'C0OPS', ts: String(ts), text: 'v2' }));
      expect(texts()).toEqual(['v2']);
    });
  });

  describe('error-before: answered 5xx, nothing applied', () => {
    it('posts once when the client retries, and not at all when it does not', async () => {
      env.slack.faults.inject({ method: 'chat.postMessage', kind: 'error-before', times: 2 });
      await expect(post(env.client, 'lost')).rejects.toBeInstanceOf(WebAPIHTTPError);
      expect(texts()).toEqual([]);

      await post(emulatorClient(env.slack, retrying), 'delivered');
      expect(texts()).toEqual(['delivered']);
      expect(env.slack.calls.map((call) => call.status)).toEqual([500, 500, 200]);
    });

    it("answers Slack's error names in the body", async () => {
      env.slack.faults.inject({ method: 'auth.test', kind: 'error-before', status: 503 });
      const answer = await fetch(`${env.slack.url}auth.test`, {
        method: 'POST',
        headers: { authorization: `Bearer ${env.slack.botToken}` },
      });
      expect(answer.status).toBe(503);
      expect(await answer.json()).toEqual({ ok: false, error: 'service_unavailable' });
    });
  });

  describe('429: ratelimited with Retry-After, nothing applied', () => {
    it('answers exactly as Slack does', async () => {
      env.slack.faults.inject({ method: 'chat.postMessage', kind: '429', retryAfterSeconds: 3 });
      const answer = await fetch(`${env.slack.url}chat.postMessage`, {
        method: 'POST',
        headers: { authorization: `Bearer ${env.slack.botToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ channel: 'C0OPS', text: 'hello' }),
      });
      expect(answer.status).toBe(429);
      expect(answer.headers.get('retry-after')).toBe('3');
      expect(await answer.json()).toEqual({ ok: false, error: 'ratelimited' });
      expect(texts()).toEqual([]);
    });

    it('is retried by the client after Retry-After, and posted once', async () => {
      env.slack.faults.inject({ method: 'chat.postMessage', kind: '429', retryAfterSeconds: 1 });
      const client = emulatorClient(env.slack, retrying);
      const waits: number[] = [];
      client.on(WebClientEvent.RATE_LIMITED, (seconds: number) => waits.push(seconds));

      const started = Date.now();
      await post(client, 'after the wait');
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
      expect(waits).toEqual([1]);
      expect(texts()).toEqual(['after the wait']);
    });

    it('throws WebAPIRateLimitedError at once when the client rejects rate-limited calls', async () => {
      env.slack.faults.inject({ method: 'chat.postMessage', kind: '429', retryAfterSeconds: 30 });
      const error = await failure(post(emulatorClient(env.slack, { rejectRateLimitedCalls: true }), 'x'));
      expect(error).toBeInstanceOf(WebAPIRateLimitedError);
      expect(error).toMatchObject({ retryAfter: 30 });
    });
  });

  describe('hang: held without an answer', () => {
    it("is cut by the client's timeout, and nothing is posted", async () => {
      env.slack.faults.inject({ method: 'chat.postMessage', kind: 'hang' });
      const error = await failure(post(emulatorClient(env.slack, { timeout: 200 }), 'never'));

      expect(error).toBeInstanceOf(WebAPIRequestError);
      expect(texts()).toEqual([]);
      expect(env.slack.faults.held).toBe(1);
      expect(env.slack.calls).toEqual([]);
      expect(env.slack.faults.triggered).toMatchObject([{ method: 'chat.postMessage', kind: 'hang' }]);
    });

    it('posts twice when a timed-out call the client retried lands after all', async () => {
      env.slack.faults.inject({ method: 'chat.postMessage', kind: 'hang' });
      await post(emulatorClient(env.slack, { timeout: 200, ...retrying }), 'card');
      expect(texts()).toEqual(['card']);

      env.slack.faults.release();
      await vi.waitFor(() => expect(texts()).toEqual(['card', 'card']));
      expect(env.slack.faults.held).toBe(0);
    });

    it('goes on after hangMs: the client timed out, yet the message is posted', async () => {
      env.slack.faults.inject({ method: 'chat.postMessage', kind: 'hang', hangMs: 300 });
      await expect(post(emulatorClient(env.slack, { timeout: 100 }), 'late')).rejects.toBeInstanceOf(
        WebAPIRequestError,
      );
      expect(texts()).toEqual([]);
      await vi.waitFor(() => expect(texts()).toEqual(['late']));
      expect(env.slack.calls).toMatchObject([{ method: 'chat.postMessage', status: 200, fault: 'hang' }]);
    });

    it('is answered late to a client that waits', async () => {
      env.slack.faults.inject({ method: 'users.info', kind: 'hang', hangMs: 150 });
      const started = Date.now();
      const answer = await env.client.users.info({ user: 'U0OP1' });
      expect(answer.user?.name).toBe('dana');
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    });

    it('does not hold up stop()', async () => {
      const slack = createSlackEmulator({ rateLimit: false });
      await slack.start();
      slack.faults.inject({ method: 'chat.postMessage', kind: 'hang', times: Number.POSITIVE_INFINITY });
      slack.faults.inject({ method: 'chat.update', kind: 'hang', hangMs: 60_000 });
      const client = emulatorClient(slack);
      const hung = [
        failure(client.chat.postMessage({ channel: 'C0OPS', text: 'a' })),
        failure(client.chat.postMessage({ channel: 'C0OPS', text: 'b' })),
        failure(client.chat.update({ channel: 'C0OPS', ts: '1.000100', text: 'c' })),
      ];
      await vi.waitFor(() => expect(slack.faults.held).toBe(3));

      const started = Date.now();
      await slack.stop();
      expect(Date.now() - started).toBeLessThan(1_000);
      for (const error of await Promise.all(hung)) expect(error).toBeInstanceOf(WebAPIRequestError);
      expect(slack.state.messages('C0OPS')).toEqual([]);
    });
  });

  describe('delay: every call of a method is slow', () => {
    it('makes a client with a timeout give up, while the call still lands', async () => {
      const { ts } = await post(env.client, 'v1');
      env.slack.faults.delay({ method: 'chat.update', delayMs: 300 });
      const slow = emulatorClient(env.slack, { timeout: 100 });

      await expect(slow.chat.update({ channel: 'C0OPS', ts: String(ts), text: 'v2' })).rejects.toBeInstanceOf(
        WebAPIRequestError,
      );
      await vi.waitFor(() => expect(texts()).toEqual(['v2']));
      // Other methods are not slowed.
      await post(slow, 'quick');
      expect(env.slack.faults.delays).toEqual({ 'chat.update': 300 });
    });

    it('is removed with a delay of 0', async () => {
      env.slack.faults.delay({ method: 'chat.postMessage', delayMs: 5_000 });
      env.slack.faults.delay({ method: 'chat.postMessage', delayMs: 0 });
      await post(emulatorClient(env.slack, { timeout: 500 }), 'quick');
      expect(env.slack.faults.delays).toEqual({});
    });
  });

  describe('injection order, matching and records', () => {
    it('applies faults in order, one matching call each', async () => {
      env.slack.faults.inject({ method: 'chat.postMessage', kind: '429' });
      env.slack.faults.inject({ method: 'chat.postMessage', kind: 'error-before', status: 502 });
      env.slack.faults.inject({ method: 'chat.postMessage', kind: 'error-after' });
      const client = emulatorClient(env.slack, { rejectRateLimitedCalls: true });

      await expect(post(client, '1')).rejects.toBeInstanceOf(WebAPIRateLimitedError);
      await expect(post(client, '2')).rejects.toMatchObject({ statusCode: 502 });
      await expect(post(client, '3')).rejects.toMatchObject({ statusCode: 500 });
      await post(client, '4');

      expect(texts()).toEqual(['3', '4']);
      expect(env.slack.calls.map((call) => call.status)).toEqual([429, 502, 500, 200]);
    });

    it('hits only the calls match accepts, as many times as asked', async () => {
      const first = await post(env.client, 'run-1 card');
      const second = await post(env.client, 'run-2 card');
      env.slack.faults.inject({
        method: 'chat.update',
        kind: 'error-before',
        times: 2,
        match: (args) => args.ts === first.ts,
      });
      const update = (ts: unknown, text: string) =>
        env.client.chat.update({ channel: 'C0OPS', ts: String(ts), text });

      await expect(update(first.ts, 'run-1 v2')).rejects.toBeInstanceOf(WebAPIHTTPError);
      await update(second.ts, 'run-2 v2');
      await expect(update(first.ts, 'run-1 v3')).rejects.toBeInstanceOf(WebAPIHTTPError);
      await update(first.ts, 'run-1 v4');

      expect(texts()).toEqual(['run-1 v4', 'run-2 v2']);
      expect(env.slack.faults.injected).toMatchObject([
        {
          id: 1,
          method: 'chat.update',
          kind: 'error-before',
          status: 500,
          times: 2,
          remaining: 0,
          filtered: true,
        },
      ]);
      expect(env.slack.faults.triggered.map((hit) => [hit.id, hit.kind, hit.args.text])).toEqual([
        [1, 'error-before', 'run-1 v2'],
        [1, 'error-before', 'run-1 v3'],
      ]);
    });

    it('keeps hitting with times: Infinity until cleared', async () => {
      env.slack.faults.inject({
        method: 'chat.postMessage',
        kind: 'error-before',
        times: Number.POSITIVE_INFINITY,
      });
      for (let i = 0; i < 3; i++)
        await expect(post(env.client, `${i}`)).rejects.toBeInstanceOf(WebAPIHTTPError);

      env.slack.faults.clear();
      await post(env.client, 'through');
      expect(texts()).toEqual(['through']);
      expect(env.slack.faults.injected).toEqual([]);
      expect(env.slack.faults.triggered).toEqual([]);
    });

    it('is cleared by reset(), which also cuts held requests', async () => {
      env.slack.faults.inject({ method: 'chat.postMessage', kind: 'hang' });
      env.slack.faults.inject({ method: 'chat.update', kind: 'error-before' });
      env.slack.faults.delay({ method: 'auth.test', delayMs: 10_000 });
      const hung = failure(post(env.client, 'held'));
      await vi.waitFor(() => expect(env.slack.faults.held).toBe(1));

      env.slack.reset();
      expect(await hung).toBeInstanceOf(WebAPIRequestError);
      expect(env.slack.faults.held).toBe(0);
      expect(env.slack.faults.injected).toEqual([]);
      expect(env.slack.faults.delays).toEqual({});
      expect(texts()).toEqual([]);
    });

    it('refuses faults that could never apply', () => {
      const { faults } = env.slack;
      expect(() => faults.inject({ method: 'chat.postMessage', kind: '429', times: 0 })).toThrow(RangeError);
      expect(() =>
        faults.inject({ method: 'chat.postMessage', kind: '429', retryAfterSeconds: 1.5 }),
      ).toThrow(RangeError);
      expect(() => faults.inject({ method: 'chat.postMessage', kind: 'hang', hangMs: -1 })).toThrow(
        RangeError,
      );
      expect(() => faults.delay({ method: 'chat.postMessage', delayMs: Number.NaN })).toThrow(RangeError);
      expect(faults.injected).toEqual([]);
    });
  });
});
