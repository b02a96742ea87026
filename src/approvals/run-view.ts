/**
 * The read model: a run as the rest of the system sees it, projected from what is stored. Pure, so the
 * service and the tests project runs the same way.
 */
import type { CountersignConfig } from '../config/config-types.ts';
import { unmetDependencies } from '../pipeline/index.ts';
import { type Authority, approversOf, awaitedSteps, blockedSteps, standingOf } from './rules.ts';
import type { RunFields } from './store.ts';
import type {
  ApprovalRecord,
  EscalatedPerson,
  RunView,
  StepOutcome,
  StepRelease,
  StepWait,
  StoredVersion,
} from './types.ts';

/** What a projection reads of the config. */
export type AuthorityConfig = Pick<CountersignConfig, 'groups' | 'escalation'> & {
  readonly pipeline: Pick<CountersignConfig['pipeline'], 'tools'>;
};

/** The run fields escalation rights are read from. */
export type EscalationFields = Pick<
  RunFields,
  'agent' | 'escalatedTo' | 'escalatedLevels' | 'escalationLevel'
>;

/** user → the escalation levels that notified them. */
export function escalatedLevels(
  config: Pick<CountersignConfig, 'escalation'>,
  fields: EscalationFields,
): Readonly<Record<string, readonly number[]>> {
  if (fields.escalatedLevels !== undefined) return fields.escalatedLevels;
  // Escalated before levels were recorded per person: the levels up to the run's that name them today.
  const levels = config.escalation[fields.agent]?.levels ?? [];
  return Object.fromEntries(
    fields.escalatedTo.map((userId) => [
      userId,
      levels.flatMap((level, index) =>
        index < fields.escalationLevel && level.notify.includes(userId) ? [index + 1] : [],
      ),
    ]),
  );
}

/** The people a run was escalated to, with what today's config lets the levels that notified them do. */
export function escalatedPeople(
  config: Pick<CountersignConfig, 'escalation'>,
  fields: EscalationFields,
): EscalatedPerson[] {
  const levels = config.escalation[fields.agent]?.levels ?? [];
  return Object.entries(escalatedLevels(config, fields)).map(([userId, notifiedAt]) => ({
    userId,
    levels: notifiedAt,
    may: notifiedAt.flatMap((level) => {
      const grant = levels[level - 1]?.may;
      return grant === undefined ? [] : [grant];
    }),
  }));
}

/** Who may act on the run: the configured groups, and what escalation granted. */
export function authorityOf(config: AuthorityConfig, fields: EscalationFields): Authority {
  return {
    groups: config.groups,
    escalated: escalatedPeople(config, fields),
    effectOf: (tool) => config.pipeline.tools.get(tool)?.effect,
  };
}

/** A run's stored state, as one transition reads or writes it. */
export interface RunStateInput {
  readonly fields: RunFields;
  readonly current: StoredVersion;
  readonly approvals: readonly ApprovalRecord[];
  /** The agent's reports per step as stored (what is `applied` decides what waiting steps wait for). */
  readonly outcomes?: Readonly<Record<string, StepOutcome>>;
}

/** Projects the run as people and agents see it (current version only). */
export function projectRun(config: AuthorityConfig, runId: string, state: RunStateInput): RunView {
  const { fields, current, approvals } = state;
  const authority = authorityOf(config, fields);
  const standing = standingOf(current, approvals, authority);
  return {
    runId,
    agent: fields.agent,
    status: fields.status,
    version: current.version,
    current,
    approvals,
    standing,
    awaiting: fields.status === 'pending' ? awaitedSteps(current, approvals, authority) : [],
    blocked: blockedSteps(current),
    ...(fields.decidedBy === undefined ? {} : { decidedBy: fields.decidedBy }),
    approvedBy: approversOf(standing, current, approvals),
    ...(fields.decidedAt === undefined ? {} : { decidedAt: fields.decidedAt }),
    ...(fields.reason === undefined ? {} : { reason: fields.reason }),
    ...(fields.recheckProblem === undefined || fields.status !== 'pending'
      ? {}
      : { recheckProblem: fields.recheckProblem }),
    escalationLevel: fields.escalationLevel,
    escalatedTo: fields.escalatedTo,
    escalated: authority.escalated,
    usedStepIds:
      current.stepHistory === undefined
        ? current.plan.steps.map((step) => step.id)
        : Object.keys(current.stepHistory),
    ...(fields.escalatedAt === undefined ? {} : { escalatedAt: fields.escalatedAt }),
    ...(fields.chainStep === undefined ? {} : { chainStep: fields.chainStep }),
    createdAt: fields.createdAt,
    released: Object.fromEntries(
      Object.entries(fields.released ?? {}).map(([stepId, entry]): [string, StepRelease] => [
        stepId,
        { at: entry.at, version: entry.version },
      ]),
    ),
    waiting:
      fields.status === 'pending'
        ? waitingOf(current, standing, appliedOf(state.outcomes), fields.released ?? {})
        : {},
  };
}

/** The steps reported `applied`. */
export function appliedOf(outcomes: RunStateInput['outcomes']): Set<string> {
  return new Set(
    Object.values(outcomes ?? {}).flatMap((outcome) =>
      outcome.status === 'applied' ? [outcome.stepId] : [],
    ),
  );
}

/** What each step of a pending version not released yet waits for, given the steps reported applied. */
export function waitingOf(
  current: StoredVersion,
  standing: RunView['standing'],
  applied: ReadonlySet<string>,
  released: Readonly<Record<string, unknown>> = {},
): Record<string, StepWait> {
  return Object.fromEntries(
    current.plan.steps
      .filter((step) => released[step.id] === undefined)
      .map((step) => [
        step.id,
        {
          approvals: step.route.kind === 'review' && standing[step.id]?.satisfied !== true,
          dependencies: unmetDependencies(step, applied),
          plan: step.route.kind === 'block' || step.route.continue !== true,
        },
      ]),
  );
}
