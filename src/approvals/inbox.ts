/**
 * A person's inbox: which runs wait for them, which were escalated to them, which they were part of
 * and are decided. The rule of who can act is the guard's (`approveRights`); this only sorts runs by
 * it, so the App Home, the `/countersign` command and the renderer's "whose home changed" agree. Pure.
 */
import type { CountersignConfig } from '../config/config-types.ts';
import { approveRights, type RunState } from './guard.ts';
import type { RunStatus } from './types.ts';

/** Where a run stands for one person. */
export type InboxPlace = 'waiting' | 'escalated' | 'decided';

/** One run in a person's inbox. */
export interface InboxEntry {
  readonly runId: string;
  readonly agent: string;
  readonly summary?: string;
  readonly status: RunStatus;
  readonly version: number;
  /** ms since epoch. */
  readonly expiresAt: number;
  /** Steps this person may approve now (not yet approved by them at their current digest). */
  readonly stepsToApprove: readonly string[];
  /** Whether they may approve or reject now (an escalation may notify without granting anything). */
  readonly mayAct: boolean;
  readonly decidedBy?: string;
  readonly decidedAt?: number;
}

/** A person's inbox, each list in the order it is shown. */
export interface Inbox {
  /** Pending runs where they can approve or decide something now, soonest expiry first. */
  readonly waiting: readonly InboxEntry[];
  /** Pending runs escalated to them (acting or not), soonest expiry first. */
  readonly escalated: readonly InboxEntry[];
  /** Decided runs they approved, decided, were escalated or could have acted on, latest first. */
  readonly decided: readonly InboxEntry[];
}

/** The run as an inbox entry for `userId` at `now`: what they may approve, or what became of it. */
export function inboxEntry(
  config: CountersignConfig,
  state: RunState,
  userId: string,
  now: number,
): InboxEntry {
  const { fields, current } = state;
  const rights = isOpen(state, now) ? approveRights(config, state, userId) : undefined;
  const stepsToApprove = rights?.ok === true ? rights.fresh.map((step) => step.id) : [];
  // May decide now: something left to approve, or nothing to review and the right to decide it.
  const mayAct = rights?.ok === true && (stepsToApprove.length > 0 || rights.eligible.length === 0);
  return {
    runId: state.runId,
    agent: fields.agent,
    ...(current.plan.summary === undefined ? {} : { summary: current.plan.summary }),
    status: fields.status,
    version: current.version,
    expiresAt: fields.expiresAt,
    stepsToApprove,
    mayAct,
    ...(fields.decidedBy === undefined ? {} : { decidedBy: fields.decidedBy }),
    ...(fields.decidedAt === undefined ? {} : { decidedAt: fields.decidedAt }),
  };
}

function isOpen(state: RunState, now: number): boolean {
  return state.fields.status === 'pending' && now < state.fields.expiresAt;
}

/**
 * Where the run stands for `userId` at `now`, or undefined when it is none of their business. An
 * escalated run is under `escalated` whether or not the escalation lets them act (the entry says).
 */
export function inboxPlace(
  config: CountersignConfig,
  state: RunState,
  userId: string,
  now: number,
): { readonly place: InboxPlace; readonly entry: InboxEntry } | undefined {
  const entry = inboxEntry(config, state, userId, now);
  if (isOpen(state, now)) {
    if (state.fields.escalatedTo.includes(userId)) return { place: 'escalated', entry };
    return entry.mayAct ? { place: 'waiting', entry } : undefined;
  }
  if (state.fields.status === 'pending') return undefined; // past its expiry, not yet swept
  return concernedUsers(config, concernOf(state)).includes(userId) ? { place: 'decided', entry } : undefined;
}

/** What `concernedUsers` reads of a run: a `RunView` has it, and so has a stored run's state. */
export interface RunConcern {
  readonly current: RunState['current'];
  readonly approvals: RunState['approvals'];
  readonly escalatedTo: readonly string[];
  readonly decidedBy?: string | undefined;
}

/**
 * Everyone a run concerns: members of the groups its review steps need, the people it was escalated
 * to, everyone who approved a step, and who decided it. Their inboxes change when the run does.
 */
export function concernedUsers(config: Pick<CountersignConfig, 'groups'>, run: RunConcern): string[] {
  const people = new Set<string>();
  for (const step of run.current.plan.steps) {
    if (step.route.kind !== 'review') continue;
    for (const member of config.groups[step.route.group] ?? []) people.add(member);
  }
  for (const userId of run.escalatedTo) people.add(userId);
  for (const approval of run.approvals) people.add(approval.userId);
  if (run.decidedBy !== undefined && /^[UW][A-Z0-9]+$/.test(run.decidedBy)) people.add(run.decidedBy);
  return [...people];
}

/**
 * Whether `userId` may look a run up by its id (`/countersign show`): someone it concerns, or a member
 * of any configured group. Anyone else is answered as for an unknown id — a run's summary can come from
 * a private channel.
 */
export function mayViewRun(
  config: Pick<CountersignConfig, 'groups'>,
  state: RunState,
  userId: string,
): boolean {
  return (
    Object.values(config.groups).some((members) => members.includes(userId)) ||
    concernedUsers(config, concernOf(state)).includes(userId)
  );
}

/** A stored run's state as `concernedUsers` reads it. */
export function concernOf(state: RunState): RunConcern {
  return {
    current: state.current,
    approvals: state.approvals,
    escalatedTo: state.fields.escalatedTo,
    decidedBy: state.fields.decidedBy,
  };
}

/** Sorts placed runs into an inbox: at most `limit` per list. */
export function sortInbox(
  placed: readonly { readonly place: InboxPlace; readonly entry: InboxEntry }[],
  limit: number,
): Inbox {
  const of = (place: InboxPlace) => placed.filter((item) => item.place === place).map((item) => item.entry);
  const byExpiry = (a: InboxEntry, b: InboxEntry) => a.expiresAt - b.expiresAt;
  const byDecision = (a: InboxEntry, b: InboxEntry) => (b.decidedAt ?? 0) - (a.decidedAt ?? 0);
  return {
    waiting: of('waiting').sort(byExpiry).slice(0, limit),
    escalated: of('escalated').sort(byExpiry).slice(0, limit),
    decided: of('decided').sort(byDecision).slice(0, limit),
  };
}
