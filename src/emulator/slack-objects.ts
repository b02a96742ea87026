/**
 * The Slack objects the emulator stores and answers with, in Slack's own (snake_case) wire shape so they
 * can be returned as is and compared with test/fixtures/slack-protocol. Block Kit content stays opaque
 * (`Block`): the emulator checks its limits (block-kit-limits.ts) but does not model every element.
 */

/** A Block Kit block or element: a JSON object whose shape block-kit-limits.ts checks. */
export type Block = { readonly [key: string]: unknown };

/** Message metadata as chat.postMessage takes it. */
export interface MessageMetadata {
  readonly event_type: string;
  readonly event_payload: { readonly [key: string]: unknown };
}

/** A message the bot posted, as stored (thread counters are computed when it is read). */
export interface EmulatedMessage {
  readonly channel: string;
  readonly ts: string;
  /** Set on replies (the parent's ts); parents get it in wire form once they have replies. */
  readonly thread_ts?: string;
  readonly text: string;
  readonly blocks: readonly Block[];
  readonly metadata?: MessageMetadata;
  /** The bot user that posted it. */
  readonly user: string;
  readonly bot_id: string;
  readonly app_id: string;
  readonly team: string;
  readonly edited?: { readonly user: string; readonly ts: string };
}

/** An ephemeral message: only `user` sees it, and it is never in history. */
export interface EmulatedEphemeral {
  readonly channel: string;
  /** The one user who sees it. */
  readonly user: string;
  readonly message_ts: string;
  readonly thread_ts?: string;
  readonly text: string;
  readonly blocks: readonly Block[];
}

/** A plain_text object. */
export interface PlainText {
  readonly type: 'plain_text';
  readonly text: string;
  readonly emoji?: boolean | undefined;
}

/** `view.state.values[block_id][action_id]` (see state-values.ts for each element's value). */
export type ViewStateValues = { readonly [blockId: string]: { readonly [actionId: string]: Block } };

/** A modal or App Home view, exactly as views.* answer with it. */
export interface SlackView {
  readonly id: string;
  readonly team_id: string;
  readonly type: 'modal' | 'home';
  readonly title?: PlainText;
  readonly submit?: PlainText;
  readonly close?: PlainText;
  readonly blocks: readonly Block[];
  readonly private_metadata: string;
  readonly callback_id: string;
  readonly external_id: string;
  readonly state: { readonly values: ViewStateValues };
  readonly hash: string;
  readonly clear_on_close: boolean;
  readonly notify_on_close: boolean;
  readonly root_view_id: string | null;
  readonly previous_view_id: string | null;
  readonly app_id: string;
  readonly app_installed_team_id: string;
  readonly bot_id: string;
}

/** A workspace member as users.info answers. */
export interface SlackUser {
  readonly id: string;
  readonly team_id: string;
  readonly name: string;
  readonly real_name: string;
  readonly tz: string;
  readonly is_bot: boolean;
  readonly deleted: boolean;
  readonly profile: { readonly real_name: string; readonly display_name: string };
}

/** A conversation the bot can post to: a channel, or a DM opened with conversations.open. */
export interface EmulatedChannel {
  readonly id: string;
  /** Channel name without '#'; DMs have none. */
  readonly name?: string;
  readonly is_im: boolean;
  /** For DMs: the users in it (besides the bot). */
  readonly members: readonly string[];
}

/** A user group (S…) and its members, for usergroups.users.list. */
export interface EmulatedUsergroup {
  readonly id: string;
  readonly handle: string;
  readonly users: readonly string[];
}

/** Who the bot is, and where: answered by auth.test and stamped on every message and view. */
export interface EmulatedIdentity {
  readonly teamId: string;
  readonly teamName: string;
  readonly teamDomain: string;
  readonly botUserId: string;
  readonly botUserName: string;
  readonly botId: string;
  readonly appId: string;
}
