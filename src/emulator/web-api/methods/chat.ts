/** chat.postMessage, chat.update, chat.delete, chat.postEphemeral. */
import { z } from 'zod';
import type { EmulatedChannel } from '../../slack-objects.ts';
import type { Workspace } from '../../workspace.ts';
import { formTs, parseArgs, parseMessageBlocks, parseMetadata } from '../args.ts';
import { fail, ok, type WebApiMethod } from '../method.ts';
import { wireMessage } from '../wire.ts';

/** Slack truncates nothing: longer `text` is refused. */
const MESSAGE_TEXT_LIMIT = 40_000;

const PostMessageArgs = z.object({
  channel: z.string().optional(),
  text: z.string().optional(),
  blocks: z.unknown().optional(),
  metadata: z.unknown().optional(),
  thread_ts: formTs.optional(),
});

export const chatPostMessage: WebApiMethod = {
  run(raw, { workspace }) {
    const parsed = parseArgs(PostMessageArgs, raw);
    if (!parsed.ok) return parsed.response;
    const args = parsed.value;
    const channel = postTarget(workspace, args.channel);
    if (!channel) return fail('channel_not_found');
    const content = parseContent(args);
    if (!content.ok) return content.response;
    const metadata = parseMetadata(args.metadata);
    if (!metadata.ok) return metadata.response;
    let threadTs: string | undefined;
    if (args.thread_ts !== undefined) {
      const parent = workspace.message(channel.id, args.thread_ts);
      if (!parent) return fail('thread_not_found');
      threadTs = parent.thread_ts ?? parent.ts;
    }
    const message = workspace.postMessage({
      channel: channel.id,
      text: content.text,
      blocks: content.blocks,
      metadata: metadata.metadata,
      threadTs,
    });
    return ok({
      channel: channel.id,
      ts: message.ts,
      message: wireMessage(message, workspace, { includeMetadata: true }),
    });
  },
};

const UpdateArgs = z.object({
  channel: z.string().optional(),
  ts: formTs.optional(),
  text: z.string().optional(),
  blocks: z.unknown().optional(),
  metadata: z.unknown().optional(),
});

export const chatUpdate: WebApiMethod = {
  run(raw, { workspace }) {
    const parsed = parseArgs(UpdateArgs, raw);
    if (!parsed.ok) return parsed.response;
    const args = parsed.value;
    const channel = args.channel === undefined ? undefined : workspace.channel(args.channel);
    if (!channel) return fail('channel_not_found');
    if (args.ts === undefined || !workspace.message(channel.id, args.ts)) return fail('message_not_found');
    const blocks = parseMessageBlocks(args.blocks);
    if (!blocks.ok) return blocks.response;
    const metadata = parseMetadata(args.metadata);
    if (!metadata.ok) return metadata.response;
    if (args.text === undefined && blocks.blocks === undefined && metadata.metadata === undefined) {
      return fail('no_text');
    }
    if (args.text !== undefined && args.text.length > MESSAGE_TEXT_LIMIT) return fail('msg_too_long');
    // Fields left out keep their value; to remove blocks, send `blocks: []` (as with Slack).
    const updated = workspace.updateMessage(channel.id, args.ts, {
      text: args.text,
      blocks: blocks.blocks,
      metadata: metadata.metadata,
    });
    if (!updated) return fail('message_not_found');
    return ok({
      channel: channel.id,
      ts: updated.ts,
      text: updated.text,
      message: wireMessage(updated, workspace, { includeMetadata: true }),
    });
  },
};

const DeleteArgs = z.object({ channel: z.string().optional(), ts: formTs.optional() });

export const chatDelete: WebApiMethod = {
  run(raw, { workspace }) {
    const parsed = parseArgs(DeleteArgs, raw);
    if (!parsed.ok) return parsed.response;
    const { channel: channelArg, ts } = parsed.value;
    const channel = channelArg === undefined ? undefined : workspace.channel(channelArg);
    if (!channel) return fail('channel_not_found');
    if (ts === undefined || !workspace.deleteMessage(channel.id, ts)) return fail('message_not_found');
    return ok({ channel: channel.id, ts });
  },
};

const PostEphemeralArgs = z.object({
  channel: z.string().optional(),
  user: z.string().optional(),
  text: z.string().optional(),
  blocks: z.unknown().optional(),
  thread_ts: formTs.optional(),
});

export const chatPostEphemeral: WebApiMethod = {
  run(raw, { workspace }) {
    const parsed = parseArgs(PostEphemeralArgs, raw);
    if (!parsed.ok) return parsed.response;
    const args = parsed.value;
    const channel = args.channel === undefined ? undefined : workspace.channel(args.channel);
    if (!channel) return fail('channel_not_found');
    if (args.user === undefined || !workspace.user(args.user)) return fail('user_not_found');
    if (channel.is_im && !channel.members.includes(args.user)) return fail('user_not_in_channel');
    const content = parseContent(args);
    if (!content.ok) return content.response;
    const ephemeral = workspace.postEphemeral({
      channel: channel.id,
      user: args.user,
      text: content.text,
      blocks: content.blocks,
      threadTs: args.thread_ts,
    });
    return ok({ message_ts: ephemeral.message_ts });
  },
};

/** A channel by id or name; a user id means the app's DM with that user (as chat.postMessage allows). */
function postTarget(workspace: Workspace, channel: string | undefined): EmulatedChannel | undefined {
  if (channel === undefined) return undefined;
  const found = workspace.channel(channel);
  if (found) return found;
  return /^[UW]/.test(channel) && workspace.user(channel) ? workspace.openDm([channel]) : undefined;
}

/** `text` and/or `blocks` of a new message: at least one, within limits. */
function parseContent(args: { readonly text?: string | undefined; readonly blocks?: unknown }) {
  const blocks = parseMessageBlocks(args.blocks);
  if (!blocks.ok) return blocks;
  const text = args.text ?? '';
  if (text === '' && (blocks.blocks === undefined || blocks.blocks.length === 0)) {
    return { ok: false as const, response: fail('no_text') };
  }
  if (text.length > MESSAGE_TEXT_LIMIT) return { ok: false as const, response: fail('msg_too_long') };
  return { ok: true as const, text, blocks: blocks.blocks ?? [] };
}

const PermalinkArgs = z.object({ channel: z.string().optional(), message_ts: formTs.optional() });

/** chat.getPermalink: `https://<domain>.slack.com/archives/<channel>/p<ts without the dot>`, as Slack's. */
export const chatGetPermalink: WebApiMethod = {
  run(raw, { workspace }) {
    const parsed = parseArgs(PermalinkArgs, raw);
    if (!parsed.ok) return parsed.response;
    const { channel, message_ts: ts } = parsed.value;
    if (channel === undefined || ts === undefined) return fail('invalid_arguments');
    const message = workspace.message(channel, ts);
    if (!message) return fail('message_not_found');
    const thread =
      message.thread_ts === undefined || message.thread_ts === message.ts
        ? ''
        : `?thread_ts=${message.thread_ts}&cid=${channel}`;
    const permalink = `https://${workspace.identity.teamDomain}.slack.com/archives/${channel}/p${ts.replace('.', '')}${thread}`;
    return ok({ channel, permalink });
  },
};
