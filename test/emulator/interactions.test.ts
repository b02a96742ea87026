import { createHmac } from 'node:crypto';
import { App, LogLevel, verifySlackRequest } from '@slack/bolt';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { findFreePort } from '../../src/devtools/redis-server.ts';
import {
  buildBlockActionsPayload,
  buildViewClosedPayload,
  buildViewSubmissionPayload,
  buttonAction,
  createSlackEmulator,
  inputValues,
  isTriggerExpired,
  isTriggerId,
  mintTriggerId,
  postInteraction,
  SLACK_TRIGGER_TTL_MS,
  signSlackRequest,
  stateValue,
  triggerIdMintedAt,
  triggerIdUser,
} from '../../src/emulator/index.ts';
import { approveActions, emulatorClient } from '../helpers/slack-emulator.ts';
import { slackFixture } from '../helpers/slack-fixtures.ts';

const JsonObject = z.record(z.string(), z.unknown());
const Plain = z.object({ type: z.literal('plain_text'), text: z.string(), emoji: z.boolean().optional() });
const FixtureView = z.object({
  id: z.string(),
  team_id: z.string().optional(),
  type: z.enum(['modal', 'home']),
  callback_id: z.string(),
  private_metadata: z.string(),
  hash: z.string(),
  title: Plain.optional(),
  submit: Plain.optional(),
  blocks: z.array(JsonObject).optional(),
  state: z.object({ values: z.record(z.string(), z.record(z.string(), JsonObject)) }),
  root_view_id: z.string().optional(),
  previous_view_id: z.null().optional(),
  app_id: z.string().optional(),
  external_id: z.string().optional(),
  bot_id: z.string().optional(),
  clear_on_close: z.boolean().optional(),
  notify_on_close: z.boolean().optional(),
});
const Team = z.object({ id: z.string(), domain: z.string() });
const User = z.object({ id: z.string(), name: z.string() });

describe('signSlackRequest', () => {
  it("matches the example in Slack's request-verification docs", () => {
    const body =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    expect(signSlackRequest('8f742231b10e8888abcd99yyyzzz85a5', body, 1531420618)).toEqual({
      'X-Slack-Request-Timestamp': '1531420618',
      'X-Slack-Signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
    });
  });

  it('is v0= and the hex HMAC-SHA256 of "v0:<timestamp>:<body>", computed here by hand', () => {
    const body = 'payload=%7B%22type%22%3A%22block_actions%22%7D';
    const byHand = createHmac('sha256', 'countersign-secret')
      .update('v0:1775462460:')
      .update(body)
      .digest('hex');
    expect(signSlackRequest('countersign-secret', body, 1775462460)['X-Slack-Signature']).toBe(
      `v0=${byHand}`,
    );
  });

  it("passes Bolt's own verifier", () => {
    const body = 'payload=%7B%7D';
    const headers = signSlackRequest('countersign-secret', body, 1775462460);
    expect(() =>
      verifySlackRequest({
        signingSecret: 'countersign-secret',
        body,
        headers: {
          'x-slack-signature': headers['X-Slack-Signature'],
          'x-slack-request-timestamp': Number(headers['X-Slack-Request-Timestamp']),
        },
        nowMilliseconds: 1775462460_000,
      }),
    ).not.toThrow();
  });
});

describe('trigger ids', () => {
  it('carry the user they were minted for and when, in Slack’s shape', () => {
    const triggerId = mintTriggerId('U0OP1', { nowMs: 1775462460_123, sequence: 1111111111 });
    expect(triggerId).toBe('1775462460123.1111111111.55304f5031');
    expect(isTriggerId(triggerId)).toBe(true);
    expect(triggerIdUser(triggerId)).toBe('U0OP1');
    expect(triggerIdMintedAt(triggerId)).toBe(1775462460_123);
  });

  it('expire 3 s after they were minted, to the millisecond', () => {
    const triggerId = mintTriggerId('U0OP1', { nowMs: 1775462460_123 });
    expect(isTriggerExpired(triggerId, 1775462460_123 + 2_999, SLACK_TRIGGER_TTL_MS)).toBe(false);
    expect(isTriggerExpired(triggerId, 1775462460_123 + 3_000, SLACK_TRIGGER_TTL_MS)).toBe(true);
  });

  it("accept Slack's own, which carry no user and never expire", () => {
    expect(isTriggerId('7777777777.1111111111.abcdef0123456789')).toBe(true);
    expect(triggerIdUser('7777777777.1111111111.abcdef0123456789')).toBeUndefined();
    expect(isTriggerExpired('7777777777.1111111111.abcdef0123456789', Date.now(), 3_000)).toBe(false);
  });
});

