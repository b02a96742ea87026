/** conversations.open, conversations.history, conversations.replies. */
import { z } from 'zod';
import { tsToMicros } from '../../ids.ts';
import type { EmulatedMessage } from '../../slack-objects.ts';
import { formBool, formInt, formTs, parseArgs } from '../args.ts';
import { fail, ok, type SlackResponse, type WebApiMethod } from '../method.ts';
import { pageOf, wireMessage } from '../wire.ts';

/** Slack allows a group DM of at most 8 people besides the app. */
const MAX_DM_USERS = 8;

const OpenArgs = z.object({
  channel: z.string().optional(),
  users: z.union([z.string(), z.array(z.string())]).optional(),
});

export const conversationsOpen: WebApiMethod = {
  run(raw, { workspace }) {
    const parsed = parseArgs(OpenArgs, raw);
    if (!parsed.ok) return parsed.response;
    const { channel, users } = parsed.value;
    if (channel !== undefined) {
      const found = workspace.channel(channel);
      return found ? ok({ channel: { id: found.id } }) : fail('channel_not_found');
    }
    const ids = (typeof users === 'string' ? users.split(',') : (users ?? []))
      .map((id) => id.trim())
      .filter(Boolean);
    if (ids.length === 0) return fail('users_list_not_supplied');
    if (new Set(ids).size > MAX_DM_USERS) return fail('too_many_users');
    if (ids.some((id) => !workspace.user(id))) return fail('user_not_found');
    return ok({ channel: { id: workspace.openDm(ids).id } });
  },
};

const ListArgs = z.object({
  channel: z.string().optional(),
  limit: formInt.optional(),
  oldest: formTs.optional(),
  latest: formTs.optional(),
  inclusive: formBool.optional(),
  include_all_metadata: formBool.optional(),
  cursor: z.string().optional(),
});

/** Newest first, top-level messages only; metadata only with include_all_metadata (as Slack). */
export const conversationsHistory: WebApiMethod = {
  run(raw, { workspace }) {
    const parsed = parseArgs(ListArgs, raw);
    if (!parsed.ok) return parsed.response;
    const args = parsed.value;
    const channel = args.channel === undefined ? undefined : workspace.channel(args.channel);
    if (!channel) return fail('channel_not_found');
    const inRange = timeRange(args);
    if (!inRange.ok) return inRange.response;
    const newestFirst = workspace.messages(channel.id).filter(inRange.test).reverse();
    const paged = pageOf(newestFirst, clampLimit(args.limit, 100, 999), args.cursor);
    if (!paged) return fail('invalid_cursor');
    return ok({
      messages: paged.page.map((message) =>
        wireMessage(message, workspace, { includeMetadata: args.include_all_metadata ?? false }),
      ),
      has_more: paged.nextCursor !== undefined,
      pin_count: 0,
      channel_actions_ts: null,
      channel_actions_count: 0,
      ...(paged.nextCursor === undefined ? {} : { response_metadata: { next_cursor: paged.nextCursor } }),
    });
  },
};

const RepliesArgs = ListArgs.extend({ ts: formTs.optional() });

/** The parent, then its replies, oldest first. `ts` may name the parent or any reply. */
export const conversationsReplies: WebApiMethod = {
  run(raw, { workspace }) {
    const parsed = parseArgs(RepliesArgs, raw);
    if (!parsed.ok) return parsed.response;
    const args = parsed.value;
    const channel = args.channel === undefined ? undefined : workspace.channel(args.channel);
    if (!channel) return fail('channel_not_found');
    const named = args.ts === undefined ? undefined : workspace.message(channel.id, args.ts);
    const parent = named && workspace.message(channel.id, named.thread_ts ?? named.ts);
    if (!parent) return fail('thread_not_found');
    const inRange = timeRange(args);
    if (!inRange.ok) return inRange.response;
    // Slack always answers with the parent first, whatever the range.
    const thread = [parent, ...workspace.replies(channel.id, parent.ts).filter(inRange.test)];
    const paged = pageOf(thread, clampLimit(args.limit, 1000, 1000), args.cursor);
    if (!paged) return fail('invalid_cursor');
    return ok({
      messages: paged.page.map((message) =>
        wireMessage(message, workspace, { includeMetadata: args.include_all_metadata ?? false }),
      ),
      has_more: paged.nextCursor !== undefined,
      ...(paged.nextCursor === undefined ? {} : { response_metadata: { next_cursor: paged.nextCursor } }),
    });
  },
};

function clampLimit(limit: number | undefined, fallback: number, max: number): number {
  return limit === undefined || limit <= 0 ? fallback : Math.min(limit, max);
}

/** `oldest` / `latest` bounds (exclusive unless `inclusive`), as a predicate on messages. */
function timeRange(args: {
  readonly oldest?: string | undefined;
  readonly latest?: string | undefined;
  readonly inclusive?: boolean | undefined;
}):
  | { readonly ok: true; readonly test: (message: EmulatedMessage) => boolean }
  | { readonly ok: false; readonly response: SlackResponse } {
  const oldest = args.oldest === undefined ? undefined : tsToMicros(args.oldest);
  if (args.oldest !== undefined && oldest === undefined)
    return { ok: false, response: fail('invalid_ts_oldest') };
  const latest = args.latest === undefined ? undefined : tsToMicros(args.latest);
  if (args.latest !== undefined && latest === undefined)
    return { ok: false, response: fail('invalid_ts_latest') };
  const inclusive = args.inclusive ?? false;
  return {
    ok: true,
    test: (message) => {
      const ts = tsToMicros(message.ts) ?? 0n;
      if (oldest !== undefined && (inclusive ? ts < oldest : ts <= oldest)) return false;
      if (latest !== undefined && (inclusive ? ts > latest : ts >= latest)) return false;
      return true;
    },
  };
}
