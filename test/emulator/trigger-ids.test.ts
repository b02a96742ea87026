import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  buildBlockActionsPayload,
  buttonAction,
  createSlackEmulator,
  mintTriggerId,
} from '../../src/emulator/index.ts';
import { approveActions, emulatorClient, slackError, useSlackEmulator } from '../helpers/slack-emulator.ts';

const modal = (title: string) => ({
  type: 'modal' as const,
  title: { type: 'plain_text' as const, text: title },
  blocks: [],
});

describe('Slack emulator trigger ids: good for 3 s on its clock, and for one view', () => {
  let nowMs = 1_775_462_400_000;
  const env = useSlackEmulator({ now: () => nowMs });

  it('opens a modal 2.999 s after the click, and answers expired_trigger_id at 3 s', async () => {
    const late = mintTriggerId('U0OP1', { nowMs });
    const inTime = mintTriggerId('U0FIN1', { nowMs });
    nowMs += 2_999;
    await env.client.views.open({ trigger_id: inTime, view: modal('Edit plan') });
    nowMs += 1;

    expect(
      await slackError(env.client.views.open({ trigger_id: late, view: modal('Edit plan') })),
    ).toMatchObject({ error: 'expired_trigger_id' });
    expect(env.slack.state.modalStack('U0FIN1')).toHaveLength(1);
    expect(env.slack.state.modalStack('U0OP1')).toEqual([]);
  });

  it('expires the trigger id of a click payload built on the same clock', async () => {
    const card = await env.client.chat.postMessage({
      channel: 'C0OPS',
      text: 'plan',
      blocks: [approveActions('run-1|v1')],
    });
    const message = env.slack.state.message('C0OPS', z.string().parse(card.ts));
    if (message === undefined) throw new Error('the card was not posted');
    const click = buildBlockActionsPayload({
      user: { id: 'U0OP1' },
      container: { type: 'message', channel: { id: 'C0OPS' }, message },
      action: buttonAction(message.blocks, 'approve'),
      nowMs,
    });
    nowMs += 3_500;
    expect(
      await slackError(env.client.views.open({ trigger_id: click.trigger_id, view: modal('Edit') })),
    ).toMatchObject({
      error: 'expired_trigger_id',
    });
  });

  it('answers exchanged_trigger_id to a second views.open or views.push with the same trigger id', async () => {
    const triggerId = mintTriggerId('U0OP1', { nowMs });
    await env.client.views.open({ trigger_id: triggerId, view: modal('Edit plan') });
    expect(
      await slackError(env.client.views.open({ trigger_id: triggerId, view: modal('Again') })),
    ).toMatchObject({ error: 'exchanged_trigger_id' });
    expect(
      await slackError(env.client.views.push({ trigger_id: triggerId, view: modal('Pushed') })),
    ).toMatchObject({ error: 'exchanged_trigger_id' });
    expect(env.slack.state.modalStack('U0OP1').map((view) => view.title?.text)).toEqual(['Edit plan']);
  });

  it('expires trigger ids for views.push too', async () => {
    await env.client.views.open({ trigger_id: mintTriggerId('U0OP1', { nowMs }), view: modal('Edit plan') });
    const push = mintTriggerId('U0OP1', { nowMs });
    nowMs += 3_000;
    expect(
      await slackError(env.client.views.push({ trigger_id: push, view: modal('Step 2') })),
    ).toMatchObject({
      error: 'expired_trigger_id',
    });
  });

  it('keeps an expired trigger id expired, and never expires foreign ones (their time is unknown)', async () => {
    const triggerId = mintTriggerId('U0OP1', { nowMs: nowMs - 10_000 });
    for (let i = 0; i < 2; i++) {
      expect(
        await slackError(env.client.views.open({ trigger_id: triggerId, view: modal('x') })),
      ).toMatchObject({
        error: 'expired_trigger_id',
      });
    }
    const fixture = '7777777777.1111111111.abcdef0123456789';
    nowMs += 60_000;
    await env.client.views.open({ trigger_id: fixture, view: modal('Edit plan') });
  });
});

describe('Slack emulator triggerTtlMs', () => {
  it('sets how long a trigger id stays good', async () => {
    let nowMs = 1_775_462_400_000;
    const slack = createSlackEmulator({ rateLimit: false, triggerTtlMs: 500, now: () => nowMs });
    await slack.start();
    try {
      const client = emulatorClient(slack);
      const early = mintTriggerId('U0OP1', { nowMs });
      const late = mintTriggerId('U0FIN1', { nowMs });
      nowMs += 499;
      await client.views.open({ trigger_id: early, view: modal('In time') });
      nowMs += 1;
      expect(
        await slackError(client.views.open({ trigger_id: late, view: modal('Too late') })),
      ).toMatchObject({
        error: 'expired_trigger_id',
      });
    } finally {
      await slack.stop();
    }
  });

  it('refuses a negative time to live', () => {
    expect(() => createSlackEmulator({ triggerTtlMs: -1 })).toThrow(RangeError);
  });
});
