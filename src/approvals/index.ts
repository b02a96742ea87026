/** The approval state machine on Redis: the only module that writes approval state (docs/architecture.md §7). */
export * from './audit-check.ts';
export {
  type DecisionSummary,
  describeDecision,
  type StateFinding,
  type StateFindingCode,
} from './audit-findings.ts';
export * from './decision-feed.ts';
export * from './describe-event.ts';
export * from './edit-window.ts';
export * from './escalation.ts';
export * from './guard.ts';
export * from './inbox.ts';
export * from './journal.ts';
export * from './journal-reader.ts';
export * from './keys.ts';
export * from './message-ledger.ts';
export * from './outcomes.ts';
export { ApprovalQueries, type QueryOptions, type StepArgumentsAnswer } from './queries.ts';
export * from './redis-time.ts';
export * from './rules.ts';
export * from './run-evidence.ts';
export * from './run-view.ts';
export {
  ApprovalService,
  type ApprovalServiceOptions,
  type ClickAnswer,
  type CommittedListener,
  type PublishOptions,
} from './service.ts';
export type { RunFields, RunSnapshot } from './store.ts';
export * from './types.ts';
export type { DiffAction } from './use-cases/edit.ts';
