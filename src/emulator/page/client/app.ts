/**
 * The emulator's page: shows the workspace as the chosen person sees it (channels, DMs, threads, their
 * ephemeral messages, their modal, their Home tab), live — every workspace change arrives as a
 * Server-Sent Event and the page re-reads its snapshot. Clicks, selections and submissions go to the
 * emulator, which plays Slack towards the app (page-interactions.ts). Loaded as a module by index.html.
 */
import type { BlockActionInput } from '../../interactions.ts';
import type { PageActionRequest, PageActionResult, PageFailure, PageSnapshot } from '../page-protocol.ts';
import type { ConfirmDialog } from './controls.ts';
import { type ConversationEnvironment, ConversationView, isReply } from './conversation.ts';
import {
  h,
  type PageDocument,
  type PageElement,
  type PageEvent,
  type PageInputElement,
  type PageSelectElement,
} from './dom.ts';
import { askToConfirm, ModalView } from './modal.ts';
import type { Names } from './render-text.ts';

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
  composer: byId('composer'),
  composerInput: byId('composer-input') as PageInputElement,
};

const params = new URLSearchParams(browser.location.search);
/** What the visitor chose: who they are, where they look. */
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
const conversations = new ConversationView();
const modal = new ModalView();

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
    .catch((error: unknown) => toast(`Could not read the workspace: ${String(error)}`))
    .finally(() => {
      loading = undefined;
      if (reloadAfter) {
        reloadAfter = false;
        refresh();
      }
    });
}

async function load(): Promise<void> {
  const asked = page.viewer;
  const query = asked === '' ? '' : `?user=${encodeURIComponent(asked)}`;
  const response = await fetch(`/page/api/state${query}`);
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const snapshot = (await response.json()) as PageSnapshot;
  // The viewer changed while this was in flight: drawing it would show — and act as — the previous
  // person (a click right after switching went out as them). The load the change asked for follows.
  if (page.viewer !== asked) return;
  page.snapshot = snapshot;
  page.viewer = snapshot.viewer;
  render(snapshot);
}

async function post<T>(path: string, body: unknown): Promise<T | PageFailure> {
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
function act(container: PageActionRequest['container'], action: BlockActionInput): void {
  void post<PageActionResult>('action', { user: page.viewer, container, action }).then((result) => {
    if (!result.ok) toast(result.message);
  });
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
  if (page.channel === undefined || !snapshot.channels.some((channel) => channel.id === page.channel)) {
    page.channel = snapshot.channels[0]?.id;
  }
  if (page.home && snapshot.home === null && !snapshot.interactive) page.home = false;
  ui.composer.hidden = page.home;
  const env = environment(snapshot);
  // Whose view is drawn (tests wait for it after switching person).
  ui.channel.setAttribute('data-viewer', snapshot.viewer);
  renderSwitcher(snapshot);
  renderSidebar(snapshot);

  const wasAtBottom = ui.channel.scrollHeight - ui.channel.scrollTop - ui.channel.clientHeight < 40;
  const channel = snapshot.channels.find((candidate) => candidate.id === page.channel);
  if (page.home && snapshot.home !== null)
    ui.channel.replaceChildren(...conversations.home(env, snapshot.home));
  else if (page.home) ui.channel.replaceChildren(h(doc, 'p', { class: 'empty' }, 'Opening the Home tab…'));
  else if (channel === undefined)
    ui.channel.replaceChildren(h(doc, 'p', { class: 'empty' }, 'No conversations.'));
  else {
    ui.channel.replaceChildren(...conversations.channel(env, channel));
    page.seen.set(
      channel.id,
      snapshot.messages.filter((m) => m.channel === channel.id && !isReply(m)).length,
    );
  }
  if (wasAtBottom) ui.channel.scrollTop = ui.channel.scrollHeight;

  const thread = page.thread === undefined ? undefined : conversations.thread(env, page.thread);
  if (thread === undefined) page.thread = undefined;
  ui.thread.hidden = thread === undefined;
  ui.thread.replaceChildren(...(thread ?? []));

  modal.show(
    {
      doc,
      root: ui.modal,
      names: env.names,
      viewer: page.viewer,
      confirm,
      act,
      post,
      refresh,
      toast,
    },
    snapshot.modal,
  );
}

function rerender(): void {
  if (page.snapshot !== undefined) render(page.snapshot);
}

function environment(snapshot: PageSnapshot): ConversationEnvironment {
  const names: Names = {
    user: (id) => snapshot.users.find((user) => user.id === id)?.realName,
    channel: (id) => snapshot.channels.find((channel) => channel.id === id)?.label,
  };
  return {
    doc,
    snapshot,
    names,
    confirm,
    act,
    dismissed: page.dismissed,
    dismiss(ts) {
      page.dismissed.add(ts);
      rerender();
    },
    openThread(channel, ts) {
      page.thread = { channel, ts };
      rerender();
    },
    closeThread() {
      page.thread = undefined;
      rerender();
    },
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
  const dms = snapshot.channels.filter((channel) => channel.isIm);
  // The Home tab is there once the app published it, or when there is an app to ask (app_home_opened).
  const home =
    snapshot.home === null && !snapshot.interactive
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
    if (snapshot.interactive) {
      void post<PageActionResult>('home', { user: page.viewer }).then((result) => {
        if (!result.ok) toast(result.message);
      });
    }
  });
  ui.sidebar.replaceChildren(
    h(doc, 'div', { class: 'sidebar-title' }, 'Channels'),
    ...snapshot.channels
      .filter((channel) => !channel.isIm)
      .map((channel) => entry(channel.id, channel.label, false)),
    h(doc, 'div', { class: 'sidebar-title' }, 'Direct messages'),
    ...(dms.length === 0
      ? [h(doc, 'div', { class: 'sidebar-empty' }, 'none yet')]
      : dms.map((channel) => entry(channel.id, channel.label, true))),
    ...(home === undefined ? [] : [h(doc, 'div', { class: 'sidebar-title' }, 'Apps'), home]),
  );
}

