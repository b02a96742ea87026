/**
 * The emulator's page: shows the workspace as the chosen person sees it (channels, DMs, threads, their
 * ephemeral messages, their modal, their Home tab), live — every workspace change arrives as a
 * Server-Sent Event and the page re-reads its snapshot. Clicks, selections and submissions go to the
 * emulator, which plays Slack towards the app (page-interactions.ts). Loaded as a module by index.html.
 */
import type { BlockActionInput } from '../../interactions.ts';
import type { EmulatedEphemeral, EmulatedMessage, ViewStateValues } from '../../slack-objects.ts';
import type {
  PageActionRequest,
  PageActionResult,
  PageCloseResult,
  PageModal,
  PageSnapshot,
  PageSubmitResult,
} from '../page-protocol.ts';
import type { ConfirmDialog } from './controls.ts';
import { h, type PageDocument, type PageElement, type PageSelectElement } from './dom.ts';
import { type RenderedBlocks, renderBlocks } from './render-blocks.ts';
import { type Names, renderText } from './render-text.ts';

/** The browser objects the page uses besides the DOM (see dom.ts for why they are declared here). */
interface Browser {
  readonly document: PageDocument & { getElementById(id: string): PageElement | null };
  readonly location: { readonly search: string; readonly pathname: string };
  readonly history: { replaceState(data: null, unused: string, url: string): void };
  readonly EventSource: new (
    url: string,
  ) => {
    addEventListener(type: string, listener: () => void): void;
  };
}

const browser = globalThis as unknown as Browser;
const doc = browser.document;

function byId(id: string): PageElement {
  const element = doc.getElementById(id);
  if (element === null) throw new Error(`the page has no #${id}`);
  return element;
}

const ui = {
  workspace: byId('workspace'),
  viewer: byId('viewer') as PageSelectElement,
  live: byId('live'),
  sidebar: byId('sidebar'),
  channel: byId('channel'),
  thread: byId('thread'),
  modal: byId('modal-root'),
  toasts: byId('toasts'),
};

const params = new URLSearchParams(browser.location.search);
const page = {
  viewer: params.get('as') ?? '',
  channel: params.get('channel') ?? undefined,
  thread: undefined as { readonly channel: string; readonly ts: string } | undefined,
  home: false,
  snapshot: undefined as PageSnapshot | undefined,
  dismissed: new Set<string>(),
  /** Messages already seen per channel, for the unread badges. */
  seen: new Map<string, number>(),
};

// --- talking to the emulator ---------------------------------------------------------------------------

let loading: Promise<void> | undefined;
let reloadAfter = false;

/** Re-reads the snapshot and re-renders; calls while one is in flight coalesce into one more. */
function refresh(): void {
  if (loading !== undefined) {
    reloadAfter = true;
    return;
  }
  loading = load()
    .catch((error: unknown) => toast(`Could not read the workspace: ${String(error)}`, 'error'))
    .finally(() => {
      loading = undefined;
      if (reloadAfter) {
        reloadAfter = false;
        refresh();
      }
    });
}

async function load(): Promise<void> {
  const query = page.viewer === '' ? '' : `?user=${encodeURIComponent(page.viewer)}`;
  const response = await fetch(`/page/api/state${query}`);
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const snapshot = (await response.json()) as PageSnapshot;
  page.snapshot = snapshot;
  page.viewer = snapshot.viewer;
  render(snapshot);
}

