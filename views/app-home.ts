/**
 * A person's inbox in Slack: the App Home tab (`views.publish`) and the `/countersign` command's private
 * answers. Who can act is decided in src/approvals (inbox.ts); this renders what it is given.
 */
import type { HomeView, KnownBlock } from '@slack/types';
import type { EditWindowStats } from '../src/approvals/edit-window.ts';
import type { Inbox, InboxEntry } from '../src/approvals/inbox.ts';
import type { RecurringEdit } from '../src/approvals/insights/edit-patterns.ts';
import { context, divider, header, LIMITS, type SlackMessage, section } from './blocks.ts';
import { clipMrkdwn, escapeMrkdwn, listInWords, mention, plural, truncate } from './mrkdwn.ts';
import { formatInstant, formatInstantFromNow, formatSpan, type TimeOptions } from './time.ts';

/** Where each run's card is: `chat.getPermalink` answers, by run id (absent: no card yet). */
export type CardLinks = Readonly<Record<string, string>>;

/** For an agent's leads: how people edit its plans (src/bot/lead-insights.ts). */
export interface LeadSummary {
  readonly stats: EditWindowStats;
  /** Its drift alarm is raised now. */
  readonly alarm: boolean;
  readonly recurring: readonly RecurringEdit[];
}

export interface AppHomeModel {
  readonly inbox: Inbox;
  readonly links: CardLinks;
  /** For a lead: each agent they lead (none for anyone else). */
  readonly edits?: readonly LeadSummary[];
  /** Milliseconds since the epoch. */
  readonly now: number;
  readonly tz?: string;
}

/** Entries shown per list on the Home tab (3 lists, 2 blocks each, within Slack's 100 blocks). */
const HOME_ENTRIES = 15;
const SUMMARY_MAX = 150;

/** A permalink Slack gave us, or undefined when it could break out of a `<url|text>` link. */
function safeLink(url: string | undefined): string | undefined {
  return url !== undefined && /^https?:\/\/[^\s<>|]+$/.test(url) ? url : undefined;
}

/** "freight-ops: Rebook delivery…" linked to the card when there is one. */
function entryTitle(entry: InboxEntry, links: CardLinks): string {
  const words = entry.summary === undefined ? `plan ${entry.runId}` : entry.summary;
  const text = `${escapeMrkdwn(entry.agent)}: ${clipMrkdwn(words, SUMMARY_MAX)}`;
  const link = safeLink(links[entry.runId]);
  return link === undefined ? `*${text}*` : `*<${link}|${text}>*`;
}

const DECIDED_MARK = { approved: '✅', rejected: '❌', expired: '⌛', invalid: '⚠️', pending: '⏳' } as const;

/** The line under an entry's title: what it waits for from you, or what became of it. */
function entryDetail(entry: InboxEntry, time: TimeOptions): string {
  const id = `\`${escapeMrkdwn(entry.runId)}\` · v${entry.version}`;
  if (entry.status !== 'pending') {
    const by =
      entry.decidedBy !== undefined && /^[UW][A-Z0-9]+$/.test(entry.decidedBy)
        ? ` by ${mention(entry.decidedBy)}`
        : '';
    const at = entry.decidedAt === undefined ? '' : ` ${formatInstant(entry.decidedAt, time)}`;
    const status = entry.status.charAt(0).toUpperCase() + entry.status.slice(1);
    return `${DECIDED_MARK[entry.status]} ${status}${by}${at} · ${id}`;
  }
  const what =
    entry.stepsToApprove.length > 0
      ? `Your approval is needed for ${listInWords(entry.stepsToApprove.map((step) => `\`${escapeMrkdwn(step)}\``))}`
      : entry.mayAct
        ? 'You may approve or reject it'
        : 'For you to follow up — you cannot approve it';
  return `${what} · expires ${formatInstantFromNow(entry.expiresAt, time)} · ${id}`;
}

function entryText(entry: InboxEntry, model: Pick<AppHomeModel, 'links'>, time: TimeOptions): string {
  return `${entryTitle(entry, model.links)}\n${entryDetail(entry, time)}`;
}

function listBlocks(
  title: string,
  empty: string,
  entries: readonly InboxEntry[],
  model: AppHomeModel,
  time: TimeOptions,
): KnownBlock[] {
  const shown = entries.slice(0, HOME_ENTRIES);
  const blocks: KnownBlock[] = [header(`${title} (${entries.length})`)];
  if (shown.length === 0) blocks.push(context(empty));
  for (const entry of shown) blocks.push(section([entryText(entry, model, time)]));
  if (entries.length > shown.length)
    blocks.push(context(`…and ${plural(entries.length - shown.length, 'more run')}.`));
  return blocks;
}

/**
 * The App Home tab: "Waiting for you", "Escalated to you", "Recently decided", each entry linked to
 * its card.
 * @example await client.views.publish({ user_id, view: buildAppHome({ inbox, links, now }) });
 */
export function buildAppHome(model: AppHomeModel): HomeView {
  const time: TimeOptions = { now: model.now, ...(model.tz === undefined ? {} : { tz: model.tz }) };
  const { inbox } = model;
  const blocks: KnownBlock[] = [
    ...listBlocks('Waiting for you', 'Nothing waits for you right now.', inbox.waiting, model, time),
    divider(),
    ...listBlocks('Escalated to you', 'Nothing was escalated to you.', inbox.escalated, model, time),
    divider(),
    ...listBlocks('Recently decided', 'No decided plans of yours yet.', inbox.decided, model, time),
    ...editBlocks(model.edits ?? [], model.links),
    context(`Updated ${formatInstant(model.now, time)} · \`/countersign help\` for the command`),
  ];
  return { type: 'home', blocks: blocks.slice(0, LIMITS.viewBlocks) };
}

