import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { WebClient } from '@slack/web-api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createSlackEmulator,
  inputValues,
  type PageSnapshot,
  type SlackEmulator,
  signSlackRequest,
  stateValue,
  triggerIdUser,
} from '../../src/emulator/index.ts';
import { approveActions, emulatorClient } from '../helpers/slack-emulator.ts';

const SECRET = 'page-test-signing-secret';
type Payload = { readonly [key: string]: unknown } & { type: string };
type Answer = { status?: number; body?: unknown; delayMs?: number };

/** A stand-in for the bot's /slack/events: checks Slack's signature, records payloads, answers as told. */
class FakeApp {
  readonly payloads: Payload[] = [];
  readonly signatures: boolean[] = [];
  respond: (payload: Payload) => Answer | Promise<Answer> = () => ({});
  readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const timestamp = Number(req.headers['x-slack-request-timestamp']);
      this.signatures.push(
        req.headers['x-slack-signature'] === signSlackRequest(SECRET, raw, timestamp)['X-Slack-Signature'] &&
          req.headers['content-type'] === 'application/x-www-form-urlencoded',
      );
      const payload = JSON.parse(new URLSearchParams(raw).get('payload') ?? '{}') as Payload;
      this.payloads.push(payload);
      const answer = await this.respond(payload);
      if (answer.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
      const body = answer.body === undefined ? '' : JSON.stringify(answer.body);
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
      res.end(body);
    });
  });

  async start(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    return `http://127.0.0.1:${address.port}/slack/events`;
  }

  reset(): void {
    this.payloads.length = 0;
    this.signatures.length = 0;
    this.respond = () => ({});
  }
}

const app = new FakeApp();
let slack: SlackEmulator;
let client: WebClient;

beforeAll(async () => {
  const url = await app.start();
  slack = createSlackEmulator({
    rateLimit: false,
    interactions: { url, signingSecret: SECRET, ackTimeoutMs: 500 },
    personas: [
      { id: 'U0OP1', label: 'Dana (operator)' },
      { id: 'U0FIN1', label: 'Sam (finance)' },
      { id: 'U0LEAD1', label: 'Lee (lead)' },
    ],
  });
  await slack.start();
  client = emulatorClient(slack);
});
afterEach(() => {
  slack.reset();
  app.reset();
});
afterAll(async () => {
  await slack.stop();
  app.server.close();
});

