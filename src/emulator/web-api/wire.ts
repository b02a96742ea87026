/** Messages in the form conversations.history / .replies and chat.* answer with them. */
import type { EmulatedMessage } from '../slack-objects.ts';
import { isReply, type WorkspaceState } from '../workspace.ts';

/**
 * A stored message as Slack returns it: thread fields computed from the workspace, `metadata` only when
 * asked for (conversations.* need `include_all_metadata`), `channel` left out as Slack does.
 */
export function wireMessage(
  message: EmulatedMessage,
  workspace: WorkspaceState,
  options: { readonly includeMetadata: boolean },
): { readonly [key: string]: unknown } {
  const replies = isReply(message) ? [] : workspace.replies(message.channel, message.ts);
  const latest = replies.at(-1);
  return {
    type: 'message',
    user: message.user,
    bot_id: message.bot_id,
    app_id: message.app_id,
    team: message.team,
    text: message.text,
    ts: message.ts,
    blocks: message.blocks,
    ...(message.edited ? { edited: message.edited } : {}),
    ...(isReply(message) && message.thread_ts !== undefined
      ? {
          thread_ts: message.thread_ts,
          parent_user_id: workspace.message(message.channel, message.thread_ts)?.user,
        }
      : {}),
    ...(latest
      ? {
          thread_ts: message.ts,
          reply_count: replies.length,
          reply_users_count: new Set(replies.map((reply) => reply.user)).size,
          reply_users: [...new Set(replies.map((reply) => reply.user))],
          latest_reply: latest.ts,
        }
      : {}),
    ...(options.includeMetadata && message.metadata ? { metadata: message.metadata } : {}),
  };
}

/**
 * One page of an ordered list. The cursor names the ts the next page starts at (Slack's cursors are
 * opaque base64; this one is `base64("next_ts:<ts>")`). Undefined when the cursor matches nothing.
 */
export function pageOf(
  messages: readonly EmulatedMessage[],
  limit: number,
  cursor: string | undefined,
): { readonly page: readonly EmulatedMessage[]; readonly nextCursor: string | undefined } | undefined {
  let start = 0;
  if (cursor !== undefined && cursor !== '') {
    const ts = /^next_ts:(.+)$/.exec(Buffer.from(cursor, 'base64').toString('utf8'))?.[1];
    start = messages.findIndex((message) => message.ts === ts);
    if (start < 0) return undefined;
  }
  const page = messages.slice(start, start + limit);
  const next = messages[start + limit];
  return {
    page,
    nextCursor: next === undefined ? undefined : Buffer.from(`next_ts:${next.ts}`, 'utf8').toString('base64'),
  };
}