/** Agents shown in the leads' section (2 blocks each, within the tab's 100 blocks). */
const HOME_AGENTS = 5;

const percent = (share: number) => `${Math.round(share * 1000) / 10}%`;

/** "How people edit the plans of the agents you lead": per agent, the window, the alarm, what recurs. */
function editBlocks(summaries: readonly LeadSummary[], links: CardLinks): KnownBlock[] {
  if (summaries.length === 0) return [];
  const blocks: KnownBlock[] = [divider(), header('How people edit the plans of agents you lead')];
  for (const { stats, alarm, recurring } of summaries.slice(0, HOME_AGENTS)) {
    const most = stats.mostEdited.map((run) => {
      const link = safeLink(links[run.runId]);
      const name = `${escapeMrkdwn(run.runId)} (${run.touchedSteps} of ${run.totalSteps} steps)`;
      return link === undefined ? name : `<${link}|${name}>`;
    });
    blocks.push(
      section([
        `*${escapeMrkdwn(stats.agent)}* — last ${formatSpan(stats.windowMs)}: ${plural(stats.plans, 'plan')}, ${stats.edited} edited, ${stats.heavy} more than half rewritten (${percent(stats.share)})${alarm ? ' · ⚠️ *drift alarm raised*' : ''}`,
        ...(most.length === 0 ? [] : [`Most edited: ${most.join(', ')}`]),
      ]),
      section(
        recurring.length === 0
          ? ['_No edit recurs in this window._']
          : // Suggestions name tools and argument paths from the config (code spans kept), never plan values.
            recurring.map((group) => `• ${truncate(escapeAngles(group.suggestion), 600)}`),
        'suggestion',
      ),
    );
  }
  blocks.push(
    context('For every recurring edit and the outcomes by who wrote each step: `npm run insights`.'),
  );
  return blocks;
}

/** `&`, `<` and `>` escaped, nothing else: backticks stay code spans. */
function escapeAngles(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** The `/countersign` subcommands, as the help lists them. */
const COMMAND_HELP = [
  '*`/countersign pending`* — plans waiting for your approval, and plans escalated to you',
  '*`/countersign show <run id>`* — where one plan stands, with a link to its card',
  '*`/countersign help`* — this list',
  'Your Countersign tab (App Home) shows the same, and what was decided recently.',
];

/** The command's help; `unknown` is what the person typed when it was not a subcommand. */
export function buildCommandHelp(unknown?: string): SlackMessage {
  const lead =
    unknown === undefined
      ? '*Countersign* answers these (only you see the answer):'
      : `I don't know “${clipMrkdwn(unknown, 100)}”. Countersign answers these (only you see the answer):`;
  return { text: 'Countersign commands', blocks: [section([lead, ...COMMAND_HELP])] };
}

/** `/countersign pending`: what waits for you and what was escalated to you. */
export function buildPendingAnswer(model: AppHomeModel): SlackMessage {
  const time: TimeOptions = { now: model.now, ...(model.tz === undefined ? {} : { tz: model.tz }) };
  const { waiting, escalated } = model.inbox;
  if (waiting.length === 0 && escalated.length === 0) {
    return {
      text: 'Nothing waits for you',
      blocks: [section(['Nothing waits for you right now, and nothing is escalated to you.'])],
    };
  }
  const lines = (title: string, entries: readonly InboxEntry[]) =>
    entries.length === 0
      ? []
      : [`*${title} (${entries.length})*`, ...entries.map((e) => entryText(e, model, time))];
  return {
    text: `${plural(waiting.length, 'plan')} waiting for you, ${escalated.length} escalated to you`,
    blocks: [section([...lines('Waiting for you', waiting), ...lines('Escalated to you', escalated)], 'run')],
  };
}

/** `/countersign show <run id>`: where that run stands for you; `entry` undefined for an unknown run. */
export function buildRunAnswer(
  runId: string,
  entry: InboxEntry | undefined,
  model: Pick<AppHomeModel, 'links' | 'now' | 'tz'>,
): SlackMessage {
  if (entry === undefined) {
    return {
      text: 'No such plan',
      blocks: [
        section([
          `There is no plan with the run id \`${clipMrkdwn(runId, 100)}\`. The run id is on each card, under the steps.`,
        ]),
      ],
    };
  }
  const time: TimeOptions = { now: model.now, ...(model.tz === undefined ? {} : { tz: model.tz }) };
  const where = safeLink(model.links[entry.runId]) === undefined ? 'Its card is not posted yet.' : '';
  return {
    text: `Plan ${entry.runId}: ${entry.status}`,
    blocks: [section([entryText(entry, { links: model.links }, time), ...(where ? [where] : [])])],
  };
}
