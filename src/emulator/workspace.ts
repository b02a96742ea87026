/**
 * The emulated workspace: channels, DMs, users, groups, messages (with threads and metadata), ephemeral
 * messages, modal stacks and Home tabs. The Web API methods are its only writers; everyone else gets the
 * read-only {@link WorkspaceState} and can subscribe to its {@link WorkspaceEvent}s.
 *
 * Stored objects are deep-frozen, so readers can hand them out without copying.
 */
import { dmChannelId, type IdMint } from './ids.ts';
import type {
  Block,
  EmulatedChannel,
  EmulatedEphemeral,
  EmulatedIdentity,
  EmulatedMessage,
  EmulatedUsergroup,
  MessageMetadata,
  PlainText,
  SlackUser,
  SlackView,
  ViewStateValues,
} from './slack-objects.ts';
import type { WorkspaceEvent, WorkspaceListener } from './workspace-events.ts';

/** A user to seed the workspace with. */
export interface UserSeed {
  readonly id: string;
  readonly name: string;
  readonly real_name: string;
  readonly tz?: string;
}

/** A channel to seed the workspace with. */
export interface ChannelSeed {
  readonly id: string;
  readonly name: string;
}

/** What the workspace starts with; reset() returns to it. */
export interface WorkspaceSeed {
  readonly identity: EmulatedIdentity;
  readonly users: readonly UserSeed[];
  readonly channels: readonly ChannelSeed[];
  readonly usergroups: readonly EmulatedUsergroup[];
}

/** A view as the app sends it (already checked against Block Kit limits). */
export interface ViewSpec {
  readonly type: 'modal' | 'home';
  readonly title?: PlainText | undefined;
  readonly submit?: PlainText | undefined;
  readonly close?: PlainText | undefined;
  readonly blocks: readonly Block[];
  readonly private_metadata?: string | undefined;
  readonly callback_id?: string | undefined;
  readonly external_id?: string | undefined;
  readonly clear_on_close?: boolean | undefined;
  readonly notify_on_close?: boolean | undefined;
}

/** Read-only access to the workspace, for tests and the (future) live page. */
export interface WorkspaceState {
  readonly identity: EmulatedIdentity;
  users(): readonly SlackUser[];
  user(id: string): SlackUser | undefined;
  usergroup(id: string): EmulatedUsergroup | undefined;
  channels(): readonly EmulatedChannel[];
  /** By id (`C…`, `D…`) or by name, with or without `#`. */
  channel(idOrName: string): EmulatedChannel | undefined;
  /** Top-level messages of a channel, oldest first (thread replies excluded). */
  messages(channel: string): readonly EmulatedMessage[];
  /** Any message, reply or not. */
  message(channel: string, ts: string): EmulatedMessage | undefined;
  /** The replies in a thread (not the parent), oldest first. */
  replies(channel: string, threadTs: string): readonly EmulatedMessage[];
  /** Ephemeral messages, oldest first, optionally for one channel. */
  ephemerals(channel?: string): readonly EmulatedEphemeral[];
  view(id: string): SlackView | undefined;
  /** The open modal stack shown to `userId` (bottom first); `undefined` = opened by a trigger with no user. */
  modalStack(userId: string | undefined): readonly SlackView[];
  homeView(userId: string): SlackView | undefined;
  /** Call `listener` on every change; returns the unsubscribe function. */
  subscribe(listener: WorkspaceListener): () => void;
}

/** Why a modal could not be pushed. */
export type PushRefusal = 'no_open_modal' | 'push_limit_reached';

/** Slack allows at most this many views in one modal stack. */
export const MODAL_STACK_LIMIT = 3;

// Modal stacks are keyed by user id; triggers that carry no user share this key.
const NO_USER = '';

/** The mutable workspace. Only the Web API methods write to it. */
export class Workspace implements WorkspaceState {
  readonly identity: EmulatedIdentity;
  readonly #seed: WorkspaceSeed;
  readonly #ids: IdMint;
  readonly #onListenerError: (error: unknown) => void;
  readonly #listeners = new Set<WorkspaceListener>();