async function post<T>(
  path: string,
  body: unknown,
): Promise<T | { ok: false; error: string; message: string }> {
  try {
    const response = await fetch(`/page/api/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return (await response.json()) as T;
  } catch (error) {
    return {
      ok: false,
      error: 'emulator_unreachable',
      message: `The emulator did not answer (${String(error)}).`,
    };
  }
}

/** Sends a click or a selection; says so when Slack would show a warning. */
async function act(container: PageActionRequest['container'], action: BlockActionInput): Promise<void> {
  const result = await post<PageActionResult>('action', { user: page.viewer, container, action });
  if (!result.ok) toast(result.message, 'error');
}

function connect(): void {
  const events = new browser.EventSource('/page/api/events');
  events.addEventListener('open', () => setLive(true));
  events.addEventListener('error', () => setLive(false));
  events.addEventListener('hello', refresh);
  events.addEventListener('change', refresh);
}

function setLive(live: boolean): void {
  ui.live.textContent = live ? '● live' : '○ reconnecting…';
  ui.live.className = live ? 'live on' : 'live off';
}

// --- rendering ------------------------------------------------------------------------------------------

function render(snapshot: PageSnapshot): void {
  ui.workspace.textContent = `${snapshot.teamName} · Slack emulator`;
  renderSwitcher(snapshot);
  const channels = snapshot.channels;
  if (page.channel === undefined || !channels.some((channel) => channel.id === page.channel)) {
    page.channel = channels[0]?.id;
  }
  if (page.home && snapshot.home === null) page.home = false;
  renderSidebar(snapshot);
  renderMain(snapshot);
  renderThread(snapshot);
  renderModal(snapshot.modal);
}

function names(snapshot: PageSnapshot): Names {
  return {
    user: (id) => snapshot.users.find((user) => user.id === id)?.realName,
    channel: (id) => snapshot.channels.find((channel) => channel.id === id)?.label,
  };
}

function renderSwitcher(snapshot: PageSnapshot): void {
  const known = Array.from(ui.viewer.options).map((option) => option.value);
  const wanted = snapshot.personas.map((persona) => persona.id);
  if (known.join(',') !== wanted.join(',')) {
    ui.viewer.replaceChildren(
      ...snapshot.personas.map((persona) => {
        const option = doc.createElement('option');
        option.value = persona.id;
        option.append(doc.createTextNode(persona.label));
        return option;
      }),
    );
  }
  ui.viewer.value = snapshot.viewer;
}

function renderSidebar(snapshot: PageSnapshot): void {
  const counts = new Map<string, number>();
  for (const message of snapshot.messages) {
    if (!isReply(message)) counts.set(message.channel, (counts.get(message.channel) ?? 0) + 1);
  }
  const entry = (id: string, label: string, isIm: boolean) => {
    const unread = (counts.get(id) ?? 0) - (page.seen.get(id) ?? 0);
    const current = !page.home && id === page.channel;
    const button = h(
      doc,
      'button',
      { class: `conversation${current ? ' current' : ''}`, attrs: { type: 'button', 'data-channel': id } },
      `${isIm ? '@ ' : '# '}${label}`,
      unread > 0 && !current ? h(doc, 'span', { class: 'badge' }, String(unread)) : undefined,
    );
    button.addEventListener('click', () => {
      page.channel = id;
      page.home = false;
      page.thread = undefined;
      rerender();
    });
    return button;
  };
  const publicChannels = snapshot.channels.filter((channel) => !channel.isIm);
  const dms = snapshot.channels.filter((channel) => channel.isIm);
  const home =
    snapshot.home === null
      ? undefined
      : h(
          doc,
          'button',
          { class: `conversation${page.home ? ' current' : ''}`, attrs: { type: 'button' } },
          `🏠 ${snapshot.bot.name} (Home)`,
        );
  home?.addEventListener('click', () => {
    page.home = true;
    page.thread = undefined;
    rerender();
  });
  ui.sidebar.replaceChildren(
    h(doc, 'div', { class: 'sidebar-title' }, 'Channels'),
    ...publicChannels.map((channel) => entry(channel.id, channel.label, false)),
    h(doc, 'div', { class: 'sidebar-title' }, 'Direct messages'),
    ...(dms.length === 0
      ? [h(doc, 'div', { class: 'sidebar-empty' }, 'none yet')]
      : dms.map((channel) => entry(channel.id, channel.label, true))),
    ...(home === undefined ? [] : [h(doc, 'div', { class: 'sidebar-title' }, 'Apps'), home]),
  );
}

function rerender(): void {
  if (page.snapshot !== undefined) render(page.snapshot);
}

/** Rendered messages, reused while unchanged so their selects keep what the visitor picked. */
const rendered = new Map<string, PageElement>();

function renderMain(snapshot: PageSnapshot): void {
  const wasAtBottom = ui.channel.scrollHeight - ui.channel.scrollTop - ui.channel.clientHeight < 40;
  if (page.home && snapshot.home !== null) {
    const view = snapshot.home;
    const blocks = renderBlocks(view.blocks, {
      ...controlEnvironment(snapshot),
      values: view.state.values,
      idPrefix: `home-${view.id}`,
      onAction: (action) => void act({ type: 'view', viewId: view.id, values: blocks.readState() }, action),
    });
    ui.channel.replaceChildren(
      h(doc, 'h1', { class: 'channel-title' }, `${snapshot.bot.name} — Home`),
      blocks.element,
    );
    return;
  }
  const channel = snapshot.channels.find((candidate) => candidate.id === page.channel);
  if (channel === undefined) {
    ui.channel.replaceChildren(h(doc, 'p', { class: 'empty' }, 'No conversations.'));
    return;
  }
  const messages = snapshot.messages.filter((message) => message.channel === channel.id && !isReply(message));
  page.seen.set(channel.id, messages.length);
  const ephemerals = snapshot.ephemerals.filter(
    (ephemeral) =>
      ephemeral.channel === channel.id &&
      ephemeral.thread_ts === undefined &&
      !page.dismissed.has(ephemeral.message_ts),
  );
  const timeline = [
    ...messages.map((message) => ({ ts: message.ts, node: messageNode(snapshot, message, 'main') })),
    ...ephemerals.map((ephemeral) => ({
      ts: ephemeral.message_ts,
      node: ephemeralNode(snapshot, ephemeral),
    })),
  ].sort((a, b) => compareTs(a.ts, b.ts));
  ui.channel.replaceChildren(
    h(doc, 'h1', { class: 'channel-title' }, `${channel.isIm ? '@ ' : '# '}${channel.label}`),
    ...(timeline.length === 0 ? [h(doc, 'p', { class: 'empty' }, 'No messages yet.')] : []),
    ...timeline.map((item) => item.node),
  );
  if (wasAtBottom) ui.channel.scrollTop = ui.channel.scrollHeight;
}

function renderThread(snapshot: PageSnapshot): void {
  const thread = page.thread;
  const parent =
    thread === undefined
      ? undefined
      : snapshot.messages.find((message) => message.channel === thread.channel && message.ts === thread.ts);
  if (thread === undefined || parent === undefined) {
    page.thread = undefined;
    ui.thread.hidden = true;
    ui.thread.replaceChildren();
    return;
  }
  const replies = snapshot.messages.filter(
    (message) => message.channel === thread.channel && message.thread_ts === thread.ts && isReply(message),
  );
  const ephemerals = snapshot.ephemerals.filter(
    (ephemeral) =>
      ephemeral.channel === thread.channel &&
      ephemeral.thread_ts === thread.ts &&
      !page.dismissed.has(ephemeral.message_ts),
  );
  const close = h(
    doc,
    'button',
    { class: 'close', attrs: { type: 'button', 'aria-label': 'Close thread' } },
    '✕',
  );
  close.addEventListener('click', () => {
    page.thread = undefined;
    rerender();
  });
  ui.thread.hidden = false;
  ui.thread.replaceChildren(
    h(doc, 'div', { class: 'thread-header' }, h(doc, 'h2', {}, 'Thread'), close),
    messageNode(snapshot, parent, 'thread'),
    h(
      doc,
      'div',
      { class: 'thread-divider' },
      `${replies.length} ${replies.length === 1 ? 'reply' : 'replies'}`,
    ),
    ...[
      ...replies.map((reply) => ({ ts: reply.ts, node: messageNode(snapshot, reply, 'thread') })),
      ...ephemerals.map((ephemeral) => ({
        ts: ephemeral.message_ts,
        node: ephemeralNode(snapshot, ephemeral),
      })),
    ]
      .sort((a, b) => compareTs(a.ts, b.ts))
      .map((item) => item.node),
  );
}

function messageNode(snapshot: PageSnapshot, message: EmulatedMessage, pane: 'main' | 'thread'): PageElement {
  const replies =
    pane === 'main'
      ? snapshot.messages.filter(
          (reply) => reply.channel === message.channel && reply.thread_ts === message.ts && isReply(reply),
        ).length
      : 0;
  const key = `${pane}:${message.channel}:${message.ts}:${message.edited?.ts ?? ''}:${replies}`;
  const cached = rendered.get(`${pane}:${message.channel}:${message.ts}`);
  if (cached !== undefined && cached.getAttribute('data-key') === key) return cached;
  const blocks = messageBody(snapshot, message.blocks, message.text, {
    type: 'message',
    channel: message.channel,
    ts: message.ts,
  });
  const node = h(
    doc,
    'article',
    {
      class: 'message',
      attrs: {
        'data-key': key,
        'data-channel': message.channel,
        'data-ts': message.ts,
        ...(isReply(message) ? { 'data-thread-ts': message.thread_ts ?? '' } : {}),
      },
    },
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
      meta(snapshot, message.ts, message.edited !== undefined),
      blocks,
      replies === 0 ? undefined : repliesButton(message, replies),
    ),
  );
  rendered.set(`${pane}:${message.channel}:${message.ts}`, node);
  return node;
}

function repliesButton(message: EmulatedMessage, count: number): PageElement {
  const button = h(
    doc,
    'button',
    { class: 'replies', attrs: { type: 'button' } },
    `${count} ${count === 1 ? 'reply' : 'replies'} — view thread`,
  );
  button.addEventListener('click', () => {
    page.thread = { channel: message.channel, ts: message.ts };
    rerender();
  });
  return button;
}

function ephemeralNode(snapshot: PageSnapshot, ephemeral: EmulatedEphemeral): PageElement {
  const dismiss = h(doc, 'button', { class: 'link-button', attrs: { type: 'button' } }, 'Dismiss');
  dismiss.addEventListener('click', () => {
    page.dismissed.add(ephemeral.message_ts);
    rerender();
  });
  return h(
    doc,
    'article',
    {
      class: 'message ephemeral',
      attrs: { 'data-channel': ephemeral.channel, 'data-ts': ephemeral.message_ts },
    },
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
      meta(snapshot, ephemeral.message_ts, false),
      messageBody(snapshot, ephemeral.blocks, ephemeral.text, {
        type: 'message',
        channel: ephemeral.channel,
        ts: ephemeral.message_ts,
        ephemeral: true,
      }),
      h(doc, 'div', { class: 'ephemeral-note' }, '👁 Only visible to you · ', dismiss),
    ),
  );
}

function meta(snapshot: PageSnapshot, ts: string, edited: boolean): PageElement {
  return h(
    doc,
    'div',
    { class: 'meta' },
    h(doc, 'b', {}, snapshot.bot.name),
    h(doc, 'span', { class: 'app-tag' }, 'APP'),
    h(doc, 'time', { title: ts }, timeOf(ts)),
    edited ? h(doc, 'span', { class: 'edited' }, '(edited)') : undefined,
  );
}

/** A message's blocks, or its text as mrkdwn when it has none (as Slack shows it). */
function messageBody(
  snapshot: PageSnapshot,
  blocks: EmulatedMessage['blocks'],
  text: string,
  container: Extract<PageActionRequest['container'], { type: 'message' }>,
): PageElement {
  if (blocks.length === 0) return renderText(doc, { type: 'mrkdwn', text }, names(snapshot), { block: true });
  return renderBlocks(blocks, {
    ...controlEnvironment(snapshot),
    idPrefix: `m-${container.channel}-${container.ts.replace('.', '-')}`,
    onAction: (action) => void act(container, action),
  }).element;
}

function controlEnvironment(snapshot: PageSnapshot) {
  return { doc, names: names(snapshot), confirm: askToConfirm };
}

// --- the modal ------------------------------------------------------------------------------------------

/** What the modal on screen shows: re-rendered only when the view, its errors or the viewer change. */
const modalShown = {
  key: undefined as string | undefined,
  /** `viewer:viewId:hash` */
  view: undefined as string | undefined,
  blocks: undefined as RenderedBlocks | undefined,
  /** Required fields left empty at the last submit (Slack says so without asking the app). */
  missing: {} as Readonly<Record<string, string>>,
};

function renderModal(modal: PageModal | null): void {
  if (modal === null) {
    Object.assign(modalShown, { key: undefined, view: undefined, blocks: undefined, missing: {} });
    ui.modal.replaceChildren();
    return;
  }
  const { view } = modal;
  const viewKey = `${page.viewer}:${view.id}:${view.hash}`;
  if (viewKey !== modalShown.view) modalShown.missing = {};
  const errors = { ...modal.errors, ...modalShown.missing };
  const key = `${viewKey}:${JSON.stringify(errors)}`;
  if (key === modalShown.key) return;
  // The same view again (new errors): keep what the visitor typed. A new version of it: what Slack kept.
  const values: ViewStateValues =
    viewKey === modalShown.view && modalShown.blocks !== undefined
      ? modalShown.blocks.readState()
      : view.state.values;
  modalShown.key = key;
  modalShown.view = viewKey;
  const blocks = renderBlocks(view.blocks, {
    ...controlEnvironment(page.snapshot!),
    values,
    errors,
    idPrefix: `v-${view.id}`,
    onAction: (action) => void act({ type: 'view', viewId: view.id, values: blocks.readState() }, action),
  });
  modalShown.blocks = blocks;
  const title = view.title?.text ?? '';
  const banner = h(doc, 'div', { class: 'modal-error', attrs: { role: 'alert' } });
  banner.hidden = true;
  const closeX = h(doc, 'button', { class: 'close', attrs: { type: 'button', 'aria-label': 'Close' } }, '✕');
  const cancel = h(
    doc,
    'button',
    { class: 'btn', attrs: { type: 'button' } },
    modal.depth > 1 ? `‹ ${view.close?.text ?? 'Back'}` : (view.close?.text ?? 'Cancel'),
  );
  const close = async () => {
    const result = await post<PageCloseResult>('close', { user: page.viewer, viewId: view.id });
    if (!result.ok) toast(result.message, 'error');
    refresh();
  };
  closeX.addEventListener('click', () => void close());
  cancel.addEventListener('click', () => void close());
  const submit =
    view.submit === undefined
      ? undefined
      : h(doc, 'button', { class: 'btn primary', attrs: { type: 'button' } }, view.submit.text);
  submit?.addEventListener('click', () => void submitModal(modal, blocks, banner, submit));
  ui.modal.replaceChildren(
    h(
      doc,
      'div',
      { class: 'overlay' },
      h(
        doc,
        'div',
        {
          class: 'modal',
          attrs: {
            role: 'dialog',
            'aria-modal': 'true',
            'aria-label': title,
            'data-view-id': view.id,
            'data-callback-id': view.callback_id,
          },
        },
        h(doc, 'div', { class: 'modal-header' }, h(doc, 'h2', {}, title), closeX),
        h(doc, 'div', { class: 'modal-body' }, blocks.element),
        banner,
        h(doc, 'div', { class: 'modal-footer' }, cancel, submit),
      ),
    ),
  );
}

async function submitModal(
  modal: PageModal,
  blocks: RenderedBlocks,
  banner: PageElement,
  button: PageElement,
): Promise<void> {
  const missing = blocks.missingRequired();
  modalShown.missing = missing;
  if (Object.keys(missing).length > 0) {
    // Slack checks required fields itself and sends nothing.
    renderModal(modal);
    return;
  }
  button.setAttribute('disabled', '');
  const result = await post<PageSubmitResult>('submit', {
    user: page.viewer,
    viewId: modal.view.id,
    values: blocks.readState(),
  });
  button.removeAttribute('disabled');
  if (!result.ok) {
    banner.textContent = `We had some trouble connecting. Try again? (${result.message})`;
    banner.hidden = false;
    return;
  }
  refresh();
}

/** A button's confirm dialog, drawn over everything; resolves true for its confirm button. */
function askToConfirm(dialog: ConfirmDialog): Promise<boolean> {
  return new Promise((resolve) => {
    const deny = h(doc, 'button', { class: 'btn', attrs: { type: 'button' } }, dialog.deny);
    const confirm = h(doc, 'button', { class: 'btn primary', attrs: { type: 'button' } }, dialog.confirm);
    const overlay = h(
      doc,
      'div',
      { class: 'overlay confirm' },
      h(
        doc,
        'div',
        { class: 'modal', attrs: { role: 'alertdialog', 'aria-modal': 'true', 'aria-label': dialog.title } },
        h(doc, 'div', { class: 'modal-header' }, h(doc, 'h2', {}, dialog.title)),
        h(doc, 'div', { class: 'modal-body' }, h(doc, 'p', {}, dialog.text)),
        h(doc, 'div', { class: 'modal-footer' }, deny, confirm),
      ),
    );
    const finish = (answer: boolean) => {
      overlay.remove();
      resolve(answer);
    };
    deny.addEventListener('click', () => finish(false));
    confirm.addEventListener('click', () => finish(true));
    ui.toasts.append(overlay);
  });
}

// --- small things ---------------------------------------------------------------------------------------

function toast(text: string, kind: 'error' | 'info'): void {
  const note = h(doc, 'div', { class: `toast ${kind}` }, text);
  ui.toasts.append(note);
  setTimeout(() => note.remove(), 8_000);
}

function isReply(message: EmulatedMessage): boolean {
  return message.thread_ts !== undefined && message.thread_ts !== message.ts;
}

/** Orders Slack timestamps (`"<seconds>.<micros>"`) without float rounding. */
function compareTs(a: string, b: string): number {
  const [aSeconds = '', aMicros = ''] = a.split('.');
  const [bSeconds = '', bMicros = ''] = b.split('.');
  return (
    aSeconds.padStart(12, '0').localeCompare(bSeconds.padStart(12, '0')) ||
    aMicros.padEnd(6, '0').localeCompare(bMicros.padEnd(6, '0'))
  );
}

function timeOf(ts: string): string {
  const date = new Date(Number(ts.split('.')[0]) * 1000);
  return `${String(date.getHours()).padStart(2, '0')}:${String(date.getMinutes()).padStart(2, '0')}`;
}

ui.viewer.addEventListener('change', () => {
  page.viewer = ui.viewer.value;
  page.dismissed.clear();
  const search = new URLSearchParams(browser.location.search);
  search.set('as', page.viewer);
  browser.history.replaceState(null, '', `${browser.location.pathname}?${search.toString()}`);
  refresh();
});

setLive(false);
connect();
refresh();
