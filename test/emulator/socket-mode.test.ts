import { once } from 'node:events';
import { WebClient } from '@slack/web-api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import {
  buildViewSubmissionPayload,
  createSlackEmulator,
  inputValues,
  isSocketModeError,
  type PageSnapshot,
  type SlackEmulator,
  stateValue,
} from '../../src/emulator/index.ts';
import { approveActions, emulatorClient, slackError } from '../helpers/slack-emulator.ts';

type Json = { readonly [key: string]: unknown };

/** An app on the emulator's Socket Mode endpoint, speaking the protocol by hand (a `ws` client). */
class RawSocketApp {
  readonly messages: Json[] = [];
  /** What to acknowledge each envelope with (`undefined`: do not acknowledge). */
  respond: (envelope: Json) => Json | undefined = () => ({});
  readonly #waiting = new Set<() => void>();

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as Json;
      this.messages.push(message);
      if (typeof message.envelope_id === 'string') {
        const answer = this.respond(message);
        if (answer !== undefined)
          socket.send(JSON.stringify({ envelope_id: message.envelope_id, payload: answer }));
      }
      for (const wake of [...this.#waiting]) wake();
    });
  }

  static async connect(url: string): Promise<RawSocketApp> {
    const app = new RawSocketApp(new WebSocket(url));
    await once(app.socket, 'open');
    return app;
  }

  /** The first message received that `predicate` accepts, waiting for it if need be. */
  async next(predicate: (message: Json) => boolean): Promise<Json> {
    for (;;) {
      const found = this.messages.find(predicate);
      if (found !== undefined) return found;
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#waiting.delete(wake);
          resolve();
        };
        this.#waiting.add(wake);
      });
    }
  }

  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    const closed = once(this.socket, 'close');
    this.socket.close();
    await closed;
  }
}

let slack: SlackEmulator;
let client: WebClient;
const apps: RawSocketApp[] = [];

beforeAll(async () => {
  slack = createSlackEmulator({ rateLimit: false, interactions: { socketMode: true, ackTimeoutMs: 500 } });
  await slack.start();
  client = emulatorClient(slack);
});
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
  slack.reset();
});
afterAll(() => slack.stop());

const appClient = (token: string) =>
  new WebClient(token, { slackApiUrl: slack.url, retryConfig: { retries: 0 } });

async function openUrl(): Promise<string> {
  const answer = await appClient(slack.appToken).apps.connections.open({});
  if (typeof answer.url !== 'string') throw new Error('apps.connections.open gave no url');
  return answer.url;
}

async function connectApp(): Promise<RawSocketApp> {
  const app = await RawSocketApp.connect(await openUrl());
  apps.push(app);
  await app.next((message) => message.type === 'hello');
  return app;
}

/** The HTTP status a refused WebSocket handshake got. */
async function refusedStatus(url: string): Promise<number> {
  const socket = new WebSocket(url);
  socket.on('error', () => {});
  const [, response] = (await once(socket, 'unexpected-response')) as [unknown, { statusCode: number }];
  socket.terminate();
  return response.statusCode;
}

const submission = () =>
  buildViewSubmissionPayload({
    user: { id: 'U0OP1' },
    view: { id: 'V0SOCKET', callback_id: 'reject_plan' },
    values: inputValues({ reason: stateValue.plainText('') }),
  });

describe('Slack emulator Socket Mode: apps.connections.open', () => {
  it('answers the app-level token with a single-use WebSocket URL on the emulator', async () => {
    const port = new URL(slack.url).port;
    const url = await openUrl();
    expect(url).toMatch(new RegExp(`^ws://127\\.0\\.0\\.1:${port}/socket-mode\\?ticket=[0-9a-f]{32}$`));
    expect(slack.calls.at(-1)).toMatchObject({
      method: 'apps.connections.open',
      response: { ok: true, url },
    });
  });

  it('refuses the bot token with not_allowed_token_type, and a wrong or missing token', async () => {
    expect(await slackError(appClient(slack.botToken).apps.connections.open({}))).toMatchObject({
      ok: false,
      error: 'not_allowed_token_type',
    });
    expect(await slackError(appClient('xapp-wrong').apps.connections.open({}))).toMatchObject({
      ok: false,
      error: 'invalid_auth',
    });
    const anonymous = await fetch(`${slack.url}apps.connections.open`, { method: 'POST' });
    expect(await anonymous.json()).toEqual({ ok: false, error: 'not_authed' });
  });

  it('refuses the app-level token on methods that take the bot token', async () => {
    expect(
      await slackError(appClient(slack.appToken).chat.postMessage({ channel: 'C0OPS', text: 'hi' })),
    ).toMatchObject({ ok: false, error: 'not_allowed_token_type' });
    expect(slack.state.messages('C0OPS')).toEqual([]);
  });
});