describe('payload builders, against the protocol fixtures', () => {
  it('builds block_actions for a button on a message exactly like block_actions.message.json', () => {
    const fixture = slackFixture('block_actions.message');
    const given = z
      .object({
        trigger_id: z.string(),
        response_url: z.string(),
        user: User,
        team: Team,
        channel: z.object({ id: z.string(), name: z.string() }),
        message: z.object({
          ts: z.string(),
          text: z.string(),
          blocks: z.array(JsonObject),
          bot_id: z.string(),
        }),
      })
      .parse(fixture);
    const payload = buildBlockActionsPayload({
      user: given.user,
      team: given.team,
      triggerId: given.trigger_id,
      nowMs: 1775462460123.456,
      container: {
        type: 'message',
        channel: given.channel,
        message: given.message,
        responseUrl: given.response_url,
      },
      action: buttonAction(given.message.blocks, 'approve'),
    });
    expect(payload).toEqual(fixture);
  });

  it('builds block_actions for a select in a modal like block_actions.view.json', () => {
    const fixture = slackFixture('block_actions.view');
    const given = z.object({ trigger_id: z.string(), user: User, view: FixtureView }).parse(fixture);
    const payload = buildBlockActionsPayload({
      user: given.user,
      triggerId: given.trigger_id,
      nowMs: 1775462520654.321,
      container: { type: 'view', view: given.view },
      action: {
        type: 'static_select',
        actionId: 'add_step',
        blockId: 'add_step',
        selectedOption: { text: 'Issue refund', value: 'issue_refund' },
        placeholder: 'Add a step',
      },
    });
    expect(payload).toMatchObject(fixture);
    expect(payload).not.toHaveProperty('response_url');
  });

  it('builds view_submission exactly like view_submission.json', () => {
    const fixture = slackFixture('view_submission');
    const given = z.object({ trigger_id: z.string(), user: User, view: FixtureView }).parse(fixture);
    const payload = buildViewSubmissionPayload({
      user: given.user,
      triggerId: given.trigger_id,
      view: { ...given.view, state: { values: {} } },
      values: inputValues({
        'arg:s2:window': stateValue.date('2026-04-06'),
        'arg:s4:invoice_id': stateValue.plainText('in_74119'),
        'arg:s4:amount': stateValue.number('1489.00'),
        remove_steps: stateValue.checkboxes([]),
      }),
    });
    expect(payload).toEqual(fixture);
  });

  it('sends what Slack sends for untouched inputs: their initial values, or empty; typed values win', () => {
    const option = { text: { type: 'plain_text', text: 'Express' }, value: 'express' };
    const input = (blockId: string, element: Record<string, unknown>) => ({
      type: 'input',
      block_id: blockId,
      label: { type: 'plain_text', text: blockId },
      element: { action_id: 'input', ...element },
    });
    const view = {
      id: 'V0EDIT',
      blocks: [
        input('note', { type: 'plain_text_input', initial_value: 'as the agent wrote it' }),
        input('amount', { type: 'number_input', is_decimal_allowed: true, initial_value: '1489.00' }),
        input('window', { type: 'datepicker', initial_date: '2026-04-03' }),
        input('speed', { type: 'static_select', options: [option], initial_option: option }),
        input('remove_steps', { type: 'checkboxes', options: [option] }),
        input('reason', { type: 'plain_text_input' }),
        {
          type: 'input',
          label: { type: 'plain_text', text: 'no id' },
          element: { type: 'plain_text_input', action_id: 'x' },
        },
        { type: 'section', block_id: 'intro', text: { type: 'mrkdwn', text: 'not an input' } },
      ],
    };
    const payload = buildViewSubmissionPayload({
      user: { id: 'U0FIN1' },
      view,
      values: inputValues({ window: stateValue.date('2026-04-06'), reason: stateValue.plainText(null) }),
    });
    expect((payload.view as { state: unknown }).state).toEqual({
      values: {
        note: { input: { type: 'plain_text_input', value: 'as the agent wrote it' } },
        amount: { input: { type: 'number_input', value: '1489.00' } },
        window: { input: { type: 'datepicker', selected_date: '2026-04-06' } },
        speed: { input: { type: 'static_select', selected_option: option } },
        remove_steps: { input: { type: 'checkboxes', selected_options: [] } },
        reason: { input: { type: 'plain_text_input', value: null } },
      },
    });
  });

  it('builds view_closed like view_closed.json', () => {
    const fixture = slackFixture('view_closed');
    const given = z.object({ user: User, view: FixtureView }).parse(fixture);
    expect(buildViewClosedPayload({ user: given.user, view: given.view })).toMatchObject(fixture);
  });

  it('builds every state value like state_values.json', () => {
    const fixture = slackFixture('state_values');
    expect({
      plain_text_input: stateValue.plainText('Your delivery is rescheduled.'),
      number_input: stateValue.number('1489.00'),
      email_text_input: stateValue.email('ops@example.com'),
      url_text_input: stateValue.url('https://example.com/t/74991'),
      datepicker: stateValue.date('2026-04-06'),
      timepicker: stateValue.time('14:30'),
      datetimepicker: stateValue.dateTime(1775462400),
      static_select: stateValue.staticSelect({ text: 'Express', value: 'express' }),
      radio_buttons: stateValue.radioButtons({ text: 'Yes', value: 'yes' }),
      checkboxes: stateValue.checkboxes([{ text: 'Remove step s3', value: 's3' }]),
      multi_static_select: stateValue.multiStaticSelect([]),
      empty_plain_text_input: stateValue.plainText(null),
    }).toEqual(Object.fromEntries(Object.entries(fixture).filter(([key]) => key !== '_about')));
  });

  it('says which button it could not find', () => {
    expect(() => buttonAction([{ type: 'divider' }], 'approve')).toThrow(
      /no button with action_id "approve"/,
    );
  });
});

