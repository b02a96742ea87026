/** What the approvals service hands its listeners and callers (service.ts). */
import type { RunView, UseCaseResult } from './types.ts';

/** Sees each commit that changes what people see of a run, by run and revision. */
export type ChangeListener = (commit: {
  readonly runId: string;
  readonly revision: number;
  /**
   * When what people see of the run will change with no commit (ms since the epoch, Redis's clock): a
   * step reported `applying` reads as `uncertain` once `defaults.uncertainAfter` has passed.
   */
  readonly showAgainAt?: number;
}) => Promise<void> | void;

/** Sees every committed result (and the run's revision after it), after its decision was handed to delivery. */
export type CommittedListener = (
  result: UseCaseResult,
  commit: { readonly runId: string; readonly revision: number },
) => Promise<void> | void;

/**
 * How a command hands its committed result to the listeners. By default it awaits them, and a
 * listener's failure is thrown after every listener ran: the commit stands, and retrying the command
 * (an intake or timer job) is idempotent and shows the result again. A caller that must answer before
 * Slack is updated (a modal submission, whose answer is due within 3 s) defers them: they run after
 * the command returns, their failures are reported, and `drain()` waits for them.
 */
export interface PublishOptions {
  readonly deferPublish?: boolean;
}

/** A click's target, once the guard let it through: the run to act on, or the answer to show instead. */
export type ClickAnswer =
  | { readonly ok: true; readonly run: RunView }
  | { readonly ok: false; readonly refusal: UseCaseResult };