const page = (path: string, init?: RequestInit) => fetch(new URL(path, slack.pageUrl), init);
const postJson = async (path: string, body: unknown) => {
  const response = await page(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};
const snapshot = async (user: string) =>
  (await (await page(`/page/api/state?user=${user}`)).json()) as PageSnapshot;

const plain = (text: string) => ({ type: 'plain_text' as const, text });
const editModal = (title = 'Edit plan v1') => ({
  type: 'modal' as const,
  callback_id: 'edit_plan',
  title: plain(title),
  submit: plain('Save'),
  private_metadata: '{"r":"run-1","v":1}',
  blocks: [
    {
      type: 'input',
      block_id: 'arg:s2:window',
      label: plain('New delivery date'),
      element: { type: 'datepicker', action_id: 'input', initial_date: '2026-04-03' },
    },
    {
      type: 'actions',
      block_id: 'add_step',
      elements: [
        {
          type: 'static_select',
          action_id: 'add_step',
          placeholder: plain('Add a step…'),
          options: [{ text: plain('Issue refund'), value: 'issue_refund' }],
        },
      ],
    },
  ],
});

/** Posts a card with an Edit button; a click on it opens the edit modal with the click's trigger id. */
async function cardThatOpensModal(): Promise<{ ts: string }> {
  const posted = await client.chat.postMessage({
    channel: 'C0OPS',
    text: 'plan',
    blocks: [
      {
        type: 'actions',
        block_id: 'decide',
        elements: [{ type: 'button', action_id: 'edit', text: plain('Edit'), value: 'run-1|1' }],
      },
    ],
  });
  app.respond = async (payload) => {
    if (payload.type === 'block_actions' && typeof payload.trigger_id === 'string') {
      await client.views.open({ trigger_id: payload.trigger_id, view: editModal() });
    }
    return {};
  };
  return { ts: posted.ts ?? '' };
}

async function openModalAs(user: string): Promise<string> {
  const { ts } = await cardThatOpensModal();
  await postJson('/page/api/action', {
    user,
    container: { type: 'message', channel: 'C0OPS', ts },
    action: { type: 'button', actionId: 'edit', blockId: 'decide', text: 'Edit', value: 'run-1|1' },
  });
  const view = (await snapshot(user)).modal?.view;
  if (view === undefined) throw new Error('the modal did not open');
  return view.id;
}

describe('the emulator page: files', () => {
  it('serves the page at / with a policy that runs only its own scripts', async () => {
    const response = await page('/');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const policy = response.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("default-src 'none'");
    expect(await response.text()).toContain('<script type="module" src="/page/client/app.ts"></script>');
  });

  it('serves the browser modules as JavaScript, types stripped, imports kept', async () => {
    const response = await page('/page/client/app.ts');
    expect(response.headers.get('content-type')).toMatch(/^text\/javascript/);
    const code = await response.text();
    expect(code).toContain("from './conversation.ts'");
    expect(code).not.toMatch(/^import type|^interface /m);
    expect((await page('/page/client/styles.css')).headers.get('content-type')).toMatch(/^text\/css/);
  });

  it('serves nothing outside its folder, and nothing that does not exist', async () => {
    for (const path of [
      '/page/client/..%2Fpage-routes.ts',
      '/page/client/nope.ts',
      '/page/client/',
      '/elsewhere',
    ]) {
      expect((await page(path)).status, path).toBe(404);
    }
  });
});

describe('the emulator page: what each person sees', () => {
  it('shows channels, threads and DMs with the bot; ephemeral messages only to their user', async () => {
    const card = await client.chat.postMessage({ channel: 'C0OPS', text: 'card' });
    await client.chat.postMessage({ channel: 'C0OPS', text: 'diff', thread_ts: card.ts ?? '' });
    await client.chat.postEphemeral({ channel: 'C0OPS', user: 'U0OP1', text: 'only Dana' });
    await client.chat.postEphemeral({ channel: 'C0OPS', user: 'U0FIN1', text: 'only Sam' });
    const dm = await client.conversations.open({ users: 'U0LEAD1' });
    await client.chat.postMessage({ channel: dm.channel?.id ?? '', text: 'escalated to Lee' });

    const dana = await snapshot('U0OP1');
    expect(dana.viewer).toBe('U0OP1');
    expect(dana.personas.map((persona) => persona.label)).toEqual([
      'Dana (operator)',
      'Sam (finance)',
      'Lee (lead)',
    ]);
    expect(dana.channels.map((channel) => channel.label)).toEqual(['ops-approvals']);
    expect(dana.messages.map((message) => message.text)).toEqual(['card', 'diff']);
    expect(dana.messages[1]?.thread_ts).toBe(card.ts);
    expect(dana.ephemerals.map((ephemeral) => ephemeral.text)).toEqual(['only Dana']);
    expect(dana.interactive).toBe(true);

    const lee = await snapshot('U0LEAD1');
    expect(lee.channels).toEqual([
      { id: 'C0OPS', label: 'ops-approvals', isIm: false },
      { id: dm.channel?.id, label: 'countersign', isIm: true },
    ]);
    expect(lee.messages.map((message) => message.text)).toContain('escalated to Lee');
    expect(lee.ephemerals).toEqual([]);
  });

  it('streams a change event for every workspace change (Server-Sent Events)', async () => {
    const controller = new AbortController();
    const response = await page('/page/api/events', { signal: controller.signal });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = response.body!.getReader();
    let received = '';
    const readUntil = async (text: string) => {
      while (!received.includes(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${text}`);
        received += new TextDecoder().decode(value);
      }
    };
    await readUntil('event: hello');
    await client.chat.postMessage({ channel: 'C0OPS', text: 'live' });
    await readUntil('"type":"message_posted"');
    expect(received).toMatch(/event: change\ndata: \{"seq":\d+,"type":"message_posted"\}/);
    controller.abort();
  });
});

describe('the emulator page: playing Slack towards the app', () => {
  it('sends a click as a block_actions payload signed like Slack’s, from the person acting', async () => {
    const posted = await client.chat.postMessage({
      channel: 'C0OPS',
      text: 'plan',
      blocks: [approveActions('run-1|1', { style: 'primary' })],
    });
    const answer = await postJson('/page/api/action', {
      user: 'U0OP1',
      container: { type: 'message', channel: 'C0OPS', ts: posted.ts },
      action: {
        type: 'button',
        actionId: 'approve',
        blockId: 'decide',
        text: 'Approve',
        value: 'run-1|1',
        style: 'primary',
      },
    });
    expect(answer.body).toEqual({ ok: true, status: 200 });
    expect(app.signatures).toEqual([true]);
    expect(app.payloads[0]).toMatchObject({
      type: 'block_actions',
      user: { id: 'U0OP1', username: 'dana' },
      container: { type: 'message', message_ts: posted.ts, channel_id: 'C0OPS', is_ephemeral: false },
      channel: { id: 'C0OPS', name: 'ops-approvals' },
      message: { ts: posted.ts, text: 'plan' },
      actions: [
        { type: 'button', action_id: 'approve', block_id: 'decide', value: 'run-1|1', style: 'primary' },
      ],
    });
    expect(triggerIdUser(String(app.payloads[0]?.trigger_id))).toBe('U0OP1');
  });

  it('opens the modal the app asks for with the trigger id of the page’s click, for that person only', async () => {
    const viewId = await openModalAs('U0FIN1');
    const sam = await snapshot('U0FIN1');
    expect(sam.modal).toMatchObject({ depth: 1, errors: {}, view: { id: viewId, callback_id: 'edit_plan' } });
    expect((await snapshot('U0OP1')).modal).toBeNull();
  });

  it('sends a selection inside a modal with the view and its state values; views.update then keeps typed inputs', async () => {
    const viewId = await openModalAs('U0FIN1');
    const values = {
      ...inputValues({ 'arg:s2:window': stateValue.date('2026-04-06') }),
      add_step: { add_step: stateValue.staticSelect({ text: 'Issue refund', value: 'issue_refund' }) },
    };
    app.respond = async (payload) => {
      const view = payload.view as { id: string; hash: string };
      await client.views.update({ view_id: view.id, hash: view.hash, view: editModal('Edit plan v1 (+1)') });
      return {};
    };
    const answer = await postJson('/page/api/action', {
      user: 'U0FIN1',
      container: { type: 'view', viewId, values },
      action: {
        type: 'static_select',
        actionId: 'add_step',
        blockId: 'add_step',
        selectedOption: { text: 'Issue refund', value: 'issue_refund' },
      },
    });
    expect(answer.body).toEqual({ ok: true, status: 200 });
    const payload = app.payloads.at(-1);
    expect(payload).toMatchObject({
      type: 'block_actions',
      container: { type: 'view', view_id: viewId },
      view: { id: viewId, callback_id: 'edit_plan', state: { values } },
      actions: [{ type: 'static_select', action_id: 'add_step', selected_option: { value: 'issue_refund' } }],
    });
    expect(payload).not.toHaveProperty('response_url');
    const modal = (await snapshot('U0FIN1')).modal;
    expect(modal?.view.title?.text).toBe('Edit plan v1 (+1)');
    // The date typed before the update is still there; the select in the actions block starts afresh.
    expect(modal?.view.state.values).toEqual(inputValues({ 'arg:s2:window': stateValue.date('2026-04-06') }));
  });

  it('submits a modal as view_submission and shows response_action errors under their blocks', async () => {
    const viewId = await openModalAs('U0OP1');
    const values = inputValues({ 'arg:s2:window': stateValue.date('2026-04-06') });
    app.respond = () => ({
      body: { response_action: 'errors', errors: { 'arg:s2:window': 'may_author: you may not write this' } },
    });
    const answer = await postJson('/page/api/submit', { user: 'U0OP1', viewId, values });
    expect(answer.body).toEqual({
      ok: true,
      outcome: 'errors',
      errors: { 'arg:s2:window': 'may_author: you may not write this' },
    });
    expect(app.payloads.at(-1)).toMatchObject({
      type: 'view_submission',
      user: { id: 'U0OP1' },
      view: {
        id: viewId,
        callback_id: 'edit_plan',
        private_metadata: '{"r":"run-1","v":1}',
        state: { values },
      },
    });
    const modal = (await snapshot('U0OP1')).modal;
    expect(modal?.errors).toEqual({ 'arg:s2:window': 'may_author: you may not write this' });
    expect(modal?.view.state.values).toEqual(values);
  });

  it('refuses errors for blocks that are not inputs, as Slack does', async () => {
    const viewId = await openModalAs('U0OP1');
    app.respond = () => ({ body: { response_action: 'errors', errors: { add_step: 'nope' } } });
    const answer = await postJson('/page/api/submit', { user: 'U0OP1', viewId, values: {} });
    expect(answer.body).toMatchObject({ ok: false, error: 'invalid_response' });
  });

  it('applies update, push (then close goes back), clear, and an empty 200 (closes the modal)', async () => {
    const viewId = await openModalAs('U0OP1');
    app.respond = () => ({ body: { response_action: 'update', view: editModal('Updated') } });
    expect((await postJson('/page/api/submit', { user: 'U0OP1', viewId, values: {} })).body).toEqual({
      ok: true,
      outcome: 'updated',
    });
    expect((await snapshot('U0OP1')).modal?.view).toMatchObject({ id: viewId, title: { text: 'Updated' } });

    app.respond = () => ({ body: { response_action: 'push', view: editModal('Pushed') } });
    expect((await postJson('/page/api/submit', { user: 'U0OP1', viewId, values: {} })).body).toMatchObject({
      outcome: 'pushed',
    });
    const pushed = (await snapshot('U0OP1')).modal;
    expect(pushed).toMatchObject({ depth: 2, view: { title: { text: 'Pushed' } } });
    expect((await postJson('/page/api/close', { user: 'U0OP1', viewId: pushed?.view.id })).body).toEqual({
      ok: true,
    });
    expect((await snapshot('U0OP1')).modal).toMatchObject({ depth: 1, view: { id: viewId } });

    app.respond = () => ({});
    expect((await postJson('/page/api/submit', { user: 'U0OP1', viewId, values: {} })).body).toEqual({
      ok: true,
      outcome: 'closed',
    });
    expect((await snapshot('U0OP1')).modal).toBeNull();

    const again = await openModalAs('U0OP1');
    app.respond = () => ({ body: { response_action: 'clear' } });
    expect((await postJson('/page/api/submit', { user: 'U0OP1', viewId: again, values: {} })).body).toEqual({
      ok: true,
      outcome: 'cleared',
    });
    expect((await snapshot('U0OP1')).modal).toBeNull();
  });

  it('keeps the modal open and says so when the app fails or does not answer in time', async () => {
    const viewId = await openModalAs('U0OP1');
    app.respond = () => ({ status: 500 });
    expect((await postJson('/page/api/submit', { user: 'U0OP1', viewId, values: {} })).body).toMatchObject({
      ok: false,
      error: 'app_error',
    });
    app.respond = () => ({ delayMs: 1_000 });
    expect((await postJson('/page/api/submit', { user: 'U0OP1', viewId, values: {} })).body).toMatchObject({
      ok: false,
      error: 'app_timeout',
    });
    expect((await snapshot('U0OP1')).modal?.view.id).toBe(viewId);
  });

  it('sends view_closed when a modal that asked for it is closed', async () => {
    const { ts } = await cardThatOpensModal();
    app.respond = async (payload) => {
      if (payload.type === 'block_actions') {
        await client.views.open({
          trigger_id: String(payload.trigger_id),
          view: { ...editModal(), notify_on_close: true },
        });
      }
      return {};
    };
    await postJson('/page/api/action', {
      user: 'U0OP1',
      container: { type: 'message', channel: 'C0OPS', ts },
      action: { type: 'button', actionId: 'edit', blockId: 'decide', text: 'Edit' },
    });
    const viewId = (await snapshot('U0OP1')).modal?.view.id;
    expect((await postJson('/page/api/close', { user: 'U0OP1', viewId })).body).toEqual({ ok: true });
    expect(app.payloads.at(-1)).toMatchObject({
      type: 'view_closed',
      view: { id: viewId },
      is_cleared: false,
    });
    expect((await snapshot('U0OP1')).modal).toBeNull();
  });

  it('refuses malformed requests, clicks on conversations the person cannot see, and views that are not theirs', async () => {
    expect((await postJson('/page/api/action', { user: 'U0OP1' })).status).toBe(400);
    expect(
      (
        await postJson('/page/api/action', {
          user: 'U0OP1',
          container: { type: 'message', channel: 'C0NOPE', ts: '1.000001' },
          action: { type: 'button', actionId: 'approve', blockId: 'b', text: 'Approve' },
        })
      ).body,
    ).toMatchObject({ ok: false, error: 'channel_not_found' });
    const viewId = await openModalAs('U0FIN1');
    expect((await postJson('/page/api/submit', { user: 'U0OP1', viewId, values: {} })).body).toMatchObject({
      ok: false,
      error: 'view_not_found',
    });
  });
});

describe('the emulator page without an app', () => {
  it('shows the workspace but refuses interactions', async () => {
    const bare = createSlackEmulator({ rateLimit: false });
    await bare.start();
    try {
      const posted = await emulatorClient(bare).chat.postMessage({ channel: 'C0OPS', text: 'hi' });
      const state = (await (await fetch(new URL('/page/api/state', bare.pageUrl))).json()) as PageSnapshot;
      expect(state).toMatchObject({ interactive: false, viewer: 'U0OP1' });
      const answer = await fetch(new URL('/page/api/action', bare.pageUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          user: 'U0OP1',
          container: { type: 'message', channel: 'C0OPS', ts: posted.ts },
          action: { type: 'button', actionId: 'approve', blockId: 'b', text: 'Approve' },
        }),
      });
      expect(await answer.json()).toMatchObject({ ok: false, error: 'not_configured' });
    } finally {
      await bare.stop();
    }
  });
});
