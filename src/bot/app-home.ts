/**
 * Publishes people's App Home tabs (views/app-home.ts) with `views.publish`: when they open the tab,
 * and, for 15 minutes after that, after a rendering of a run that concerns them (the renderer calls
 * `runChanged`). A process knows only the openings it served: with replicas, a change rendered by
 * another one reaches the tab at its next opening. Refreshes are
 * coalesced: a burst of changes publishes each person's home once per `debounceMs`, and a home whose
 * inbox did not change is not published again — rate-limit friendly (views.publish is Tier 4 per
 * person). Homes are rendered from approvals' answers (`inboxFor`); nothing here decides who may act.
 */
import { createHash } from 'node:crypto';
import { ErrorCode } from '@slack/web-api';
import { buildAppHome, type CardLinks } from '../../views/index.ts';
import {
  type ApprovalService,
  concernedUsers,
  type Inbox,
  type MessageLedger,
  type RunConcern,
} from '../approvals/index.ts';
import type { CountersignConfig } from '../config/index.ts';
import type { ErrorReporter } from '../log.ts';
import type { LeadInsights } from './lead-insights.ts';
import type { SlackGateway } from './slack-gateway.ts';

/** Permalinks of run cards (`chat.getPermalink`), kept: a message's permalink never changes. */
export class CardLinkCache {
  private readonly links = new Map<string, string>();

  constructor(private readonly deps: { readonly messages: MessageLedger; readonly gateway: SlackGateway }) {}

  /** The card's permalink, or undefined while the run has no card. */
  async linkOf(runId: string): Promise<string | undefined> {
    const card = (await this.deps.messages.all(runId)).recorded.card;
    if (card === undefined) return undefined;
    const key = `${card.channel}/${card.ts}`;
    const known = this.links.get(key);
    if (known !== undefined) return known;
    const link = await this.deps.gateway.permalink(card);
    this.links.set(key, link);
    return link;
  }

  /** Permalinks of these runs' cards, by run id (runs without a card, or whose link failed, left out). */
  async linksOf(runIds: readonly string[]): Promise<CardLinks> {
    const pairs = await Promise.all(
      runIds.map(async (runId) => [runId, await this.linkOf(runId).catch(() => undefined)] as const),
    );
    return Object.fromEntries(pairs.filter((pair): pair is [string, string] => pair[1] !== undefined));
  }
}

export interface HomePublisherDeps {
  readonly approvals: Pick<ApprovalService, 'inboxesFor'>;
  readonly config: Pick<CountersignConfig, 'groups'>;
  readonly links: CardLinkCache;
  readonly gateway: SlackGateway;
  readonly clock: () => number;
  readonly tz?: string;
  readonly onError: ErrorReporter;
  /** For leads: how people edit the plans of the agents they lead (absent: nobody sees it). */
  readonly leads?: Pick<LeadInsights, 'forUser'>;
  /** How long refreshes are gathered before homes are published (default 1 s). */
  readonly debounceMs?: number;
  /**
   * How long after someone opened their tab a change of a run is published to it (default 15 min).
   * Opening the tab publishes it anyway, so a home nobody looks at is not rebuilt on every change.
   */
  readonly watchMs?: number;
}

/** Every run an inbox lists. */
export function inboxRunIds(inbox: Inbox): string[] {
  return [...inbox.waiting, ...inbox.escalated, ...inbox.decided].map((entry) => entry.runId);
}

export class HomePublisher {
  /** What each home last showed (a digest of the inbox and its links). */
  private readonly shown = new Map<string, string>();
  private readonly dirty = new Set<string>();
  /** When each person last opened their tab (ms), by this process. */
  private readonly openedAt = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly deps: HomePublisherDeps) {}

  /**
   * Publishes `userId`'s home now. `force` publishes even when the inbox is unchanged (the tab was
   * opened: its relative times are refreshed).
   */
  async publish(userId: string, options: { readonly force?: boolean } = {}): Promise<void> {
    if (options.force) this.openedAt.set(userId, this.deps.clock());
    const inbox = (await this.deps.approvals.inboxesFor([userId])).get(userId);
    if (inbox !== undefined) await this.publishInbox(userId, inbox, options);
  }

  private async publishInbox(
    userId: string,
    inbox: Inbox,
    options: { readonly force?: boolean },
  ): Promise<void> {
    const edits = (await this.deps.leads?.forUser(userId)) ?? [];
    const edited = edits.flatMap((summary) => summary.stats.mostEdited.map((run) => run.runId));
    const links = await this.deps.links.linksOf([...inboxRunIds(inbox), ...edited]);
    const digest = createHash('sha256').update(JSON.stringify({ inbox, links, edits })).digest('hex');
    if (!options.force && this.shown.get(userId) === digest) return;
    const now = this.deps.clock();
    const view = buildAppHome({
      inbox,
      links,
      edits,
      now,
      ...(this.deps.tz === undefined ? {} : { tz: this.deps.tz }),
    });
    await this.deps.gateway.publishHome(userId, view);
    this.shown.set(userId, digest);
  }

  /**
   * The homes of everyone the run concerns (as just rendered) who opened their tab lately are
   * published again, soon (coalesced). Reading inboxes costs a read of every pending run, so homes
   * nobody looks at wait for their next opening (which publishes them).
   */
  runChanged(run: RunConcern): void {
    const since = this.deps.clock() - (this.deps.watchMs ?? 15 * 60_000);
    for (const [userId, at] of this.openedAt) if (at < since) this.openedAt.delete(userId);
    this.refresh(concernedUsers(this.deps.config, run).filter((userId) => this.openedAt.has(userId)));
  }

  /** These people's homes are published within `debounceMs`, each once however often it is asked. */
  refresh(userIds: readonly string[]): void {
    if (this.closed) return;
    for (const userId of userIds) this.dirty.add(userId);
    if (this.timer !== undefined || this.dirty.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flushing = this.flushing.then(() => this.flush());
    }, this.deps.debounceMs ?? 1_000);
    this.timer.unref();
  }

  /** Stops refreshing; waits for a publish under way. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flushing;
  }

  /** Publishes every home asked for since the last flush; the runs are read once for all of them. */
  private async flush(): Promise<void> {
    const users = [...this.dirty];
    this.dirty.clear();
    let inboxes: Map<string, Inbox>;
    try {
      inboxes = await this.deps.approvals.inboxesFor(users);
    } catch (error) {
      this.deps.onError(error, 'reading inboxes for App Home tabs');
      return;
    }
    for (const [userId, inbox] of inboxes) {
      if (this.closed) return;
      try {
        await this.publishInbox(userId, inbox, {});
      } catch (error) {
        // Someone in the config who is not in the workspace (or left it) has no home to publish.
        if (slackErrorCode(error) === 'user_not_found') continue;
        this.deps.onError(error, `publishing the App Home of ${userId}`, { user: userId });
      }
    }
  }
}

function slackErrorCode(error: unknown): string | undefined {
  if (!(error instanceof Error) || (error as { code?: unknown }).code !== ErrorCode.PlatformError)
    return undefined;
  return (error as { data?: { error?: string } }).data?.error;
}