describe('Slack emulator Socket Mode: the WebSocket', () => {
  it('greets a connection with hello carrying the app id, and counts it as connected', async () => {
    const waiting = slack.socketMode.connected();
    const app = await RawSocketApp.connect(await openUrl());
    apps.push(app);
    expect(await app.next(() => true)).toEqual({
      type: 'hello',
      num_connections: 1,
      debug_info: { host: 'emulator' },
      connection_info: { app_id: 'A0APP' },
    });
    await waiting;
    expect(slack.socketMode.connections).toBe(1);
    await app.close();
    await expect.poll(() => slack.socketMode.connections).toBe(0);
  });

  it('refuses an unknown ticket, a ticket used twice, and other paths', async () => {
    const origin = new URL(slack.url).origin.replace(/^http/, 'ws');
    expect(await refusedStatus(`${origin}/socket-mode?ticket=0123456789abcdef0123456789abcdef`)).toBe(401);
    expect(await refusedStatus(`${origin}/socket-mode`)).toBe(401);
    const url = await openUrl();
    apps.push(await RawSocketApp.connect(url));
    expect(await refusedStatus(url)).toBe(401);
    expect(await refusedStatus(`${origin}/elsewhere`)).toBe(404);
    expect(slack.socketMode.connections).toBe(1);
  });

  it('delivers an interaction in an envelope and resolves to the payload the app acknowledges with', async () => {
    const app = await connectApp();
    const errors = { response_action: 'errors', errors: { reason: 'Say why the plan is rejected.' } };
    app.respond = () => errors;
    const payload = submission();

    const answer = await slack.socketMode.deliver(payload);

    expect(answer).toEqual({ status: 200, body: errors, text: JSON.stringify(errors) });
    const envelope = await app.next((message) => message.type === 'interactive');
    expect(envelope).toEqual({
      envelope_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'interactive',
      payload,
      accepts_response_payload: true,
    });
  });

  it('resolves an empty acknowledgement to a null body, as an empty HTTP 200', async () => {
    const app = await connectApp();
    app.respond = () => ({});
    expect(await slack.socketMode.deliver(submission())).toEqual({ status: 200, body: null, text: '' });
  });

  it('fails a delivery with no app connected, with no acknowledgement in time, and when the socket closes', async () => {
    const refused = await slack.socketMode.deliver(submission()).catch((error: unknown) => error);
    expect(isSocketModeError(refused) && refused.code).toBe('no_connection');

    const app = await connectApp();
    app.respond = () => undefined;
    const late = await slack.socketMode.deliver(submission(), { timeoutMs: 100 }).catch((error) => error);
    expect(isSocketModeError(late) && late.code).toBe('ack_timeout');

    const cut = slack.socketMode.deliver(submission()).catch((error: unknown) => error);
    await app.next((message) => message.type === 'interactive' && app.messages.indexOf(message) > 1);
    app.socket.terminate();
    const closed = await cut;
    expect(isSocketModeError(closed) && closed.code).toBe('connection_closed');
  });

  it('stop() closes the connections (going away) and the emulator starts again', async () => {
    const other = createSlackEmulator({ rateLimit: false });
    await other.start();
    const answer = await new WebClient(other.appToken, {
      slackApiUrl: other.url,
      retryConfig: { retries: 0 },
    }).apps.connections.open({});
    const app = await RawSocketApp.connect(String(answer.url));
    const closed = once(app.socket, 'close') as Promise<[number, Buffer]>;
    await other.stop();
    const [code] = await closed;
    expect(code).toBe(1001);
    expect(other.socketMode.connections).toBe(0);
    await other.start();
    await other.stop();
  });
});

describe('the emulator page over Socket Mode', () => {
  const page = async (path: string, body?: unknown) => {
    const response = await fetch(new URL(path, slack.pageUrl), {
      ...(body === undefined
        ? {}
        : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    return (await response.json()) as Json;
  };

  async function cardWithButton(): Promise<string> {
    const posted = await client.chat.postMessage({
      channel: 'C0OPS',
      text: 'plan',
      blocks: [approveActions('r|1')],
    });
    return posted.ts ?? '';
  }

  const click = (ts: string) =>
    page('/page/api/action', {
      user: 'U0OP1',
      container: { type: 'message', channel: 'C0OPS', ts },
      action: { type: 'button', actionId: 'approve', blockId: 'decide', text: 'Approve', value: 'r|1' },
    });

  it('says plainly that no app is connected when nothing is', async () => {
    const answer = await click(await cardWithButton());
    expect(answer).toMatchObject({ ok: false, error: 'app_unreachable' });
    expect(String(answer.message)).toMatch(/Socket Mode/);
  });

  it("sends a click to the connected app and a submission's errors back into the modal", async () => {
    const app = await connectApp();
    const ts = await cardWithButton();
    app.respond = (envelope) => {
      const payload = envelope.payload as Json;
      if (payload.type === 'block_actions') {
        void client.views.open({
          trigger_id: String(payload.trigger_id),
          view: {
            type: 'modal',
            callback_id: 'reject_plan',
            title: { type: 'plain_text', text: 'Reject' },
            submit: { type: 'plain_text', text: 'Reject' },
            blocks: [
              {
                type: 'input',
                block_id: 'reason',
                label: { type: 'plain_text', text: 'Reason' },
                element: { type: 'plain_text_input', action_id: 'input' },
              },
            ],
          },
        });
        return {};
      }
      return { response_action: 'errors', errors: { reason: 'Say why.' } };
    };

    expect(await click(ts)).toEqual({ ok: true, status: 200 });
    const envelope = await app.next((message) => message.type === 'interactive');
    expect(envelope.payload).toMatchObject({ type: 'block_actions', actions: [{ action_id: 'approve' }] });
    const state = async () => (await page('/page/api/state?user=U0OP1')) as unknown as PageSnapshot;
    await expect.poll(async () => (await state()).modal?.view.callback_id).toBe('reject_plan');
    const view = (await state()).modal!.view;

    const submitted = await page('/page/api/submit', {
      user: 'U0OP1',
      viewId: view.id,
      values: inputValues({ reason: stateValue.plainText('') }),
    });
    expect(submitted).toEqual({ ok: true, outcome: 'errors', errors: { reason: 'Say why.' } });
  });

  it('shows a timeout when the app does not acknowledge in time', async () => {
    const app = await connectApp();
    app.respond = () => undefined;
    expect(await click(await cardWithButton())).toMatchObject({ ok: false, error: 'app_timeout' });
  });
});
