/**
 * The workspace as one person sees it, for the page: public channels and their own DMs with the bot,
 * every message with thread replies, their ephemeral messages only, their open modal and Home tab.
 */
import type { EmulatedChannel, EmulatedMessage } from '../slack-objects.ts';
import type { WorkspaceState } from '../workspace.ts';
import type { PageInteractions } from './page-interactions.ts';
import type { PageChannel, PageSnapshot, Persona } from './page-protocol.ts';

/** What the snapshot needs besides the workspace. */
export interface SnapshotSources {
  readonly state: WorkspaceState;
  readonly interactions: PageInteractions;
  readonly personas: readonly Persona[];
  readonly seq: number;
}

/** The snapshot for `viewer` (a user id; unknown ids see the public channels only). */
export function pageSnapshot(sources: SnapshotSources, viewer: string): PageSnapshot {
  const { state, interactions } = sources;
  const { identity } = state;
  const name = (userId: string) => state.user(userId)?.real_name ?? userId;
  const visible = state
    .channels()
    .filter((channel) => !channel.is_im || channel.members.includes(viewer))
    .sort((a, b) => Number(a.is_im) - Number(b.is_im));
  const channels: PageChannel[] = visible.map((channel) => ({
    id: channel.id,
    label: channelLabel(channel, viewer, name, identity.botUserName),
    isIm: channel.is_im,
  }));
  const messages: EmulatedMessage[] = visible.flatMap((channel) =>
    state.messages(channel.id).flatMap((message) => [message, ...state.replies(channel.id, message.ts)]),
  );
  const visibleIds = new Set(visible.map((channel) => channel.id));
  const stack = state.modalStack(viewer);
  const top = stack.at(-1);
  return {
    seq: sources.seq,
    teamName: identity.teamName,
    bot: { userId: identity.botUserId, name: identity.botUserName },
    viewer,
    personas: sources.personas,
    users: state.users().map((user) => ({ id: user.id, name: user.name, realName: user.real_name })),
    interactive: interactions.configured,
    channels,
    messages,
    ephemerals: state
      .ephemerals()
      .filter((ephemeral) => ephemeral.user === viewer && visibleIds.has(ephemeral.channel)),
    modal: top === undefined ? null : { view: top, depth: stack.length, errors: interactions.errorsFor(top) },
    home: state.homeView(viewer) ?? null,
  };
}

/** Everyone but the bot, labelled with their real names (the default user switcher). */
export function defaultPersonas(state: WorkspaceState): Persona[] {
  return state
    .users()
    .filter((user) => !user.is_bot)
    .map((user) => ({ id: user.id, label: user.real_name }));
}

function channelLabel(
  channel: EmulatedChannel,
  viewer: string,
  name: (userId: string) => string,
  botName: string,
): string {
  if (!channel.is_im) return channel.name ?? channel.id;
  const others = channel.members.filter((member) => member !== viewer).map(name);
  return [botName, ...others].join(', ');
}
