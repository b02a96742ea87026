/** The approval state machine on Redis: the only module that writes approval state (DESIGN.md §7). */
export * from './audit-check.ts';
export * from './describe-event.ts';
export * from './journal.ts';
export * from './keys.ts';
export * from './outcomes.ts';
export * from './rules.ts';
export * from './run-view.ts';
export {
  ApprovalService,
  type ApprovalServiceOptions,
  type EditedStep,
  envelopeOf,
} from './service.ts';
export type { RunFields, RunSnapshot } from './store.ts';
export * from './types.ts';
