/**
 * Every "may I?" question about a run, answered once: does it take actions at all, is the version
 * current, has it expired, may this person approve, reject or edit it. Use cases, the service's
 * queries and — through them — the views and listeners ask here, and nowhere else decides again. Pure.
 */
import type { CountersignConfig } from '../config/config-types.ts';
import type { ValidatedStep } from '../pipeline/index.ts';
import { type Authority, explainNoAuthority, mayEdit, stepsToApprove } from './rules.ts';
import { authorityOf, projectRun, type RunStateInput } from './run-view.ts';
import type { RunSnapshot } from './store.ts';
import type { UseCaseResult } from './types.ts';

/** A run that exists, as a transition reads it. */
export interface RunState extends RunStateInput {
  readonly runId: string;
}

/** The snapshot of a run known to exist. */
export function stateOf(snapshot: RunSnapshot): RunState | undefined {
  if (snapshot.fields === undefined || snapshot.current === undefined) return undefined;
  return {
    runId: snapshot.current.plan.runId,
    fields: snapshot.fields,
    current: snapshot.current,
    approvals: snapshot.approvals,
    outcomes: snapshot.outcomes,
  };
}

/** The answer for a run that takes no more actions — unknown, or already decided — else undefined. */
export function closedAnswer(
  config: CountersignConfig,
  snapshot: RunSnapshot,
  runId: string,
): UseCaseResult | undefined {
  const state = stateOf(snapshot);
  if (state === undefined) return { kind: 'not_found', runId };
  if (state.fields.status === 'pending') return undefined;
  const by = state.fields.decidedBy;
  return {
    kind: 'already_decided',
    run: projectRun(config, runId, state),
    status: state.fields.status,
    ...(by === undefined ? {} : { by }),
  };
}

/** Where a click or an edit aimed at `version` stands. */
export type ActionCheck =
  /** Unknown or decided: answer with `answer`, change nothing. */
  | { readonly kind: 'closed'; readonly answer: UseCaseResult }
  /** Past its expiry: the action expires the run (a late or lost timer never lets a plan through). */
  | { readonly kind: 'expired'; readonly state: RunState }
  /** Aimed at a version that is no longer current: refused, never merged. */
  | { readonly kind: 'stale'; readonly state: RunState; readonly currentVersion: number }
  | { readonly kind: 'open'; readonly state: RunState };

/** The checks every click, form and edit goes through, in order: exists and pending, not expired, current. */
export function checkAction(
  config: CountersignConfig,
  snapshot: RunSnapshot,
  input: { readonly runId: string; readonly version: number },
  now: number,
): ActionCheck {
  const closed = closedAnswer(config, snapshot, input.runId);
  const state = stateOf(snapshot);
  if (closed !== undefined || state === undefined) {
    return { kind: 'closed', answer: closed ?? { kind: 'not_found', runId: input.runId } };
  }
  if (now >= state.fields.expiresAt) return { kind: 'expired', state };
  if (input.version !== state.current.version) {
    return { kind: 'stale', state, currentVersion: state.current.version };
  }
  return { kind: 'open', state };
}

/** Who may act on the run. */
export function authorityFor(config: CountersignConfig, state: RunStateInput): Authority {
  return authorityOf(config, state.fields);
}

/** What `userId` may approve on the current version, or why nothing. */
export type ApproveRights =
  | {
      readonly ok: true;
      /** Review steps they may approve. */
      readonly eligible: readonly ValidatedStep[];
      /** Of those, the ones they have not yet approved at the step's id and digest. */
      readonly fresh: readonly ValidatedStep[];
    }
  | { readonly ok: false; readonly reason: string };

/**
 * May `userId` approve anything here, and what. When no step of the version needs review (an edit left
 * only automatic — or blocked — steps), nobody is anyone's approver: whoever may edit the plan may then
 * approve or reject it, so a run never becomes one nobody can decide.
 */
export function approveRights(config: CountersignConfig, state: RunState, userId: string): ApproveRights {
  const authority = authorityFor(config, state);
  const { eligible, fresh } = stepsToApprove(state.current, state.approvals, userId, authority);
  if (eligible.length > 0) return { ok: true, eligible, fresh };
  const needsReview = state.current.plan.steps.some((step) => step.route.kind === 'review');
  if (!needsReview && mayEdit(authority, userId)) return { ok: true, eligible: [], fresh: [] };
  return {
    ok: false,
    reason: needsReview
      ? explainNoAuthority(state.current, userId, authority)
      : 'you are in no group that may act on this plan',
  };
}

/** Anyone who may approve the current version (see `approveRights`) may reject the run. */
export function rejectRights(
  config: CountersignConfig,
  state: RunState,
  userId: string,
): { readonly ok: true } | { readonly ok: false; readonly reason: string } {
  const rights = approveRights(config, state, userId);
  return rights.ok ? { ok: true } : rights;
}

/** A member of some group, or someone escalated to with a grant, may edit (what they may write is `authoring`). */
export function editRights(
  config: CountersignConfig,
  state: RunState,
  userId: string,
): { readonly ok: true } | { readonly ok: false; readonly reason: string } {
  return mayEdit(authorityFor(config, state), userId)
    ? { ok: true }
    : { ok: false, reason: 'you are in no group that may edit plans' };
}

/** Whether a timer aimed at `version` still applies: the run is pending at that version. */
export function timerApplies(snapshot: RunSnapshot, version: number): boolean {
  return snapshot.fields?.status === 'pending' && snapshot.fields.version === version;
}
