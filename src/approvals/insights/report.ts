/**
 * The insights report (issue 20, `npm run insights`): per agent, how much its plans are edited, the
 * edits that recur with a suggestion each, and outcomes by who wrote the step. Pure: built from run
 * histories, rendered as Markdown or JSON.
 */
import { attributeOutcomes, type OutcomeGroup } from './attribution.ts';
import { type FieldDescriber, type RecurringEdit, recurringEdits } from './edit-patterns.ts';
import { type EditStats, editStats } from './edit-stats.ts';
import type { AuthorshipClass, RunHistory } from './run-history.ts';

export interface AgentInsights {
  readonly agent: string;
  readonly edits: EditStats;
  readonly recurring: readonly RecurringEdit[];
  readonly outcomes: readonly OutcomeGroup[];
}

export interface InsightsReport {
  /** ISO 8601: runs submitted since then. */
  readonly since: string;
  readonly generatedAt: string;
  /** Runs read (with a validated plan). */
  readonly runs: number;
  readonly agents: readonly AgentInsights[];
}

export interface ReportOptions {
  readonly since: number;
  readonly now: number;
  /** Only this agent. */
  readonly agent?: string;
  /** A pattern is listed once it occurs in this many edited plans (default 2). */
  readonly minPlans?: number;
  readonly fields?: FieldDescriber;
}

export function insightsReport(runs: readonly RunHistory[], options: ReportOptions): InsightsReport {
  const selected = runs.filter(
    (run) => run.submittedAt >= options.since && (options.agent === undefined || run.agent === options.agent),
  );
  const agents = [...new Set(selected.map((run) => run.agent))].sort();
  return {
    since: new Date(options.since).toISOString(),
    generatedAt: new Date(options.now).toISOString(),
    runs: selected.length,
    agents: agents.map((agent) => {
      const mine = selected.filter((run) => run.agent === agent);
      return {
        agent,
        edits: editStats(agent, mine),
        recurring: recurringEdits(mine, {
          ...(options.minPlans === undefined ? {} : { minPlans: options.minPlans }),
          ...(options.fields === undefined ? {} : { fields: options.fields }),
        }),
        outcomes: attributeOutcomes(mine),
      };
    }),
  };
}

const AUTHORSHIP: Record<AuthorshipClass, string> = {
  agent: 'the agent',
  edited: 'the agent, changed by a person',
  added: 'a person (added)',
};

const count = (n: number) => n.toLocaleString('en-US');
const percent = (share: number) => `${(share * 100).toFixed(share === 0 || share === 1 ? 0 : 1)}%`;
const decimal = (n: number) =>
  Number.isInteger(n) ? count(n) : n.toLocaleString('en-US', { maximumFractionDigits: 2 });
/** Markdown table cells: a pipe or a line break would end the cell. */
const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** The report as Markdown, for a person. */
export function renderMarkdown(report: InsightsReport): string {
  const lines = [
    `# Countersign insights`,
    '',
    `Runs submitted since ${report.since}: ${count(report.runs)}. Generated ${report.generatedAt}.`,
  ];
  if (report.agents.length === 0) lines.push('', 'No plans in this period.');
  for (const agent of report.agents) lines.push('', ...agentSection(agent));
  return `${lines.join('\n')}\n`;
}

function agentSection({ agent, edits, recurring, outcomes }: AgentInsights): string[] {
  const lines = [`## Agent \`${agent}\``, '', '### Edits', ''];
  lines.push(
    `- ${count(edits.plans)} plans, ${count(edits.edited)} edited (${percent(edits.plans === 0 ? 0 : edits.edited / edits.plans)}), ${count(edits.edits)} edits.`,
  );
  if (edits.edits > 0) {
    lines.push(
      `- Steps touched per edit: median ${decimal(edits.touchedPerEdit.median)}, mean ${decimal(edits.touchedPerEdit.mean)}, most ${count(edits.touchedPerEdit.max)}.`,
    );
  }
  lines.push(
    `- More than half of the steps added, changed or removed: ${count(edits.heavilyEdited)} of ${count(edits.plans)} plans (${percent(edits.heavyShare)}).`,
  );
  if (edits.mostEdited.length > 0) {
    lines.push(
      `- Most edited: ${edits.mostEdited.map((run) => `\`${run.runId}\` (${run.touchedSteps} of ${run.totalSteps} steps)`).join(', ')}.`,
    );
  }
  lines.push('', '### Recurring edits', '');
  if (recurring.length === 0) lines.push('No edit recurs in two or more edited plans.');
  else {
    lines.push('| edited plans | suggestion | examples |', '| ---: | --- | --- |');
    for (const group of recurring) {
      const examples = group.examples.map((e) => `\`${e.runId}\` by ${e.editor}: ${e.text}`).join('; ');
      lines.push(
        `| ${group.plans} of ${group.editedPlans} | ${cell(group.suggestion)} | ${cell(examples)} |`,
      );
    }
  }
  lines.push('', '### Outcomes by who wrote the step', '');
  if (outcomes.length === 0) lines.push('No step of an approved plan yet.');
  else {
    lines.push(
      '| tool | written by | steps | reported | applied | failed | uncertain | named numbers (sum · median) |',
      '| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |',
    );
    for (const group of outcomes) {
      const rate = (n: number) =>
        group.reported === 0 ? '–' : `${count(n)} (${percent(n / group.reported)})`;
      const metrics = Object.entries(group.metrics)
        .map(([name, m]) => `${name}: ${decimal(m.sum)} · ${decimal(m.median)} (${m.count})`)
        .join('; ');
      lines.push(
        `| \`${group.tool}\` | ${AUTHORSHIP[group.authorship]} | ${count(group.steps)} | ${count(group.reported)} | ${rate(group.applied)} | ${rate(group.failed)} | ${rate(group.uncertain)} | ${cell(metrics || '–')} |`,
      );
    }
  }
  return lines;
}
