/**
 * The drift alarm (issue 20): posted once to the agent's escalation channel or leads when the share of
 * its plans that people rewrote (more than half of the steps added, changed or removed) reaches the
 * threshold over the window — with the numbers, the window, and links to the most edited runs.
 */
import type { EditWindowStats } from '../src/approvals/edit-window.ts';
import { context, header, type SlackMessage, section } from './blocks.ts';
import { escapeMrkdwn, plural } from './mrkdwn.ts';
import { formatSpan } from './time.ts';

export interface DriftAlarmInput {
  readonly stats: EditWindowStats;
  readonly rule: { readonly above: number; readonly minPlans: number };
  /** Card permalinks by run id (runs without one are named without a link). */
  readonly links: Readonly<Record<string, string>>;
}

const percent = (share: number) => `${Math.round(share * 1000) / 10}%`;

export function buildDriftAlarm({ stats, rule, links }: DriftAlarmInput): SlackMessage {
  const agent = escapeMrkdwn(stats.agent);
  const window = formatSpan(stats.windowMs);
  const text = `⚠️ People are rewriting most of ${agent}'s plans: ${stats.heavy} of ${stats.plans} in the last ${window} (${percent(stats.share)})`;
  const most = stats.mostEdited.map((run) => {
    const link = links[run.runId];
    const name =
      link === undefined ? `\`${escapeMrkdwn(run.runId)}\`` : `<${link}|${escapeMrkdwn(run.runId)}>`;
    return `• ${name}: ${run.touchedSteps} of ${run.totalSteps} steps added, changed or removed`;
  });
  return {
    text,
    blocks: [
      header(`⚠️ Plans from ${stats.agent} are being rewritten`),
      section([
        `In the last *${window}*, people added, changed or removed more than half of the steps of *${stats.heavy} of ${plural(stats.plans, 'plan')}* from \`${agent}\` (*${percent(stats.share)}*); ${stats.edited} of them were edited in all.`,
        `The alarm is set at ${percent(rule.above)} with at least ${plural(rule.minPlans, 'plan')} in the window: the agent may have drifted into cases it does not handle.`,
      ]),
      ...(most.length === 0 ? [] : [section(['*Most edited:*', ...most], 'run')]),
      context(
        `Posted once: again only after the share falls below ${percent(rule.above)} and crosses it again. For the edits that recur, run \`npm run insights -- --agent ${agent}\`.`,
      ),
    ],
  };
}
