import { describe, expect, it } from 'vitest';
import { mintTriggerId, type WorkspaceEvent } from '../../src/emulator/index.ts';
import { slackError, useSlackEmulator } from '../helpers/slack-emulator.ts';

const plain = (text: string) => ({ type: 'plain_text' as const, text });
const modal = (title: string, extra: Record<string, unknown> = {}) => ({
  type: 'modal' as const,
  callback_id: 'edit_plan',
  title: plain(title),
  submit: plain('Submit edit'),
  private_metadata: JSON.stringify({ run: 'run-1', base: 1 }),
  blocks: [
    {
      type: 'input',
      block_id: 'arg:s4:amount',
      label: plain('Amount'),
      element: { type: 'number_input', action_id: 'input', is_decimal_allowed: true },
    },
  ],
  ...extra,
});
const FIXTURE_TRIGGER = '7777777777.1111111111.abcdef0123456789';

describe('Slack emulator views.*', () => {
  const env = useSlackEmulator();
  const trigger = (user = 'U0OP1') => mintTriggerId(user);

  describe('views.open', () => {
    it("opens a modal on the trigger's user's stack and answers with id and hash", async () => {
      const answer = await env.client.views.open({ trigger_id: trigger('U0FIN1'), view: modal('Edit plan') });
      expect(answer.view).toMatchObject({
        id: expect.stringMatching(/^V/),
        hash: expect.stringMatching(/^\d+\.[0-9a-f]{8}$/),
        type: 'modal',
        callback_id: 'edit_plan',
        private_metadata: '{"run":"run-1","base":1}',
        root_view_id: answer.view?.id,
        previous_view_id: null,
        state: { values: {} },
      });
      expect(env.slack.state.modalStack('U0FIN1').map((view) => view.id)).toEqual([answer.view?.id]);
    });

    it('accepts a Slack-shaped trigger id once, and refuses a reused or malformed one', async () => {
      await env.client.views.open({ trigger_id: FIXTURE_TRIGGER, view: modal('Edit plan') });
      expect(
        await slackError(env.client.views.open({ trigger_id: FIXTURE_TRIGGER, view: modal('Again') })),
      ).toMatchObject({
        error: 'exchanged_trigger_id',
      });
      expect(
        await slackError(env.client.views.open({ trigger_id: 'not-a-trigger', view: modal('x') })),
      ).toMatchObject({
        error: 'invalid_trigger_id',
      });
    });

    it('refuses a view over its limits with invalid_arguments and Slack-style pointers, keeping the trigger', async () => {
      const triggerId = trigger();
      const failure = await slackError(
        env.client.views.open({ trigger_id: triggerId, view: modal('A title longer than 24 chars') }),
      );
      expect(failure).toMatchObject({
        ok: false,
        error: 'invalid_arguments',
        response_metadata: {
          messages: ['[ERROR] must be less than 25 characters [json-pointer:/view/title/text]'],
        },
      });
      // The failed call did not use the trigger up.
      await env.client.views.open({ trigger_id: triggerId, view: modal('Edit plan') });
    });

    it('refuses 101 blocks and private_metadata over 3000 characters', async () => {
      const blocks = Array.from({ length: 101 }, (_, i) => ({ type: 'section', text: plain(`step ${i}`) }));
      expect(
        await slackError(env.client.views.open({ trigger_id: trigger(), view: modal('Edit', { blocks }) })),
      ).toMatchObject({
        error: 'invalid_arguments',
        response_metadata: { messages: ['[ERROR] must be less than 101 items [json-pointer:/view/blocks]'] },
      });
      expect(
        await slackError(
          env.client.views.open({
            trigger_id: trigger(),
            view: modal('Edit', { private_metadata: 'x'.repeat(3001) }),
          }),
        ),
      ).toMatchObject({
        error: 'invalid_arguments',
        response_metadata: {
          messages: ['[ERROR] must be less than 3001 characters [json-pointer:/view/private_metadata]'],
        },
      });
    });

    it('replaces the user’s open modals, which then can no longer be updated', async () => {
      const events: WorkspaceEvent[] = [];
      const unsubscribe = env.slack.state.subscribe((event) => events.push(event));
      const first = await env.client.views.open({ trigger_id: trigger(), view: modal('First') });
      const second = await env.client.views.open({ trigger_id: trigger(), view: modal('Second') });
      unsubscribe();

      expect(env.slack.state.modalStack('U0OP1').map((view) => view.id)).toEqual([second.view?.id]);
      expect(events.map((event) => event.type).filter((type) => type !== 'api_call')).toEqual([
        'view_opened',
        'view_closed',
        'view_opened',
      ]);
      expect(
        await slackError(env.client.views.update({ view_id: first.view?.id ?? '', view: modal('Late') })),
      ).toMatchObject({ error: 'not_found' });
    });
  });

  describe('views.update', () => {
    it('updates by view_id with the current hash and hands out a new hash', async () => {
      const opened = await env.client.views.open({ trigger_id: trigger(), view: modal('Edit plan') });
      const updated = await env.client.views.update({
        view_id: opened.view?.id ?? '',
        hash: opened.view?.hash ?? '',
        view: modal('Edit plan · step 2'),
      });
      expect(updated.view).toMatchObject({ id: opened.view?.id, title: { text: 'Edit plan · step 2' } });
      expect(updated.view?.hash).not.toBe(opened.view?.hash);
    });

    it('answers hash_conflict to an update based on a stale hash', async () => {
      const opened = await env.client.views.open({ trigger_id: trigger(), view: modal('Edit plan') });
      const staleHash = opened.view?.hash ?? '';
      await env.client.views.update({
        view_id: opened.view?.id ?? '',
        hash: staleHash,
        view: modal('First edit'),
      });

      const failure = await slackError(
        env.client.views.update({
          view_id: opened.view?.id ?? '',
          hash: staleHash,
          view: modal('Racing edit'),
        }),
      );
      expect(failure).toMatchObject({ ok: false, error: 'hash_conflict' });
      expect(env.slack.state.view(opened.view?.id ?? '')?.title?.text).toBe('First edit');
    });

    it('updates by external_id, and answers not_found for an unknown view', async () => {
      await env.client.views.open({
        trigger_id: trigger(),
        view: modal('Edit', { external_id: 'edit-run-1' }),
      });
      const updated = await env.client.views.update({ external_id: 'edit-run-1', view: modal('Edited') });
      expect(updated.view).toMatchObject({ external_id: 'edit-run-1', title: { text: 'Edited' } });
      expect(await slackError(env.client.views.update({ view_id: 'V404', view: modal('x') }))).toMatchObject({
        error: 'not_found',
      });
    });
  });

  describe('views.push', () => {
    it('stacks up to 3 views, then answers push_limit_reached', async () => {
      const root = await env.client.views.open({ trigger_id: trigger(), view: modal('Pick a step') });
      const second = await env.client.views.push({ trigger_id: trigger(), view: modal('Step s4') });
      const third = await env.client.views.push({ trigger_id: trigger(), view: modal('Confirm') });
      expect(second.view).toMatchObject({ root_view_id: root.view?.id, previous_view_id: root.view?.id });
      expect(third.view).toMatchObject({ root_view_id: root.view?.id, previous_view_id: second.view?.id });

      expect(
        await slackError(env.client.views.push({ trigger_id: trigger(), view: modal('Fourth') })),
      ).toMatchObject({
        error: 'push_limit_reached',
      });
      expect(env.slack.state.modalStack('U0OP1')).toHaveLength(3);
    });

    it('needs an open modal to push onto', async () => {
      expect(
        await slackError(env.client.views.push({ trigger_id: trigger('U0LEAD1'), view: modal('x') })),
      ).toMatchObject({
        error: 'not_found',
      });
    });
  });

  describe('views.publish', () => {
    const home = (text: string) => ({
      type: 'home' as const,
      blocks: [{ type: 'section', text: plain(text) }],
    });

    it('publishes a Home tab whose id stays the same, and protects it with its hash', async () => {
      const first = await env.client.views.publish({ user_id: 'U0OP1', view: home('2 plans wait for you') });
      expect(first.view).toMatchObject({ id: expect.stringMatching(/^V/), type: 'home' });
      const second = await env.client.views.publish({
        user_id: 'U0OP1',
        hash: first.view?.hash ?? '',
        view: home('1 plan waits for you'),
      });
      expect(second.view?.id).toBe(first.view?.id);
      expect(
        await slackError(
          env.client.views.publish({ user_id: 'U0OP1', hash: first.view?.hash ?? '', view: home('stale') }),
        ),
      ).toMatchObject({ error: 'hash_conflict' });
      expect(env.slack.state.homeView('U0OP1')?.blocks).toEqual(home('1 plan waits for you').blocks);
    });

    it('publishes only home views, for known users', async () => {
      expect(
        await slackError(env.client.views.publish({ user_id: 'U0OP1', view: modal('x') })),
      ).toMatchObject({
        error: 'invalid_arguments',
      });
      expect(
        await slackError(env.client.views.publish({ user_id: 'U0NOBODY', view: home('x') })),
      ).toMatchObject({
        error: 'user_not_found',
      });
    });
  });
});
