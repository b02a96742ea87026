/**
 * Conversations on the page: a channel's or DM's timeline (messages and the viewer's ephemeral ones, by
 * time), a thread with its replies, and the Home tab. Rendered messages are kept while unchanged, so a
 * select the visitor touched on a message keeps its choice when something else changes.
 */
import type { BlockActionInput } from '../../interactions.ts';
import type { Block, EmulatedEphemeral, EmulatedMessage, SlackView } from '../../slack-objects.ts';
import type { PageActionRequest, PageChannel, PageSnapshot } from '../page-protocol.ts';
import type { ConfirmDialog } from './controls.ts';
import { h, type PageDocument, type PageElement, type PageNode } from './dom.ts';
import { renderBlocks } from './render-blocks.ts';
import { type Names, renderText } from './render-text.ts';

/** What the conversation views need from the page. */
export interface ConversationEnvironment {
  readonly doc: PageDocument;
  readonly snapshot: PageSnapshot;
  readonly names: Names;
  readonly confirm: (dialog: ConfirmDialog) => Promise<boolean>;
  /** Sends a click or a selection. */
  readonly act: (container: PageActionRequest['container'], action: BlockActionInput) => void;
  /** Ephemeral messages the visitor dismissed (by ts). */
  readonly dismissed: ReadonlySet<string>;
  dismiss(ts: string): void;
  openThread(channel: string, ts: string): void;
  closeThread(): void;
}

type MessageContainer = Extract<PageActionRequest['container'], { type: 'message' }>;

/** Draws conversations; one per page, as it keeps the rendered messages. */
export class ConversationView {
  /** Rendered messages by pane, channel and ts; each remembers the version it shows in `data-key`. */
  readonly #rendered = new Map<string, PageElement>();