describe('driving a real Bolt app through the emulator', () => {
  const signingSecret = 'countersign-test-secret';
  const slack = createSlackEmulator({ rateLimit: false });
  const submitted: unknown[] = [];
  let app: App | undefined;
  let eventsUrl = '';

  beforeAll(async () => {
    await slack.start();
    app = new App({
      token: slack.botToken,
      signingSecret,
      logLevel: LogLevel.ERROR,
      clientOptions: { slackApiUrl: slack.url, retryConfig: { retries: 0 } },
    });
    app.action('approve', async ({ ack, body, client }) => {
      await ack();
      if (body.type !== 'block_actions') return;
      await client.views.open({
        trigger_id: body.trigger_id,
        view: {
          type: 'modal',
          callback_id: 'edit_plan',
          title: { type: 'plain_text', text: 'Edit plan' },
          submit: { type: 'plain_text', text: 'Submit edit' },
          private_metadata: JSON.stringify({ run: 'run-1', base: 1 }),
          blocks: [
            {
              type: 'input',
              block_id: 'arg:s4:amount',
              label: { type: 'plain_text', text: 'Amount' },
              element: { type: 'number_input', action_id: 'input', is_decimal_allowed: true },
            },
          ],
        },
      });
    });
    app.view('edit_plan', async ({ ack, view }) => {
      submitted.push(view.state.values);
      await ack({
        response_action: 'errors',
        errors: { 'arg:s4:amount': 'Over the invoice balance (1,200.00)' },
      });
    });
    const port = await findFreePort();
    await app.start({ port, host: '127.0.0.1' });
    eventsUrl = `http://127.0.0.1:${port}/slack/events`;
  });

  afterAll(async () => {
    await app?.stop();
    await slack.stop();
  });

  it('clicks Approve on a posted card; the app opens a modal with the trigger id it was given', async () => {
    const client = emulatorClient(slack);
    const posted = await client.chat.postMessage({
      channel: 'C0OPS',
      text: 'Plan awaiting approval',
      blocks: [approveActions('run-1|v1')],
    });
    const card = slack.state.message('C0OPS', posted.ts ?? '');
    if (!card) throw new Error('the card was not posted');

    const payload = buildBlockActionsPayload({
      user: { id: 'U0OP1', name: 'dana' },
      container: { type: 'message', channel: { id: 'C0OPS', name: 'ops-approvals' }, message: card },
      action: buttonAction(card.blocks, 'approve'),
    });
    const answer = await postInteraction(eventsUrl, signingSecret, payload);

    expect(answer.status).toBe(200);
    await vi.waitFor(() => expect(slack.state.modalStack('U0OP1')).toHaveLength(1));
    expect(slack.state.modalStack('U0OP1')[0]).toMatchObject({ callback_id: 'edit_plan' });
  });

  it('submits the modal and gets back the inline errors the app answered with', async () => {
    const view = slack.state.modalStack('U0OP1')[0];
    if (!view) throw new Error('no modal open (the previous test opens it)');
    const payload = buildViewSubmissionPayload({
      user: { id: 'U0OP1', name: 'dana' },
      view,
      values: inputValues({ 'arg:s4:amount': stateValue.number('1489.00') }),
    });
    const answer = await postInteraction(eventsUrl, signingSecret, payload);

    expect(answer).toMatchObject({
      status: 200,
      body: { response_action: 'errors', errors: { 'arg:s4:amount': 'Over the invoice balance (1,200.00)' } },
    });
    expect(submitted).toEqual([{ 'arg:s4:amount': { input: { type: 'number_input', value: '1489.00' } } }]);
  });

  it('is refused by the app with a wrong secret or a five-minute-old timestamp', async () => {
    const payload = buildBlockActionsPayload({
      user: { id: 'U0OP1' },
      container: { type: 'message', channel: { id: 'C0OPS' }, message: { ts: '1775462400.000100' } },
      action: { type: 'button', actionId: 'approve', blockId: 'decide', text: 'Approve' },
    });
    expect((await postInteraction(eventsUrl, 'wrong-secret', payload)).status).toBe(401);
    const stale = Math.floor(Date.now() / 1000) - 6 * 60;
    expect((await postInteraction(eventsUrl, signingSecret, payload, { timestamp: stale })).status).toBe(401);
  });
});
