/**
 * Outcomes attributed to who wrote the step (issue 20): per agent and tool, the steps the agent wrote,
 * the steps people changed and the steps people added — how many ran, how many applied or failed, and
 * the sum and median of each named number the agent reported with the outcome. Pure.
 */
import { type AuthorshipClass, authorshipClass, type RunHistory } from './run-history.ts';

export interface MetricSummary {
  /** Steps that reported it. */
  readonly count: number;
  readonly sum: number;
  readonly median: number;
}

export interface OutcomeGroup {
  readonly tool: string;
  readonly authorship: AuthorshipClass;
  /** Steps of this tool and authorship in approved plans, and those among them with an outcome report. */
  readonly steps: number;
  readonly reported: number;
  readonly applied: number;
  readonly failed: number;
  /** `applying` with no result, or marked uncertain. */
  readonly uncertain: number;
  readonly metrics: Readonly<Record<string, MetricSummary>>;
}

const CLASS_ORDER: readonly AuthorshipClass[] = ['agent', 'edited', 'added'];

/**
 * Every tool × authorship class of `runs` (one agent's) whose steps ran: steps of approved runs and
 * steps reported on in other runs (released early). Sorted by tool, then agent → edited → added.
 */
export function attributeOutcomes(runs: readonly RunHistory[]): OutcomeGroup[] {
  const groups = new Map<
    string,
    {
      tool: string;
      authorship: AuthorshipClass;
      steps: number;
      reported: number;
      applied: number;
      failed: number;
      uncertain: number;
      values: Map<string, number[]>;
    }
  >();
  for (const run of runs) {
    for (const step of run.finalSteps) {
      const outcome = run.outcomes.get(step.id);
      if (run.status !== 'approved' && outcome === undefined) continue;
      const authorship = authorshipClass(step.authorship);
      const key = `${step.tool}\u0000${authorship}`;
      const group = groups.get(key) ?? {
        tool: step.tool,
        authorship,
        steps: 0,
        reported: 0,
        applied: 0,
        failed: 0,
        uncertain: 0,
        values: new Map<string, number[]>(),
      };
      group.steps++;
      if (outcome !== undefined) {
        group.reported++;
        if (outcome.status === 'applied') group.applied++;
        else if (outcome.status === 'failed') group.failed++;
        else group.uncertain++;
        for (const [name, value] of Object.entries(outcome.metrics)) {
          const list = group.values.get(name) ?? [];
          list.push(value);
          group.values.set(name, list);
        }
      }
      groups.set(key, group);
    }
  }
  return [...groups.values()]
    .sort(
      (a, b) =>
        a.tool.localeCompare(b.tool) || CLASS_ORDER.indexOf(a.authorship) - CLASS_ORDER.indexOf(b.authorship),
    )
    .map(({ values, ...group }) => ({
      ...group,
      metrics: Object.fromEntries(
        [...values.entries()]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([name, list]) => [name, summarize(list)]),
      ),
    }));
}

function summarize(values: readonly number[]): MetricSummary {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
  return { count: sorted.length, sum: sorted.reduce((total, value) => total + value, 0), median };
}
