/**
 * The change-set side of a policy rule (`PolicyRule.changes`): risk follows what a step will change in
 * the world, as its tool's `preview` read it, not only the tool's name.
 */
import type { ChangeSet } from './change-set.ts';

/**
 * Matches a step by its change set. Every criterion given must hold (and); within a list any entry
 * may (or). A rule with a matcher never matches a step without a change set (no `preview`, or one
 * that failed — that step is unverified and routed to review anyway).
 * @example { paths: ['delivery.date'] }            // any step that moves a delivery date
 * @example { violated: true }                      // any step that breaks an invariant
 * @example { entityTypes: ['invoice'], unknownImpact: true }
 */
export interface ChangeMatcher {
  /**
   * Changed field paths: `delivery.date` matches that path; `delivery` also matches every path under
   * it (`delivery.date`, `delivery.window.end`).
   */
  readonly paths?: readonly string[];
  /**
   * Entity types: the target's, or a related entity's that the step does not only read (impact
   * `write`, `event` or `unknown`).
   */
  readonly entityTypes?: readonly string[];
  /** `true`: any invariant the preview reports `violated`; a list: any of these by name. */
  readonly violated?: readonly string[] | true;
  /** `true`: the preview reports a related entity whose impact is `unknown`. */
  readonly unknownImpact?: true;
}

/** The criteria a matcher may name, for messages. */
export const CHANGE_MATCHER_KEYS = ['paths', 'entityTypes', 'violated', 'unknownImpact'] as const;

/** Whether `changeSet` satisfies every criterion of `matcher`. */
export function matchesChanges(matcher: ChangeMatcher, changeSet: ChangeSet | undefined): boolean {
  if (changeSet === undefined) return false;
  const { paths, entityTypes, violated, unknownImpact } = matcher;
  if (
    paths !== undefined &&
    !changeSet.changes.some((change) =>
      paths.some((path) => change.path === path || change.path.startsWith(`${path}.`)),
    )
  ) {
    return false;
  }
  if (entityTypes !== undefined) {
    const types = [
      changeSet.target.type,
      ...changeSet.related
        .filter((related) => related.impact !== 'read')
        .map((related) => related.entity.type),
    ];
    if (!types.some((type) => entityTypes.includes(type))) return false;
  }
  if (violated !== undefined) {
    const broken = changeSet.invariants.filter((invariant) => invariant.status === 'violated');
    if (!broken.some((invariant) => violated === true || violated.includes(invariant.name))) return false;
  }
  if (unknownImpact === true && !changeSet.related.some((related) => related.impact === 'unknown')) {
    return false;
  }
  return true;
}
