import { WebClient } from '@slack/web-api';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { approveActions, slackError, useSlackEmulator } from '../helpers/slack-emulator.ts';
import { slackFixture } from '../helpers/slack-fixtures.ts';

const responses = slackFixture('web_api_responses');
const fixture = (method: string) => responses[method];

const card = (runId: string) => ({
  blocks: [
    { type: 'header', text: { type: 'plain_text', text: 'warehouse wants to run 2 steps' } },
    approveActions(`${runId}|v1`),
  ],
  text: 'Plan awaiting approval',
  metadata: { event_type: 'countersign_card', event_payload: { run_id: runId, version: 1 } },
});

describe('Slack emulator Web API, through @slack/web-api', () => {
  const env = useSlackEmulator({ usergroups: [{ id: 'S0FIN', handle: 'finance', users: ['U0FIN1'] }] });

  describe('auth.test', () => {
    it("answers with the bot's identity, shaped like Slack's answer", async () => {
      const answer = await env.client.auth.test();
      expect(answer).toMatchObject(fixture('auth.test') as object);
    });

    it('refuses a wrong token with invalid_auth', async () => {
      const stranger = new WebClient('xoxb-wrong', {
        slackApiUrl: env.slack.url,
        retryConfig: { retries: 0 },
      });
      expect(await slackError(stranger.auth.test())).toMatchObject({ ok: false, error: 'invalid_auth' });
    });
  });

  describe('chat.postMessage', () => {
    it('posts blocks, text and metadata, answers like Slack, and records the decoded call', async () => {
      const answer = await env.client.chat.postMessage({ channel: 'C0OPS', ...card('run-1') });

      expect(answer).toMatchObject({
        ok: true,
        channel: 'C0OPS',
        ts: expect.stringMatching(/^\d+\.\d{6}$/),
        message: {
          type: 'message',
          bot_id: 'B0BOT',
          text: 'Plan awaiting approval',
          blocks: card('run-1').blocks,
        },
      });
      expect(Object.keys(answer)).toEqual(
        expect.arrayContaining(Object.keys(fixture('chat.postMessage') as object)),
      );
      expect(env.slack.state.messages('C0OPS')).toEqual([
        expect.objectContaining({
          ts: answer.ts,
          metadata: card('run-1').metadata,
          blocks: card('run-1').blocks,
        }),
      ]);
      // WebClient form-encodes blocks and metadata as JSON strings; the record holds them decoded, without the token.
      const [call] = env.slack.calls;
      expect(call).toMatchObject({
        method: 'chat.postMessage',
        status: 200,
        args: { channel: 'C0OPS', blocks: card('run-1').blocks, metadata: card('run-1').metadata },
      });
      expect(call?.args).not.toHaveProperty('token');
    });

    it('finds a channel by name and posts to a user id as a DM', async () => {
      expect((await env.client.chat.postMessage({ channel: '#ops-approvals', text: 'hi' })).channel).toBe(
        'C0OPS',
      );
      const dm = await env.client.chat.postMessage({ channel: 'U0LEAD1', text: 'escalated to you' });
      expect(dm.channel).toMatch(/^D/);
      expect(env.slack.state.messages(dm.channel ?? '')).toHaveLength(1);
    });

    it('answers channel_not_found, no_text and thread_not_found', async () => {
      expect(await slackError(env.client.chat.postMessage({ channel: 'C0NOPE', text: 'x' }))).toMatchObject({
        error: 'channel_not_found',
      });
      expect(await slackError(env.client.chat.postMessage({ channel: 'C0OPS', text: '' }))).toMatchObject({
        error: 'no_text',
      });
      expect(
        await slackError(env.client.chat.postMessage({ channel: 'C0OPS', text: 'x', thread_ts: '1.000001' })),
      ).toMatchObject({ error: 'thread_not_found' });
    });

    it('refuses 51 blocks with invalid_blocks and the pointer Slack gives', async () => {
      const blocks = Array.from({ length: 51 }, () => ({ type: 'divider' }));
      const failure = await slackError(
        env.client.chat.postMessage({ channel: 'C0OPS', text: 'long', blocks }),
      );
      expect(failure).toMatchObject(
        (fixture('errors') as Record<string, object>)['too many blocks or a block over its limits'] ?? {},
      );
      expect(failure).toMatchObject({ errors: ['must be less than 51 items [json-pointer:/blocks]'] });
      expect(env.slack.state.messages('C0OPS')).toEqual([]);
    });

    it('refuses metadata without an event_type', async () => {
      const failure = await slackError(
        env.client.apiCall('chat.postMessage', {
          channel: 'C0OPS',
          text: 'x',
          metadata: { event_payload: {} },
        }),
      );
      expect(failure.error).toBe('invalid_metadata_format');
    });
  });

  describe('threads', () => {
    it('keeps replies out of history and lists them under their parent', async () => {
      const parent = await env.client.chat.postMessage({ channel: 'C0OPS', text: 'card' });
      const reply = await env.client.chat.postMessage({
        channel: 'C0OPS',
        text: 'diff',
        thread_ts: parent.ts ?? '',
      });

      const history = await env.client.conversations.history({ channel: 'C0OPS' });
      expect(history.messages).toEqual([
        expect.objectContaining({
          ts: parent.ts,
          thread_ts: parent.ts,
          reply_count: 1,
          latest_reply: reply.ts,
        }),
      ]);
      const thread = await env.client.conversations.replies({ channel: 'C0OPS', ts: reply.ts ?? '' });
      expect(thread.messages?.map((message) => message.text)).toEqual(['card', 'diff']);
      expect(thread.messages?.[1]).toMatchObject({ thread_ts: parent.ts, parent_user_id: 'U0BOT' });
    });
  });

  describe('chat.update and chat.delete', () => {
    it('replaces what it is given, keeps the rest, and answers like Slack', async () => {
      const posted = await env.client.chat.postMessage({ channel: 'C0OPS', ...card('run-2') });
      const answer = await env.client.chat.update({
        channel: 'C0OPS',
        ts: posted.ts ?? '',
        text: 'Approved by dana',
        blocks: [],
      });
      expect(answer).toMatchObject({ ok: true, channel: 'C0OPS', ts: posted.ts, text: 'Approved by dana' });
      expect(Object.keys(answer)).toEqual(
        expect.arrayContaining(Object.keys(fixture('chat.update') as object)),
      );
      expect(env.slack.state.message('C0OPS', posted.ts ?? '')).toMatchObject({
        text: 'Approved by dana',
        blocks: [],
        metadata: card('run-2').metadata,
        edited: { user: 'U0BOT' },
      });
    });

    it('answers message_not_found and channel_not_found', async () => {
      expect(
        await slackError(env.client.chat.update({ channel: 'C0OPS', ts: '1775462400.000100', text: 'x' })),
      ).toMatchObject(
        (fixture('errors') as Record<string, object>)['updating a message that does not exist'] ?? {},
      );
      expect(
        await slackError(env.client.chat.update({ channel: 'C0NOPE', ts: '1.000001', text: 'x' })),
      ).toMatchObject({
        error: 'channel_not_found',
      });
    });

    it('deletes a message', async () => {
      const posted = await env.client.chat.postMessage({ channel: 'C0OPS', text: 'oops' });
      expect(await env.client.chat.delete({ channel: 'C0OPS', ts: posted.ts ?? '' })).toMatchObject({
        ok: true,
        channel: 'C0OPS',
        ts: posted.ts,
      });
      expect(env.slack.state.messages('C0OPS')).toEqual([]);
      expect(
        await slackError(env.client.chat.delete({ channel: 'C0OPS', ts: posted.ts ?? '' })),
      ).toMatchObject({
        error: 'message_not_found',
      });
    });
  });

  describe('chat.postEphemeral', () => {
    it('shows a message to one user, outside history', async () => {
      const answer = await env.client.chat.postEphemeral({
        channel: 'C0OPS',
        user: 'U0OP1',
        text: 'Only finance may approve step s4.',
      });
      expect(answer).toMatchObject({ ok: true, message_ts: expect.stringMatching(/^\d+\.\d{6}$/) });
      expect(env.slack.state.ephemerals('C0OPS')).toEqual([
        expect.objectContaining({
          user: 'U0OP1',
          message_ts: answer.message_ts,
          text: 'Only finance may approve step s4.',
        }),
      ]);
      expect(env.slack.state.messages('C0OPS')).toEqual([]);
    });

    it('answers user_not_found for a stranger', async () => {
      expect(
        await slackError(env.client.chat.postEphemeral({ channel: 'C0OPS', user: 'U0NOBODY', text: 'x' })),
      ).toMatchObject({ error: 'user_not_found' });
    });
  });

  describe('conversations.open', () => {
    it('gives the same D… channel for the same set of users, in any order', async () => {
      const one = await env.client.conversations.open({ users: 'U0LEAD1,U0OP1' });
      const two = await env.client.conversations.open({ users: 'U0OP1,U0LEAD1' });
      const alone = await env.client.conversations.open({ users: 'U0LEAD1' });
      expect(one).toMatchObject({ ok: true, channel: { id: expect.stringMatching(/^D[0-9A-F]{10}$/) } });
      expect(two.channel?.id).toBe(one.channel?.id);
      expect(alone.channel?.id).not.toBe(one.channel?.id);
      const posted = await env.client.chat.postMessage({
        channel: alone.channel?.id ?? '',
        text: 'escalation',
      });
      expect(posted.channel).toBe(alone.channel?.id);
    });

    it('answers user_not_found for an unknown user', async () => {
      expect(await slackError(env.client.conversations.open({ users: 'U0NOBODY' }))).toMatchObject({
        error: 'user_not_found',
      });
    });
  });

  describe('conversations.history', () => {
    it("finds an already-posted card by its metadata (the gateway's reconcile-on-retry)", async () => {
      await env.client.chat.postMessage({ channel: 'C0OPS', ...card('run-a') });
      const wanted = await env.client.chat.postMessage({ channel: 'C0OPS', ...card('run-b') });
      await env.client.chat.postMessage({ channel: 'C0OPS', text: 'unrelated' });

      const withMetadata = await env.client.conversations.history({
        channel: 'C0OPS',
        include_all_metadata: true,
        limit: 50,
      });
      // web-api types event_payload as {}: parse it, as the gateway will.
      const CardMetadata = z.object({
        event_type: z.literal('countersign_card'),
        event_payload: z.object({ run_id: z.string() }),
      });
      const found = withMetadata.messages?.find(
        (message) => CardMetadata.safeParse(message.metadata).data?.event_payload.run_id === 'run-b',
      );
      expect(found?.ts).toBe(wanted.ts);

      const without = await env.client.conversations.history({ channel: 'C0OPS' });
      expect(without.messages?.some((message) => 'metadata' in message)).toBe(false);
    });

    it('lists newest first, pages with a cursor, and filters by oldest/latest', async () => {
      const ts: string[] = [];
      for (let i = 0; i < 5; i++)
        ts.push((await env.client.chat.postMessage({ channel: 'C0OPS', text: `m${i}` })).ts ?? '');

      const first = await env.client.conversations.history({ channel: 'C0OPS', limit: 2 });
      expect(first.messages?.map((message) => message.text)).toEqual(['m4', 'm3']);
      expect(first).toMatchObject({ has_more: true, response_metadata: { next_cursor: expect.any(String) } });

      const texts: string[] = [];
      for await (const page of env.client.paginate('conversations.history', { channel: 'C0OPS', limit: 2 })) {
        for (const message of (page as { messages?: { text?: string }[] }).messages ?? [])
          texts.push(message.text ?? '');
      }
      expect(texts).toEqual(['m4', 'm3', 'm2', 'm1', 'm0']);

      const middle = await env.client.conversations.history({
        channel: 'C0OPS',
        oldest: ts[1] ?? '',
        latest: ts[3] ?? '',
      });
      expect(middle.messages?.map((message) => message.text)).toEqual(['m2']);
      const inclusive = await env.client.conversations.history({
        channel: 'C0OPS',
        oldest: ts[1] ?? '',
        latest: ts[3] ?? '',
        inclusive: true,
      });
      expect(inclusive.messages?.map((message) => message.text)).toEqual(['m3', 'm2', 'm1']);
    });
  });

  describe('users and groups', () => {
    it('answers users.info like Slack', async () => {
      const answer = await env.client.users.info({ user: 'U0OP1' });
      expect(answer).toMatchObject(fixture('users.info') as object);
      expect(await slackError(env.client.users.info({ user: 'U0NOBODY' }))).toMatchObject({
        error: 'user_not_found',
      });
    });

    it('lists a user group', async () => {
      expect(await env.client.usergroups.users.list({ usergroup: 'S0FIN' })).toMatchObject({
        ok: true,
        users: ['U0FIN1'],
      });
      expect(await slackError(env.client.usergroups.users.list({ usergroup: 'S0NOPE' }))).toMatchObject({
        error: 'no_such_subteam',
      });
    });
  });

  it('answers unknown_method for anything else', async () => {
    expect(await slackError(env.client.apiCall('reactions.add', { channel: 'C0OPS' }))).toMatchObject({
      ok: false,
      error: 'unknown_method',
    });
  });
});
