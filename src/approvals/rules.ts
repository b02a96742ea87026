import type { EscalationGrant } from '../config/config-types.ts';
import type { Effect, ValidatedStep } from '../pipeline/index.ts';
import type { ApprovalRecord, AwaitedStep, EscalatedPerson, StepApprovals, StoredVersion } from './types.ts';

/** Who may act on a run: the configured groups, and what escalation granted the people it notified. */
export interface Authority {
  readonly groups: Readonly<Record<string, readonly string[]>>;
  readonly escalated: readonly EscalatedPerson[];
  /** A tool's effect in today's config; undefined for a tool no longer configured (treated as irreversible). */
  readonly effectOf: (tool: string) => Effect | undefined;
}

/** On what footing a person may approve a step. */
export type ApprovalRight =
  | { readonly as: 'member' }
  | { readonly as: 'escalated'; readonly counts: EscalationGrant['counts'] };

/** The human author of a step, if a person (not the agent) wrote it. */
export function humanAuthor(version: StoredVersion, stepId: string): string | undefined {
  const provenance = version.provenance[stepId];
  return provenance?.by === 'user' ? provenance.userId : undefined;
}

function isMember(authority: Authority, group: string, userId: string): boolean {
  return (authority.groups[group] ?? []).includes(userId);
}

/**
 * The grant that lets `userId` approve `step` because the run was escalated to them, if any: a level
 * that notified them grants the step's group (or every group), the step's rule does not keep it to
 * its group, and an irreversible step needs a grant that says so. A grant that counts alone wins.
 */
export function escalationGrantFor(
  step: ValidatedStep,
  userId: string,
  authority: Authority,
): EscalationGrant | undefined {
  const { route } = step;
  if (route.kind !== 'review' || route.escalatedMayApprove === false) return undefined;
  const person = authority.escalated.find((candidate) => candidate.userId === userId);
  if (person === undefined) return undefined;
  const irreversible = (authority.effectOf(step.tool) ?? 'irreversible') === 'irreversible';
  const grants = person.may.filter(
    (grant) =>
      (grant.approve === '*' || grant.approve.includes(route.group)) && (!irreversible || grant.irreversible),
  );
  return grants.find((grant) => grant.counts === 'alone') ?? grants[0];
}

/**
 * Whether and how `userId` may approve `step`: as a member of its group, or as far as an escalation
 * grants — never as its author where the policy bars authors, whatever the escalation says.
 */
export function approvalRight(
  step: ValidatedStep,
  version: StoredVersion,
  userId: string,
  authority: Authority,
): ApprovalRight | undefined {
  const { route } = step;
  if (route.kind !== 'review') return undefined;
  if (route.distinctFromAuthor && humanAuthor(version, step.id) === userId) return undefined;
  const grant = escalationGrantFor(step, userId, authority);
  if (grant?.counts === 'alone') return { as: 'escalated', counts: 'alone' };
  if (isMember(authority, route.group, userId)) return { as: 'member' };
  return grant === undefined ? undefined : { as: 'escalated', counts: grant.counts };
}

/**
 * Whether `userId` may edit the run at all: a member of some group, or someone it was escalated to
 * with a grant (what they may write is then the authoring rules' question).
 */
export function mayEdit(authority: Pick<Authority, 'groups' | 'escalated'>, userId: string): boolean {
  return (
    Object.values(authority.groups).some((members) => members.includes(userId)) ||
    authority.escalated.some((person) => person.userId === userId && person.may.length > 0)
  );
}

/** Whether `userId` may approve `step` now. */
export function mayApproveStep(
  step: ValidatedStep,
  version: StoredVersion,
  userId: string,
  authority: Authority,
): boolean {
  return approvalRight(step, version, userId, authority) !== undefined;
}

/** Whether `approval` was given to this very step: its id and its current digest. */
export function isApprovalOf(approval: ApprovalRecord, step: Pick<ValidatedStep, 'id' | 'digest'>): boolean {
  return approval.stepId === step.id && approval.stepDigest === step.digest;
}

/**
 * Where one review step stands: the people whose approval counts (distinct, given to this step id at
 * its current digest, and still entitled to approve it), and whether that is enough — N of them, or
 * one whose escalation grant counts alone.
 */
export function stepApprovals(
  step: ValidatedStep,
  version: StoredVersion,
  approvals: readonly ApprovalRecord[],
  authority: Authority,
): StepApprovals | undefined {
  const { route } = step;
  if (route.kind !== 'review') return undefined;
  const approvers: string[] = [];
  let alone = false;
  for (const approval of approvals) {
    if (!isApprovalOf(approval, step) || approvers.includes(approval.userId)) continue;
    const right = approvalRight(step, version, approval.userId, authority);
    if (right === undefined) continue;
    approvers.push(approval.userId);
    if (right.as === 'escalated' && right.counts === 'alone') alone = true;
  }
  return {
    approvers,
    have: approvers.length,
    need: route.approvals,
    satisfied: alone || approvers.length >= route.approvals,
  };
}

