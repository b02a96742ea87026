import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { IdMint } from '../../src/emulator/ids.ts';
import { DEFAULT_IDENTITY, type WorkspaceEvent } from '../../src/emulator/index.ts';
import { createRoutedServer } from '../../src/emulator/server.ts';
import { createWebApiHandler } from '../../src/emulator/web-api/handle-request.ts';
import { fail, ok, type WebApiMethod } from '../../src/emulator/web-api/method.ts';
import { Workspace } from '../../src/emulator/workspace.ts';
import { useSlackEmulator } from '../helpers/slack-emulator.ts';

describe('Slack emulator over plain HTTP', () => {
  const faults: unknown[] = [];
  const env = useSlackEmulator({ logError: (_message, error) => faults.push(error) });
  const call = (path: string, init: RequestInit = {}) =>
    fetch(new URL(path, env.slack.url), init).then(async (response) => ({
      status: response.status,
      body: (await response.json()) as unknown,
    }));
  const auth = () => ({ authorization: `Bearer ${env.slack.botToken}` });

  it('takes JSON bodies, with nested fields as real objects', async () => {
    const answer = await call('chat.postMessage', {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({
        channel: 'C0OPS',
        text: 'hi',
        metadata: { event_type: 'x', event_payload: { a: 1 } },
      }),
    });
    expect(answer).toMatchObject({ status: 200, body: { ok: true, channel: 'C0OPS' } });
    expect(env.slack.state.messages('C0OPS')[0]?.metadata).toEqual({
      event_type: 'x',
      event_payload: { a: 1 },
    });
  });

  it('takes the token as a form field, and query parameters on GET', async () => {
    const form = new URLSearchParams({ token: env.slack.botToken, channel: 'C0OPS', text: 'from a form' });
    const posted = await call('chat.postMessage', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    expect(posted.body).toMatchObject({ ok: true });
    const history = await call(`conversations.history?channel=C0OPS&limit=1&token=${env.slack.botToken}`);
    expect(history.body).toMatchObject({ ok: true, messages: [{ text: 'from a form' }] });
  });

  it('tells a missing token (not_authed) from a wrong one (invalid_auth)', async () => {
    expect((await call('auth.test', { method: 'POST' })).body).toEqual({ ok: false, error: 'not_authed' });
    expect(
      (await call('auth.test', { method: 'POST', headers: { authorization: 'Bearer xoxb-nope' } })).body,
    ).toEqual({
      ok: false,
      error: 'invalid_auth',
    });
  });

  it('answers bad bodies in Slack terms', async () => {
    const post = (contentType: string, body: string) =>
      call('auth.test', { method: 'POST', headers: { ...auth(), 'content-type': contentType }, body });
    expect((await post('application/json', '{nope')).body).toMatchObject({
      ok: false,
      error: 'invalid_json',
    });
    expect((await post('text/csv', 'a,b')).body).toMatchObject({ ok: false, error: 'invalid_post_type' });
    expect((await post('multipart/form-data; boundary=x', '--x--')).body).toMatchObject({
      ok: false,
      error: 'invalid_form_data',
    });
  });

  it('answers 404 outside /api/', async () => {
    const response = await fetch(new URL('/nowhere', env.slack.url));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ ok: false, error: 'not_found' });
  });

  it('lets subscribers watch every change and call', async () => {
    const events: WorkspaceEvent[] = [];
    const unsubscribe = env.slack.state.subscribe((event) => events.push(event));
    await env.client.chat.postMessage({ channel: 'C0OPS', text: 'watched' });
    unsubscribe();
    await env.client.chat.postMessage({ channel: 'C0OPS', text: 'not watched' });
    expect(events).toMatchObject([
      { type: 'message_posted', message: { text: 'watched', channel: 'C0OPS' } },
      { type: 'api_call', call: { method: 'chat.postMessage', status: 200 } },
    ]);
  });

  it('keeps answering when a subscriber throws, and reports it', async () => {
    faults.length = 0;
    const unsubscribe = env.slack.state.subscribe(() => {
      throw new Error('a broken page');
    });
    try {
      await expect(
        env.client.chat.postMessage({ channel: 'C0OPS', text: 'still fine' }),
      ).resolves.toMatchObject({
        ok: true,
      });
    } finally {
      unsubscribe();
    }
    // Once for the posted message, once for the recorded call.
    expect(faults).toEqual([new Error('a broken page'), new Error('a broken page')]);
  });

  it('forgets messages and calls on reset, keeping users and channels', async () => {
    await env.client.chat.postMessage({ channel: 'C0OPS', text: 'before' });
    env.slack.reset();
    expect(env.slack.state.messages('C0OPS')).toEqual([]);
    expect(env.slack.calls).toEqual([]);
    expect(env.slack.state.channel('#ops-approvals')?.id).toBe('C0OPS');
    expect(env.slack.state.user('U0OP1')?.real_name).toBe('Dana Ortiz');
  });
});

describe('Web API handler faults', () => {
  it('answers 500 internal_error, never a stack trace, and reports the fault', async () => {
    const boom: WebApiMethod = {
      run() {
        throw new Error('secret internals at /srv/app.ts:42');
      },
    };
    const calm: WebApiMethod = { run: () => ok({ fine: true }) };
    const reported: unknown[] = [];
    const workspace = new Workspace(
      { identity: DEFAULT_IDENTITY, users: [], channels: [], usergroups: [] },
      new IdMint(Date.now),
      () => {},
    );
    const handler = createWebApiHandler({
      workspace,
      methods: { 'test.boom': boom, 'test.calm': calm, 'test.refuse': { run: () => fail('nope') } },
      botToken: 'xoxb-t',
      appToken: 'xapp-t',
      socketMode: { openConnection: () => 'ws://127.0.0.1:1/socket-mode?ticket=unused' },
      limiter: undefined,
      now: Date.now,
      record: () => {},
      logError: (_message, error) => reported.push(error),
    });
    const server = createRoutedServer([{ prefix: '/api/', handle: handler }], () => {});
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    const base =
      typeof address === 'object' && address !== null ? `http://127.0.0.1:${address.port}/api/` : '';
    try {
      const post = (method: string) =>
        fetch(`${base}${method}`, { method: 'POST', headers: { authorization: 'Bearer xoxb-t' } });
      const failed = await post('test.boom');
      expect(failed.status).toBe(500);
      const text = await failed.text();
      expect(JSON.parse(text)).toEqual({ ok: false, error: 'internal_error' });
      expect(text).not.toContain('secret internals');
      expect(reported).toHaveLength(1);
      // The server keeps serving.
      expect(await (await post('test.calm')).json()).toEqual({ ok: true, fine: true });
      expect(await (await post('test.refuse')).json()).toEqual({ ok: false, error: 'nope' });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