function confirm(dialog: ConfirmDialog): Promise<boolean> {
  return askToConfirm(doc, ui.toasts, dialog);
}

function toast(text: string): void {
  const note = h(doc, 'div', { class: 'toast error' }, text);
  ui.toasts.append(note);
  setTimeout(() => note.remove(), 8_000);
}

ui.viewer.addEventListener('change', () => {
  page.viewer = ui.viewer.value;
  page.dismissed.clear();
  const search = new URLSearchParams(browser.location.search);
  search.set('as', page.viewer);
  browser.history.replaceState(null, '', `${browser.location.pathname}?${search.toString()}`);
  refresh();
});

/** A slash command typed in the open conversation goes to the app; its answer arrives as an ephemeral. */
ui.composer.addEventListener('submit', (event) => {
  event.preventDefault();
  const text = ui.composerInput.value.trim();
  if (text === '' || page.channel === undefined) return;
  if (!text.startsWith('/')) {
    toast('This stand-in sends slash commands only: try /countersign help.');
    return;
  }
  void post<PageActionResult>('command', { user: page.viewer, channel: page.channel, text }).then(
    (result) => {
      if (result.ok) ui.composerInput.value = '';
      else toast(result.message);
    },
  );
});

/** A permalink opens its conversation (a reply opens its thread). */
function followPermalink(event: PageEvent): void {
  const link = event.target?.closest?.('[data-permalink-channel]');
  if (link === null || link === undefined) return;
  const channel = link.getAttribute('data-permalink-channel') ?? '';
  const ts = link.getAttribute('data-permalink-ts') ?? '';
  const message = page.snapshot?.messages.find((m) => m.channel === channel && m.ts === ts);
  if (message === undefined) {
    toast('That message is not in a conversation you can see.');
    return;
  }
  event.preventDefault();
  page.home = false;
  page.channel = channel;
  page.thread = isReply(message) ? { channel, ts: message.thread_ts ?? ts } : undefined;
  rerender();
}
ui.channel.addEventListener('click', followPermalink);
ui.thread.addEventListener('click', followPermalink);

setLive(false);
connect();
refresh();