  /** A channel or DM: its title, then messages and ephemeral messages in time order. */
  channel(env: ConversationEnvironment, channel: PageChannel): PageNode[] {
    const { doc, snapshot } = env;
    const messages = snapshot.messages.filter(
      (message) => message.channel === channel.id && !isReply(message),
    );
    const ephemerals = snapshot.ephemerals.filter(
      (ephemeral) =>
        ephemeral.channel === channel.id &&
        ephemeral.thread_ts === undefined &&
        !env.dismissed.has(ephemeral.message_ts),
    );
    const timeline = inTimeOrder([
      ...messages.map((message) => ({ ts: message.ts, node: this.#message(env, message, 'main') })),
      ...ephemerals.map((ephemeral) => ({ ts: ephemeral.message_ts, node: ephemeralNode(env, ephemeral) })),
    ]);
    this.#forgetAllBut(snapshot);
    return [
      h(doc, 'h1', { class: 'channel-title' }, `${channel.isIm ? '@ ' : '# '}${channel.label}`),
      ...(timeline.length === 0 ? [h(doc, 'p', { class: 'empty' }, 'No messages yet.')] : timeline),
    ];
  }

  /** A thread: the parent, then replies and the viewer's ephemeral messages in it; undefined when gone. */
  thread(
    env: ConversationEnvironment,
    thread: { readonly channel: string; readonly ts: string },
  ): PageNode[] | undefined {
    const { doc, snapshot } = env;
    const parent = snapshot.messages.find(
      (message) => message.channel === thread.channel && message.ts === thread.ts,
    );
    if (parent === undefined) return undefined;
    const replies = snapshot.messages.filter(
      (message) => message.channel === thread.channel && message.thread_ts === thread.ts && isReply(message),
    );
    const ephemerals = snapshot.ephemerals.filter(
      (ephemeral) =>
        ephemeral.channel === thread.channel &&
        ephemeral.thread_ts === thread.ts &&
        !env.dismissed.has(ephemeral.message_ts),
    );
    const close = h(
      doc,
      'button',
      { class: 'close', attrs: { type: 'button', 'aria-label': 'Close thread' } },
      '✕',
    );
    close.addEventListener('click', () => env.closeThread());
    return [
      h(doc, 'div', { class: 'thread-header' }, h(doc, 'h2', {}, 'Thread'), close),
      this.#message(env, parent, 'thread'),
      h(doc, 'div', { class: 'thread-divider' }, plural(replies.length, 'reply', 'replies')),
      ...inTimeOrder([
        ...replies.map((reply) => ({ ts: reply.ts, node: this.#message(env, reply, 'thread') })),
        ...ephemerals.map((ephemeral) => ({ ts: ephemeral.message_ts, node: ephemeralNode(env, ephemeral) })),
      ]),
    ];
  }

  /** The viewer's Home tab, with its elements acting in the view. */
  home(env: ConversationEnvironment, view: SlackView): PageNode[] {
    const { doc, snapshot } = env;
    const blocks = renderBlocks(view.blocks, {
      doc,
      names: env.names,
      confirm: env.confirm,
      values: view.state.values,
      idPrefix: `home-${view.id}`,
      onAction: (action) => env.act({ type: 'view', viewId: view.id, values: blocks.readState() }, action),
    });
    return [h(doc, 'h1', { class: 'channel-title' }, `${snapshot.bot.name} — Home`), blocks.element];
  }

  #message(env: ConversationEnvironment, message: EmulatedMessage, pane: 'main' | 'thread'): PageElement {
    const { doc, snapshot } = env;
    const replies =
      pane === 'main'
        ? snapshot.messages.filter(
            (reply) => reply.channel === message.channel && reply.thread_ts === message.ts && isReply(reply),
          ).length
        : 0;
    const place = `${pane}:${message.channel}:${message.ts}`;
    const version = `${place}:${message.edited?.ts ?? ''}:${replies}`;
    const cached = this.#rendered.get(place);
    if (cached !== undefined && cached.getAttribute('data-key') === version) return cached;
    const repliesButton =
      replies === 0
        ? undefined
        : h(
            doc,
            'button',
            { class: 'replies', attrs: { type: 'button' } },
            `${plural(replies, 'reply', 'replies')} — view thread`,
          );
    repliesButton?.addEventListener('click', () => env.openThread(message.channel, message.ts));
    const node = messageShell(
      env,
      {
        class: 'message',
        attrs: {
          'data-key': version,
          'data-channel': message.channel,
          'data-ts': message.ts,
          ...(isReply(message) ? { 'data-thread-ts': message.thread_ts ?? '' } : {}),
        },
      },
      message.ts,
      message.edited !== undefined,
      messageBody(env, message.blocks, message.text, {
        type: 'message',
        channel: message.channel,
        ts: message.ts,
      }),
      repliesButton,
    );
    this.#rendered.set(place, node);
    return node;
  }

  /** Drops rendered messages that are no longer in the workspace. */
  #forgetAllBut(snapshot: PageSnapshot): void {
    const present = new Set(snapshot.messages.map((message) => `${message.channel}:${message.ts}`));
    for (const place of this.#rendered.keys()) {
      if (!present.has(place.slice(place.indexOf(':') + 1))) this.#rendered.delete(place);
    }
  }
}

function ephemeralNode(env: ConversationEnvironment, ephemeral: EmulatedEphemeral): PageElement {
  const dismiss = h(env.doc, 'button', { class: 'link-button', attrs: { type: 'button' } }, 'Dismiss');
  dismiss.addEventListener('click', () => env.dismiss(ephemeral.message_ts));
  return messageShell(
    env,
    {
      class: 'message ephemeral',
      attrs: { 'data-channel': ephemeral.channel, 'data-ts': ephemeral.message_ts },
    },
    ephemeral.message_ts,
    false,
    messageBody(env, ephemeral.blocks, ephemeral.text, {
      type: 'message',
      channel: ephemeral.channel,
      ts: ephemeral.message_ts,
      ephemeral: true,
    }),
    h(env.doc, 'div', { class: 'ephemeral-note' }, '👁 Only visible to you · ', dismiss),
  );
}

/** Avatar, name, time, then the message's own parts. */
function messageShell(
  env: ConversationEnvironment,
  spec: { readonly class: string; readonly attrs: { readonly [name: string]: string } },
  ts: string,
  edited: boolean,
  ...parts: (PageNode | undefined)[]
): PageElement {
  const { doc, snapshot } = env;
  return h(
    doc,
    'article',
    spec,
    h(
      doc,
      'div',
      { class: 'avatar', attrs: { 'aria-hidden': 'true' } },
      snapshot.bot.name.slice(0, 1).toUpperCase(),
    ),
    h(
      doc,
      'div',
      { class: 'message-main' },
      h(
        doc,
        'div',
        { class: 'meta' },
        h(doc, 'b', {}, snapshot.bot.name),
        h(doc, 'span', { class: 'app-tag' }, 'APP'),
        h(doc, 'time', { title: ts }, timeOf(ts)),
        edited ? h(doc, 'span', { class: 'edited' }, '(edited)') : undefined,
      ),
      ...parts,
    ),
  );
}

/** A message's blocks, or its text as mrkdwn when it has none (as Slack shows it). */
function messageBody(
  env: ConversationEnvironment,
  blocks: readonly Block[],
  text: string,
  container: MessageContainer,
): PageElement {
  if (blocks.length === 0) return renderText(env.doc, { type: 'mrkdwn', text }, env.names, { block: true });
  return renderBlocks(blocks, {
    doc: env.doc,
    names: env.names,
    confirm: env.confirm,
    idPrefix: `m-${container.channel}-${container.ts.replace('.', '-')}`,
    onAction: (action) => env.act(container, action),
  }).element;
}

/** A thread reply (a message in a thread that is not its parent). */
export function isReply(message: EmulatedMessage): boolean {
  return message.thread_ts !== undefined && message.thread_ts !== message.ts;
}

function inTimeOrder(items: readonly { readonly ts: string; readonly node: PageElement }[]): PageElement[] {
  return [...items].sort((a, b) => compareTs(a.ts, b.ts)).map((item) => item.node);
}

/** Orders Slack timestamps (`"<seconds>.<micros>"`) without float rounding. */
export function compareTs(a: string, b: string): number {
  const [aSeconds = '', aMicros = ''] = a.split('.');
  const [bSeconds = '', bMicros = ''] = b.split('.');
  return (
    aSeconds.padStart(12, '0').localeCompare(bSeconds.padStart(12, '0')) ||
    aMicros.padEnd(6, '0').localeCompare(bMicros.padEnd(6, '0'))
  );
}

/** `HH:mm` in the browser's time zone. */
function timeOf(ts: string): string {
  const date = new Date(Number(ts.split('.')[0]) * 1000);
  return `${String(date.getHours()).padStart(2, '0')}:${String(date.getMinutes()).padStart(2, '0')}`;
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}
