/**
 * Early releases on messages (issue "Plans with dependencies"): which steps of a run were released to
 * the agent before the whole plan was decided, what the agent reported for them, and what each other
 * step still waits for. Approvals answers all of it (`RunView.released`, `RunView.waiting`); these
 * helpers only choose what is worth showing: a plan with no `continue` step and nothing released
 * looks as it always did.
 */
import type { RunView, StepOutcome, StoredVersion } from '../src/approvals/types.ts';
import { escapeMrkdwn, plural } from './mrkdwn.ts';
import type { StepRenderInput } from './step-section.ts';

/** What a step's section adds about releases: when it was released, its outcome, what it waits for. */
export type StepReleaseInput = Pick<StepRenderInput, 'releasedAt' | 'outcome' | 'waiting'>;

/** Whether `shown` can run any step early: a step may continue, or one was released already. */
export function releasesMatter(run: RunView, shown: StoredVersion): boolean {
  return (
    Object.keys(run.released).length > 0 ||
    shown.plan.steps.some((step) => step.route.kind !== 'block' && step.route.continue === true)
  );
}

/**
 * Per step of `shown` (the run's current version only: an older version's message says it was
 * superseded): when it was released and what the agent reported for it; while the run is pending, what
 * each step not released still waits for.
 */
export function stepReleaseInputs(
  run: RunView,
  shown: StoredVersion,
  outcomes: ReadonlyMap<string, StepOutcome>,
): (stepId: string) => StepReleaseInput {
  const current = shown.version === run.version;
  const matter = current && releasesMatter(run, shown);
  return (stepId) => {
    if (!matter) return {};
    const release = run.released[stepId];
    if (release !== undefined) {
      return { releasedAt: release.at, outcome: outcomes.get(stepId) ?? 'not_reported' };
    }
    const waiting = run.status === 'pending' ? run.waiting[stepId] : undefined;
    return waiting === undefined ? {} : { waiting };
  };
}

const OUTCOME_WORDS: Readonly<Record<StepOutcome['status'], string>> = {
  applying: '⏳ applying',
  applied: '✔️ applied',
  failed: '❌ failed',
  uncertain: '❓ uncertain',
};

/**
 * The steps released so far, with what the agent reported: "🟢 *Released before it was rejected:*
 * `s1` (✔️ applied), `s4` (not reported yet). No other step will run." Undefined when none was.
 */
export function releasedText(
  run: RunView,
  shown: StoredVersion,
  outcomes: ReadonlyMap<string, StepOutcome>,
): string | undefined {
  if (shown.version !== run.version) return undefined;
  const order = new Map(shown.plan.steps.map((step, index) => [step.id, index]));
  const released = Object.keys(run.released).sort(
    (a, b) => (order.get(a) ?? Number.MAX_SAFE_INTEGER) - (order.get(b) ?? Number.MAX_SAFE_INTEGER),
  );
  if (released.length === 0) return undefined;
  const entries = released.map((stepId) => {
    const outcome = outcomes.get(stepId);
    return `\`${escapeMrkdwn(stepId)}\` (${outcome === undefined ? 'not reported yet' : OUTCOME_WORDS[outcome.status]})`;
  });
  const title: Record<RunView['status'], string> = {
    pending: 'Released so far',
    approved: 'Released before the plan was approved',
    rejected: 'Released before it was rejected',
    expired: 'Released before it expired',
    invalid: 'Released',
  };
  const after =
    run.status === 'rejected' || run.status === 'expired'
      ? ' Every other step was revoked and will not run.'
      : '';
  const shownEntries = entries.slice(0, 20);
  const more =
    entries.length > shownEntries.length
      ? ` and ${plural(entries.length - shownEntries.length, 'more step')}`
      : '';
  return `🟢 *${title[run.status]}:* ${shownEntries.join(', ')}${more}.${after}`;
}
