/**
 * How much people edit an agent's plans (issue 20): plans submitted and edited, steps touched per
 * edit, and the share of plans where more than half of the steps were added, changed or removed — the
 * figure the drift alarm watches. Pure; the same definitions as the live window (edit-window.ts).
 */
import { heavilyEdited, type RunHistory } from './run-history.ts';

export interface HeavyRun {
  readonly runId: string;
  readonly touchedSteps: number;
  readonly totalSteps: number;
}

export interface EditStats {
  readonly agent: string;
  /** Plans that passed validation and reached people. */
  readonly plans: number;
  /** Plans with at least one edit. */
  readonly edited: number;
  readonly edits: number;
  /** Steps touched per edit (added + changed + removed). */
  readonly touchedPerEdit: { readonly mean: number; readonly median: number; readonly max: number };
  /** Plans where more than half of the steps were touched, and their share of `plans`. */
  readonly heavilyEdited: number;
  readonly heavyShare: number;
  /** The most heavily edited runs first (share of steps touched, then steps touched). */
  readonly mostEdited: readonly HeavyRun[];
}

/** Edit statistics of one agent's runs. */
export function editStats(agent: string, runs: readonly RunHistory[], top = 3): EditStats {
  const mine = runs.filter((run) => run.agent === agent);
  const touched = mine.flatMap((run) => run.edits.map((edit) => edit.touched)).sort((a, b) => a - b);
  const heavy = mine.filter(heavilyEdited);
  const middle = Math.floor(touched.length / 2);
  const median =
    touched.length === 0
      ? 0
      : touched.length % 2 === 1
        ? (touched[middle] ?? 0)
        : ((touched[middle - 1] ?? 0) + (touched[middle] ?? 0)) / 2;
  return {
    agent,
    plans: mine.length,
    edited: mine.filter((run) => run.edits.length > 0).length,
    edits: touched.length,
    touchedPerEdit: {
      mean: touched.length === 0 ? 0 : touched.reduce((a, b) => a + b, 0) / touched.length,
      median,
      max: touched.at(-1) ?? 0,
    },
    heavilyEdited: heavy.length,
    heavyShare: mine.length === 0 ? 0 : heavy.length / mine.length,
    mostEdited: rankHeavy(
      mine
        .filter((run) => run.touchedSteps > 0)
        .map(({ runId, touchedSteps, totalSteps }) => ({ runId, touchedSteps, totalSteps })),
    ).slice(0, top),
  };
}

/** Most heavily edited first: share of steps touched, then steps touched, then run id. */
export function rankHeavy<R extends HeavyRun>(runs: readonly R[]): R[] {
  const share = (run: HeavyRun) => (run.totalSteps === 0 ? 0 : run.touchedSteps / run.totalSteps);
  return [...runs].sort(
    (a, b) => share(b) - share(a) || b.touchedSteps - a.touchedSteps || a.runId.localeCompare(b.runId),
  );
}
