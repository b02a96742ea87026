import type { ValidatedStep } from '../pipeline/index.ts';
import type { ApprovalRecord, AwaitedStep, StoredVersion } from './types.ts';

/** Who may act on a run besides the configured groups: people it was escalated to. */
export interface Authority {
  readonly groups: Readonly<Record<string, readonly string[]>>;
  readonly escalatedTo: readonly string[];
}

/** The human author of a step, if a person (not the agent) wrote it. */
export function humanAuthor(version: StoredVersion, stepId: string): string | undefined {
  const provenance = version.provenance[stepId];
  return provenance?.by === 'user' ? provenance.userId : undefined;
}

/**
 * Whether `userId` may approve `step`: a member of its required group (or someone the run was
 * escalated to), and not its author where the policy bars authors.
 */
export function mayApproveStep(
  step: ValidatedStep,
  version: StoredVersion,
  userId: string,
  authority: Authority,
): boolean {
  if (step.route.kind !== 'review') return false;
  const inGroup =
    (authority.groups[step.route.group] ?? []).includes(userId) || authority.escalatedTo.includes(userId);
  if (!inGroup) return false;
  return !(step.route.distinctFromAuthor && humanAuthor(version, step.id) === userId);
}

/** Users whose approval counts for `step`: distinct, eligible, bound to the step's current digest. */
export function countedApprovers(
  step: ValidatedStep,
  version: StoredVersion,
  approvals: readonly ApprovalRecord[],
  authority: Authority,
): string[] {
  const users = new Set<string>();
  for (const approval of approvals) {
    if (approval.stepDigest === step.digest && mayApproveStep(step, version, approval.userId, authority)) {
      users.add(approval.userId);
    }
  }
  return [...users];
}

/** Review steps of the version that still lack approvals, in plan order. */
export function awaitedSteps(
  version: StoredVersion,
  approvals: readonly ApprovalRecord[],
  authority: Authority,
): AwaitedStep[] {
  const awaited: AwaitedStep[] = [];
  for (const step of version.plan.steps) {
    if (step.route.kind !== 'review') continue;
    const approvers = countedApprovers(step, version, approvals, authority);
    if (approvers.length < step.route.approvals) {
      awaited.push({
        stepId: step.id,
        group: step.route.group,
        have: approvers.length,
        need: step.route.approvals,
        approvers,
      });
    }
  }
  return awaited;
}

/** Steps whose route is `block`. */
export function blockedSteps(version: StoredVersion): ValidatedStep[] {
  return version.plan.steps.filter((step) => step.route.kind === 'block');
}

/** Review steps `userId` may approve and has not yet approved at their current digest. */
export function stepsToApprove(
  version: StoredVersion,
  approvals: readonly ApprovalRecord[],
  userId: string,
  authority: Authority,
): { eligible: ValidatedStep[]; fresh: ValidatedStep[] } {
  const eligible = version.plan.steps.filter((step) => mayApproveStep(step, version, userId, authority));
  const fresh = eligible.filter(
    (step) =>
      !approvals.some((approval) => approval.userId === userId && approval.stepDigest === step.digest),
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
      ((authority.groups[step.route.group] ?? []).includes(userId) || authority.escalatedTo.includes(userId)),
  );
  if (authored.length > 0) {
    return `you wrote ${authored.map((step) => step.id).join(', ')}, and policy needs someone other than the author to approve it`;
  }
  return `only members of ${groups.join(' or ')} can approve this plan`;
}