/** Users whose approval counts for `step` (see `stepApprovals`). */
export function countedApprovers(
  step: ValidatedStep,
  version: StoredVersion,
  approvals: readonly ApprovalRecord[],
  authority: Authority,
): readonly string[] {
  return stepApprovals(step, version, approvals, authority)?.approvers ?? [];
}

/** Every review step's standing, by step id. */
export function standingOf(
  version: StoredVersion,
  approvals: readonly ApprovalRecord[],
  authority: Authority,
): Record<string, StepApprovals> {
  const standing: Record<string, StepApprovals> = {};
  for (const step of version.plan.steps) {
    const approved = stepApprovals(step, version, approvals, authority);
    if (approved !== undefined) standing[step.id] = approved;
  }
  return standing;
}

/** Review steps of the version that still lack approvals, in plan order. */
export function awaitedSteps(
  version: StoredVersion,
  approvals: readonly ApprovalRecord[],
  authority: Authority,
): AwaitedStep[] {
  const awaited: AwaitedStep[] = [];
  for (const step of version.plan.steps) {
    const approved = stepApprovals(step, version, approvals, authority);
    if (approved === undefined || approved.satisfied || step.route.kind !== 'review') continue;
    awaited.push({
      stepId: step.id,
      group: step.route.group,
      have: approved.have,
      need: approved.need,
      approvers: approved.approvers,
      mayAct: mayActOn(step, version, approved.approvers, authority),
    });
  }
  return awaited;
}

/**
 * People who may approve `step` now and have not: members of its group, then people an escalation
 * granted it — never its author where the rule bars authors (see `approvalRight`).
 */
export function mayActOn(
  step: ValidatedStep,
  version: StoredVersion,
  counted: readonly string[],
  authority: Authority,
): string[] {
  if (step.route.kind !== 'review') return [];
  const candidates = new Set([
    ...(authority.groups[step.route.group] ?? []),
    ...authority.escalated.map((person) => person.userId),
  ]);
  return [...candidates].filter(
    (userId) => !counted.includes(userId) && approvalRight(step, version, userId, authority) !== undefined,
  );
}

/** Everyone whose approval counts on some step of the version, each once, in the order they approved. */
export function approversOf(
  standing: Readonly<Record<string, StepApprovals>>,
  version: StoredVersion,
  approvals: readonly ApprovalRecord[],
): string[] {
  const people = new Set<string>();
  for (const step of version.plan.steps)
    for (const userId of standing[step.id]?.approvers ?? []) people.add(userId);
  // In the order they approved (their first approval that counts), as people tell it.
  const first = new Map<string, number>();
  for (const approval of approvals)
    if (people.has(approval.userId))
      first.set(approval.userId, Math.min(first.get(approval.userId) ?? approval.at, approval.at));
  return [...people].sort((a, b) => (first.get(a) ?? 0) - (first.get(b) ?? 0));
}

/** Steps whose route is `block`. */
export function blockedSteps(version: StoredVersion): ValidatedStep[] {
  return version.plan.steps.filter((step) => step.route.kind === 'block');
}

/**
 * Review steps `userId` may approve (`eligible`), and of those the ones they have not yet approved
 * under the step's id at its current digest (`fresh`): one click records one approval per fresh step.
 */
export function stepsToApprove(
  version: StoredVersion,
  approvals: readonly ApprovalRecord[],
  userId: string,
  authority: Authority,
): { eligible: ValidatedStep[]; fresh: ValidatedStep[] } {
  const eligible = version.plan.steps.filter((step) => mayApproveStep(step, version, userId, authority));
  const fresh = eligible.filter(
    (step) => !approvals.some((approval) => approval.userId === userId && isApprovalOf(approval, step)),
  );
  return { eligible, fresh };
}

/** Why `userId` may not approve anything here, naming the groups that may. */
export function explainNoAuthority(version: StoredVersion, userId: string, authority: Authority): string {
  const review = version.plan.steps.filter((step) => step.route.kind === 'review');
  if (review.length === 0) return 'nothing in this plan needs a person’s approval';
  const groups = [...new Set(review.map((step) => (step.route.kind === 'review' ? step.route.group : '')))];
  const authored = review.filter(
    (step) =>
      step.route.kind === 'review' &&
      step.route.distinctFromAuthor &&
      humanAuthor(version, step.id) === userId &&
      (isMember(authority, step.route.group, userId) ||
        escalationGrantFor(step, userId, authority) !== undefined),
  );
  if (authored.length > 0) {
    return `you wrote ${authored.map((step) => step.id).join(', ')}, and policy needs someone other than the author to approve it`;
  }
  const escalated = authority.escalated.find((person) => person.userId === userId);
  if (escalated !== undefined) {
    return escalated.may.length === 0
      ? `this plan was escalated to you to follow up, not to approve: only members of ${groups.join(' or ')} can approve it`
      : `your escalation does not cover these steps: only members of ${groups.join(' or ')} can approve them`;
  }
  return `only members of ${groups.join(' or ')} can approve this plan`;
}
