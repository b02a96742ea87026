/**
 * What one run's journal says about its edits and outcomes (issue 20): the agent's plan, each edit
 * with its diff, who finally wrote each step, and what the agent reported of each. Pure: the records
 * come from `readJournal`/`parseRecord`; nothing here reads Redis.
 */
import type { PlanDiff, Step, ValidatedPlan } from '../../pipeline/index.ts';
import type { JournalRecord, OutcomeStatus } from '../types.ts';

/** Who wrote a step as the plan finally stood. */
export type Authorship =
  | { readonly by: 'agent' }
  | { readonly by: 'user'; readonly userId: string; readonly change: 'added' | 'changed' };

/** The three kinds of authorship an outcome is attributed to. */
export type AuthorshipClass = 'agent' | 'edited' | 'added';

export function authorshipClass(authorship: Authorship): AuthorshipClass {
  return authorship.by === 'agent' ? 'agent' : authorship.change === 'added' ? 'added' : 'edited';
}

export interface EditFacts {
  /** ms since the epoch. */
  readonly at: number;
  readonly editor: string;
  readonly version: number;
  readonly before: ValidatedPlan;
  readonly after: ValidatedPlan;
  readonly diff: PlanDiff<Step>;
  /** Steps this edit added, changed or removed. */
  readonly touched: number;
}

export interface StepOutcome {
  readonly status: OutcomeStatus;
  /** Named numbers the agent reported with it (`{ refund_cents: 148900 }`). */
  readonly metrics: Readonly<Record<string, number>>;
}

export type RunStatus = 'pending' | 'approved' | 'rejected' | 'expired';

export interface RunHistory {
  readonly runId: string;
  readonly agent: string;
  /** When the agent's plan (v1) was validated, ms since the epoch. */
  readonly submittedAt: number;
  readonly status: RunStatus;
  /** The agent's own plan (v1): ids and tools. */
  readonly agentSteps: readonly { readonly id: string; readonly tool: string }[];
  /** The plan as it finally stood, each step with who wrote it. */
  readonly finalSteps: readonly {
    readonly id: string;
    readonly tool: string;
    readonly authorship: Authorship;
  }[];
  readonly edits: readonly EditFacts[];
  /**
   * Steps added, changed or removed between the agent's plan and the plan as it finally stood (a
   * change an edit reverted later does not count), and every step id either plan has.
   */
  readonly touchedSteps: number;
  readonly totalSteps: number;
  /** The agent's last report on each step. */
  readonly outcomes: ReadonlyMap<string, StepOutcome>;
}

/** More than half of the steps were added, changed or removed. */
export function heavilyEdited(run: Pick<RunHistory, 'touchedSteps' | 'totalSteps'>): boolean {
  return run.touchedSteps * 2 > run.totalSteps;
}

/** Added + changed + removed steps of one diff. */
export function stepsTouched(diff: Pick<PlanDiff, 'counts'>): number {
  return diff.counts.added + diff.counts.changed + diff.counts.removed;
}

/**
 * The history of one run from its parsed journal records (oldest first), or undefined for a run
 * whose plan never passed validation (it reached no one, so it has nothing to learn from).
 */
export function historyOf(runId: string, records: readonly JournalRecord[]): RunHistory | undefined {
  let agent: string | undefined;
  let submittedAt: number | undefined;
  let agentSteps: { id: string; tool: string }[] | undefined;
  let status: RunStatus = 'pending';
  const edits: EditFacts[] = [];
  const outcomes = new Map<string, StepOutcome>();
  for (const { event, at } of records) {
    switch (event.type) {
      case 'submitted':
        agent = event.agent;
        break;
      case 'validated':
        if (event.version === 1 && agentSteps === undefined) {
          agentSteps = event.steps.map(({ id, tool }) => ({ id, tool }));
          submittedAt = Date.parse(at);
        }
        break;
      case 'edited':
        edits.push({
          at: Date.parse(at),
          editor: event.editor,
          version: event.version,
          before: event.before,
          after: event.after,
          diff: event.diff,
          touched: stepsTouched(event.diff),
        });
        agent ??= event.before.agent;
        break;
      case 'approved':
      case 'rejected':
      case 'expired':
        status = event.type;
        break;
      case 'outcome':
        outcomes.set(event.stepId, { status: event.status, metrics: metricsOf(event) });
        break;
      default:
        break;
    }
  }
  if (agent === undefined || agentSteps === undefined || submittedAt === undefined) return undefined;
  const finalSteps = authorshipAfter(agentSteps, edits);
  const first = edits[0];
  const last = edits.at(-1);
  const { touched, total } =
    first === undefined || last === undefined
      ? { touched: 0, total: agentSteps.length }
      : touchedSince(first.before, last.after);
  return {
    runId,
    agent,
    submittedAt,
    status,
    agentSteps,
    finalSteps,
    edits,
    touchedSteps: touched,
    totalSteps: total,
    outcomes,
  };
}

function metricsOf(event: JournalRecord['event']): Readonly<Record<string, number>> {
  const metrics = (event as { metrics?: unknown }).metrics;
  if (typeof metrics !== 'object' || metrics === null || Array.isArray(metrics)) return {};
  return Object.fromEntries(
    Object.entries(metrics).filter((entry): entry is [string, number] => Number.isFinite(entry[1])),
  );
}

/** Who wrote each step of the last version: each edit's diff, applied in order to the agent's plan. */
function authorshipAfter(
  agentSteps: readonly { readonly id: string; readonly tool: string }[],
  edits: readonly EditFacts[],
): RunHistory['finalSteps'] {
  const authorship = new Map<string, Authorship>(agentSteps.map((step) => [step.id, { by: 'agent' }]));
  for (const edit of edits) {
    for (const change of edit.diff.changes) {
      if (change.kind === 'added') {
        authorship.set(change.stepId, { by: 'user', userId: edit.editor, change: 'added' });
      } else if (change.kind === 'changed') {
        const was = authorship.get(change.stepId);
        // A step a person added stays theirs to account for: it is still not the agent's.
        const kind = was?.by === 'user' && was.change === 'added' ? 'added' : 'changed';
        authorship.set(change.stepId, { by: 'user', userId: edit.editor, change: kind });
      }
    }
  }
  const last = edits.at(-1)?.after.steps ?? agentSteps;
  return last.map((step) => ({
    id: step.id,
    tool: step.tool,
    authorship: authorship.get(step.id) ?? { by: 'agent' },
  }));
}

/** Steps touched between the agent's plan and `current`, and every step id either has. */
export function touchedSince(
  first: { readonly steps: readonly { readonly id: string; readonly digest: string }[] },
  current: { readonly steps: readonly { readonly id: string; readonly digest: string }[] },
): { readonly touched: number; readonly total: number } {
  const before = new Map(first.steps.map((step) => [step.id, step.digest]));
  const after = new Map(current.steps.map((step) => [step.id, step.digest]));
  const ids = new Set([...before.keys(), ...after.keys()]);
  let touched = 0;
  for (const id of ids) if (before.get(id) !== after.get(id)) touched++;
  return { touched, total: ids.size };
}