  #users = new Map<string, SlackUser>();
  #channels = new Map<string, EmulatedChannel>();
  #messages = new Map<string, EmulatedMessage[]>();
  #ephemerals: EmulatedEphemeral[] = [];
  #views = new Map<string, SlackView>();
  #viewOwner = new Map<string, string>();
  #stacks = new Map<string, string[]>();
  #lastStackKey: string | undefined;
  #homes = new Map<string, string>();
  /** User groups whose members changed since the seed. */
  #usergroupMembers = new Map<string, readonly string[]>();
  #exchangedTriggers = new Set<string>();

  constructor(seed: WorkspaceSeed, ids: IdMint, onListenerError: (error: unknown) => void) {
    this.identity = Object.freeze({ ...seed.identity });
    this.#seed = seed;
    this.#ids = ids;
    this.#onListenerError = onListenerError;
    this.#load();
  }

  // --- reading ---------------------------------------------------------------------------------------

  users(): readonly SlackUser[] {
    return [...this.#users.values()];
  }

  user(id: string): SlackUser | undefined {
    return this.#users.get(id);
  }

  usergroup(id: string): EmulatedUsergroup | undefined {
    const users = this.#usergroupMembers.get(id);
    const group = this.#seed.usergroups.find((candidate) => candidate.id === id);
    return group === undefined || users === undefined ? group : { ...group, users };
  }

  /** Someone changed a user group's members in Slack (kept until `reset()`). */
  setUsergroupMembers(id: string, users: readonly string[]): void {
    if (!this.#seed.usergroups.some((group) => group.id === id)) throw new Error(`no user group ${id}`);
    this.#usergroupMembers.set(id, [...users]);
  }

  channels(): readonly EmulatedChannel[] {
    return [...this.#channels.values()];
  }

  channel(idOrName: string): EmulatedChannel | undefined {
    const byId = this.#channels.get(idOrName);
    if (byId) return byId;
    const name = idOrName.replace(/^#/, '');
    return [...this.#channels.values()].find((channel) => channel.name === name);
  }

  messages(channel: string): readonly EmulatedMessage[] {
    return (this.#messages.get(channel) ?? []).filter((message) => !isReply(message));
  }

  message(channel: string, ts: string): EmulatedMessage | undefined {
    return this.#messages.get(channel)?.find((message) => message.ts === ts);
  }

  replies(channel: string, threadTs: string): readonly EmulatedMessage[] {
    return (this.#messages.get(channel) ?? []).filter(
      (message) => isReply(message) && message.thread_ts === threadTs,
    );
  }

  ephemerals(channel?: string): readonly EmulatedEphemeral[] {
    return channel === undefined
      ? [...this.#ephemerals]
      : this.#ephemerals.filter((e) => e.channel === channel);
  }

  view(id: string): SlackView | undefined {
    return this.#views.get(id);
  }

  modalStack(userId: string | undefined): readonly SlackView[] {
    return (this.#stacks.get(userId ?? NO_USER) ?? []).flatMap((id) => this.#views.get(id) ?? []);
  }

  homeView(userId: string): SlackView | undefined {
    const id = this.#homes.get(userId);
    return id === undefined ? undefined : this.#views.get(id);
  }

  /** An open modal or a Home view with this external_id. */
  viewByExternalId(externalId: string): SlackView | undefined {
    return [...this.#views.values()].find((view) => view.external_id === externalId && this.isLive(view.id));
  }

  /** True for a modal still on a stack, or a published Home view. */
  isLive(viewId: string): boolean {
    const view = this.#views.get(viewId);
    if (!view) return false;
    if (view.type === 'home') return true;
    const stack = this.#stacks.get(this.#viewOwner.get(viewId) ?? NO_USER);
    return stack?.includes(viewId) ?? false;
  }

  subscribe(listener: WorkspaceListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  // --- writing (Web API methods only) --------------------------------------------------------------------

  /** Publish an event that is not a state change (e.g. a recorded API call). */
  emit(event: WorkspaceEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
  }

  /** The DM channel with these users, created on first use. */
  openDm(userIds: readonly string[]): EmulatedChannel {
    const id = dmChannelId(userIds);
    const existing = this.#channels.get(id);
    if (existing) return existing;
    const channel = deepFreeze({ id, is_im: true, members: [...new Set(userIds)].sort() });
    this.#channels.set(id, channel);
    return channel;
  }

  postMessage(input: {
    readonly channel: string;
    readonly text: string;
    readonly blocks: readonly Block[];
    readonly metadata?: MessageMetadata | undefined;
    readonly threadTs?: string | undefined;
  }): EmulatedMessage {
    const { identity } = this;
    const message: EmulatedMessage = deepFreeze({
      channel: input.channel,
      ts: this.#ids.messageTs(),
      ...(input.threadTs === undefined ? {} : { thread_ts: input.threadTs }),
      text: input.text,
      blocks: input.blocks,
      ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
      user: identity.botUserId,
      bot_id: identity.botId,
      app_id: identity.appId,
      team: identity.teamId,
    });
    const list = this.#messages.get(input.channel) ?? [];
    list.push(message);
    this.#messages.set(input.channel, list);
    this.emit({ type: 'message_posted', message });
    return message;
  }

  /** Replace the given fields of a message; undefined when there is no such message. */
  updateMessage(
    channel: string,
    ts: string,
    patch: {
      readonly text?: string | undefined;
      readonly blocks?: readonly Block[] | undefined;
      readonly metadata?: MessageMetadata | undefined;
    },
  ): EmulatedMessage | undefined {
    const list = this.#messages.get(channel);
    const index = list?.findIndex((message) => message.ts === ts) ?? -1;
    const current = list?.[index];
    if (!list || !current) return undefined;
    const updated: EmulatedMessage = deepFreeze({
      ...current,
      ...(patch.text === undefined ? {} : { text: patch.text }),
      ...(patch.blocks === undefined ? {} : { blocks: patch.blocks }),
      ...(patch.metadata === undefined ? {} : { metadata: patch.metadata }),
      edited: { user: this.identity.botUserId, ts: this.#ids.messageTs() },
    });
    list[index] = updated;
    this.emit({ type: 'message_updated', message: updated });
    return updated;
  }

  deleteMessage(channel: string, ts: string): boolean {
    const list = this.#messages.get(channel);
    const index = list?.findIndex((message) => message.ts === ts) ?? -1;
    if (!list || index < 0) return false;
    list.splice(index, 1);
    this.emit({ type: 'message_deleted', channel, ts });
    return true;
  }

  postEphemeral(input: {
    readonly channel: string;
    readonly user: string;
    readonly text: string;
    readonly blocks: readonly Block[];
    readonly threadTs?: string | undefined;
  }): EmulatedEphemeral {
    const ephemeral: EmulatedEphemeral = deepFreeze({
      channel: input.channel,
      user: input.user,
      message_ts: this.#ids.messageTs(),
      ...(input.threadTs === undefined ? {} : { thread_ts: input.threadTs }),
      text: input.text,
      blocks: input.blocks,
    });
    this.#ephemerals.push(ephemeral);
    this.emit({ type: 'ephemeral_posted', ephemeral });
    return ephemeral;
  }

  /** Use up a trigger id; false when it was already used. */
  exchangeTrigger(triggerId: string): boolean {
    if (this.#exchangedTriggers.has(triggerId)) return false;
    this.#exchangedTriggers.add(triggerId);
    return true;
  }

  /** Open a new modal stack for the user, closing the one they had. */
  openModal(userId: string | undefined, spec: ViewSpec): SlackView {
    const key = userId ?? NO_USER;
    this.closeModals(userId);
    const id = this.#ids.viewId();
    const view = this.#storeView(spec, { id, root_view_id: id, previous_view_id: null }, key);
    this.#stacks.set(key, [id]);
    this.#lastStackKey = key;
    this.emit({ type: 'view_opened', view, userId });
    return view;
  }

  /**
   * Push a modal onto the user's stack. A trigger that carries no user pushes onto the most recently
   * used stack, and a user with no stack onto the one opened by a user-less trigger, if any (tests with
   * foreign trigger ids rarely have two people in modals at once).
   */
  pushModal(userId: string | undefined, spec: ViewSpec): SlackView | PushRefusal {
    const key =
      userId === undefined ? (this.#lastStackKey ?? NO_USER) : this.#stacks.has(userId) ? userId : NO_USER;
    const stack = this.#stacks.get(key);
    const top = stack?.at(-1);
    const root = stack?.[0];
    if (!stack || top === undefined || root === undefined) return 'no_open_modal';
    if (stack.length >= MODAL_STACK_LIMIT) return 'push_limit_reached';
    const id = this.#ids.viewId();
    const view = this.#storeView(spec, { id, root_view_id: root, previous_view_id: top }, key);
    stack.push(id);
    this.#lastStackKey = key;
    this.emit({ type: 'view_pushed', view, userId: key === NO_USER ? undefined : key });
    return view;
  }

  /** Replace a live view's content, keeping its place, ids and the input values of blocks still present. */
  updateView(viewId: string, spec: ViewSpec): SlackView | undefined {
    const current = this.#views.get(viewId);
    if (!current || !this.isLive(viewId)) return undefined;
    const key = this.#viewOwner.get(viewId) ?? NO_USER;
    const blockIds = new Set(
      spec.blocks.flatMap((block) => (typeof block.block_id === 'string' ? [block.block_id] : [])),
    );
    const values = Object.fromEntries(
      Object.entries(current.state.values).filter(([blockId]) => blockIds.has(blockId)),
    );
    const view = this.#storeView(
      { ...spec, external_id: spec.external_id ?? current.external_id },
      { id: viewId, root_view_id: current.root_view_id, previous_view_id: current.previous_view_id, values },
      key,
    );
    if (view.type === 'home') this.emit({ type: 'home_published', view, userId: key });
    else this.emit({ type: 'view_updated', view, userId: key === NO_USER ? undefined : key });
    return view;
  }

  /** Create or replace the user's Home tab; the view id stays the same across publishes. */
  publishHome(userId: string, spec: ViewSpec): SlackView {
    const id = this.#homes.get(userId) ?? this.#ids.viewId();
    const view = this.#storeView(spec, { id, root_view_id: null, previous_view_id: null }, userId);
    this.#homes.set(userId, id);
    this.emit({ type: 'home_published', view, userId });
    return view;
  }

  /**
   * Remember what a person has put in a view's inputs (the page sends it with every click and submission),
   * as Slack does: `views.update` then keeps the values of blocks still present. Not an app-visible change,
   * so no event. Undefined when the view is not live.
   */
  recordViewValues(viewId: string, values: ViewStateValues): SlackView | undefined {
    const current = this.#views.get(viewId);
    if (!current || !this.isLive(viewId)) return undefined;
    const view: SlackView = deepFreeze({ ...current, state: { values: structuredClone(values) } });
    this.#views.set(viewId, view);
    return view;
  }

  /** Close the top modal of the user's stack, showing the one below (if any). False when none is open. */
  closeTopModal(userId: string | undefined): boolean {
    const key = userId ?? NO_USER;
    const stack = this.#stacks.get(key);
    const top = stack?.pop();
    if (!stack || top === undefined) return false;
    if (stack.length === 0) this.#stacks.delete(key);
    this.emit({ type: 'view_closed', viewId: top, userId });
    return true;
  }

  /** Close every modal the user has open (the whole stack). */
  closeModals(userId: string | undefined): void {
    const key = userId ?? NO_USER;
    const stack = this.#stacks.get(key) ?? [];
    this.#stacks.delete(key);
    for (const viewId of stack.reverse()) this.emit({ type: 'view_closed', viewId, userId });
  }

  /** Forget messages, views, used triggers and DMs; keep the seeded users, channels and groups. */
  reset(): void {
    this.#load();
    this.emit({ type: 'reset' });
  }

  #load(): void {
    const { identity } = this;
    this.#users = new Map();
    const bot: UserSeed = {
      id: identity.botUserId,
      name: identity.botUserName,
      real_name: identity.botUserName,
    };
    for (const seed of [...this.#seed.users, bot]) {
      this.#users.set(seed.id, toSlackUser(seed, identity.teamId, seed === bot));
    }
    this.#channels = new Map(
      this.#seed.channels.map((seed) => [
        seed.id,
        deepFreeze({ id: seed.id, name: seed.name, is_im: false, members: [] }),
      ]),
    );
    this.#messages = new Map();
    this.#ephemerals = [];
    this.#views = new Map();
    this.#viewOwner = new Map();
    this.#stacks = new Map();
    this.#lastStackKey = undefined;
    this.#homes = new Map();
    this.#exchangedTriggers = new Set();
    this.#usergroupMembers = new Map();
  }

  #storeView(
    spec: ViewSpec,
    place: {
      readonly id: string;
      readonly root_view_id: string | null;
      readonly previous_view_id: string | null;
      readonly values?: ViewStateValues;
    },
    ownerKey: string,
  ): SlackView {
    const { identity } = this;
    const view: SlackView = deepFreeze({
      id: place.id,
      team_id: identity.teamId,
      type: spec.type,
      ...(spec.title === undefined ? {} : { title: spec.title }),
      ...(spec.submit === undefined ? {} : { submit: spec.submit }),
      ...(spec.close === undefined ? {} : { close: spec.close }),
      blocks: spec.blocks,
      private_metadata: spec.private_metadata ?? '',
      callback_id: spec.callback_id ?? '',
      external_id: spec.external_id ?? '',
      state: { values: place.values ?? {} },
      hash: this.#ids.viewHash(),
      clear_on_close: spec.clear_on_close ?? false,
      notify_on_close: spec.notify_on_close ?? false,
      root_view_id: place.root_view_id,
      previous_view_id: place.previous_view_id,
      app_id: identity.appId,
      app_installed_team_id: identity.teamId,
      bot_id: identity.botId,
    });
    this.#views.set(view.id, view);
    this.#viewOwner.set(view.id, ownerKey);
    return view;
  }
}

/** A façade exposing only the readers of `workspace`, so holders of `state` cannot write to it. */
export function readOnlyState(workspace: Workspace): WorkspaceState {
  return Object.freeze({
    identity: workspace.identity,
    users: () => workspace.users(),
    user: (id: string) => workspace.user(id),
    usergroup: (id: string) => workspace.usergroup(id),
    channels: () => workspace.channels(),
    channel: (idOrName: string) => workspace.channel(idOrName),
    messages: (channel: string) => workspace.messages(channel),
    message: (channel: string, ts: string) => workspace.message(channel, ts),
    replies: (channel: string, threadTs: string) => workspace.replies(channel, threadTs),
    ephemerals: (channel?: string) => workspace.ephemerals(channel),
    view: (id: string) => workspace.view(id),
    modalStack: (userId: string | undefined) => workspace.modalStack(userId),
    homeView: (userId: string) => workspace.homeView(userId),
    subscribe: (listener: WorkspaceListener) => workspace.subscribe(listener),
  });
}

/** A reply is a message in a thread that is not the thread's parent. */
export function isReply(message: EmulatedMessage): boolean {
  return message.thread_ts !== undefined && message.thread_ts !== message.ts;
}

function toSlackUser(seed: UserSeed, teamId: string, isBot: boolean): SlackUser {
  return deepFreeze({
    id: seed.id,
    team_id: teamId,
    name: seed.name,
    real_name: seed.real_name,
    tz: seed.tz ?? 'UTC',
    is_bot: isBot,
    deleted: false,
    profile: { real_name: seed.real_name, display_name: seed.name },
  });
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
