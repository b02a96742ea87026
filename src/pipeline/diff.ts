import diff from 'microdiff';
import { CountersignError } from './errors.ts';
import { isJsonObject, type JsonObject, type JsonValue, valueAt } from './json.ts';
import { describeFieldPath } from './json-path.ts';
import type { Step } from './plan.ts';

/** A location inside a step's args: object keys as strings, array indexes as numbers. */
export type ArgPath = readonly (string | number)[];

/**
 * One difference inside a step's args, as microdiff reports it. Arrays are compared index by index,
 * so inserting into a list shows as changes to the later indexes plus one `added` at the end.
 */
export type FieldChange =
  | { readonly kind: 'added'; readonly path: ArgPath; readonly after: JsonValue }
  | { readonly kind: 'removed'; readonly path: ArgPath; readonly before: JsonValue }
  | {
      readonly kind: 'changed';
      readonly path: ArgPath;
      readonly before: JsonValue;
      readonly after: JsonValue;
    };

/**
 * What happened to one step id between two versions. A plan diff holds at most one entry per step id.
 * Positions are 0-based: `index` of an added step is in `after`, of a removed step in `before`;
 * `from` is in `before` and `to` in `after`.
 */
export type StepChange<S extends Step = Step> =
  | { readonly kind: 'added'; readonly stepId: string; readonly step: S; readonly index: number }
  | { readonly kind: 'removed'; readonly stepId: string; readonly step: S; readonly index: number }
  | {
      readonly kind: 'changed';
      readonly stepId: string;
      readonly before: S;
      readonly after: S;
      readonly from: number;
      readonly to: number;
      /** Its order relative to the other kept steps changed too (it is not listed again as `moved`). */
      readonly moved: boolean;
      readonly toolChanged: boolean;
      /** Its `dependsOn` changed (compare `before.dependsOn` with `after.dependsOn`). */
      readonly dependenciesChanged: boolean;
      /** Differences in args; empty when only the tool or the dependencies changed. */
      readonly fields: readonly FieldChange[];
    }
  | {
      readonly kind: 'moved';
      readonly stepId: string;
      /** The step as it is in `after`; its tool and args are unchanged, so is its digest. */
      readonly step: S;
      readonly from: number;
      readonly to: number;
    };

/** The semantic diff between two versions of a plan (docs/architecture.md §6). */
export interface PlanDiff<S extends Step = Step> {
  /**
   * Added, changed and moved steps in `after` order; each removed step sits just after the nearest
   * step that preceded it in `before` and kept its place (or first, if none did), so removals read
   * in `before` order and precede additions at the same spot, as in a unified diff.
   */
  readonly changes: readonly StepChange<S>[];
  /** Ids of added and changed steps, in `after` order: exactly the steps that need (re-)approval. */
  readonly touchedStepIds: readonly string[];
  readonly isEmpty: boolean;
  /** `moved` counts every step whose relative order changed, including changed steps with `moved`. */
  readonly counts: {
    readonly added: number;
    readonly removed: number;
    readonly changed: number;
    readonly moved: number;
  };
}

/**
 * Diffs two versions of a plan, matching steps by `id`. A step with the same tool, dependencies and deep-equal
 * args is untouched. Moves are the fewest that explain the new order (the steps outside a longest
 * increasing subsequence), so inserting or removing a step never makes its neighbours look moved.
 * Step ids must be unique within each plan (parse guarantees it); duplicates are a bug and throw.
 *
 * @example
 * const d = diffPlans(v1, v2);
 * d.touchedStepIds; // ['s2', 'new1'] — their approvals no longer hold
 */
export function diffPlans<S extends Step>(
  before: { readonly steps: readonly S[] },
  after: { readonly steps: readonly S[] },
): PlanDiff<S> {
  const beforeIndex = indexById(before.steps);
  const afterIndex = indexById(after.steps);

  // Steps present in both, in `before` order, with their position in `after`.
  const kept: { readonly id: string; readonly to: number }[] = [];
  for (const step of before.steps) {
    const to = afterIndex.get(step.id);
    if (to !== undefined) kept.push({ id: step.id, to });
  }
  const stable = longestIncreasingSubsequence(kept.map((k) => k.to));
  const movedIds = new Set(kept.filter((_, i) => !stable.has(i)).map((k) => k.id));

  // Anchor each removed step to the last stable step before it: stable steps keep their relative
  // order in both plans, so anchors never go backwards and removals stay in `before` order.
  const removedAfter = new Map<number, StepChange<S>[]>();
  let anchor = -1;
  before.steps.forEach((step, index) => {
    const to = afterIndex.get(step.id);
    if (to === undefined) {
      const group = removedAfter.get(anchor) ?? [];
      group.push({ kind: 'removed', stepId: step.id, step, index });
      removedAfter.set(anchor, group);
    } else if (!movedIds.has(step.id)) {
      anchor = to;
    }
  });

  const changes: StepChange<S>[] = [...(removedAfter.get(-1) ?? [])];
  after.steps.forEach((step, to) => {
    const from = beforeIndex.get(step.id);
    if (from === undefined) {
      changes.push({ kind: 'added', stepId: step.id, step, index: to });
    } else {
      const prior = before.steps[from]!;
      const moved = movedIds.has(step.id);
      const toolChanged = prior.tool !== step.tool;
      const fields = fieldChanges(prior.args, step.args);
      const dependenciesChanged = !sameIds(prior.dependsOn, step.dependsOn);
      if (toolChanged || dependenciesChanged || fields.length > 0) {
        changes.push({
          kind: 'changed',
          stepId: step.id,
          before: prior,
          after: step,
          from,
          to,
          moved,
          toolChanged,
          dependenciesChanged,
          fields,
        });
      } else if (moved) {
        changes.push({ kind: 'moved', stepId: step.id, step, from, to });
      }
    }
    changes.push(...(removedAfter.get(to) ?? []));
  });

  const touchedStepIds = changes
    .filter((c) => c.kind === 'added' || c.kind === 'changed')
    .map((c) => c.stepId);
  const count = (kind: StepChange['kind']): number => changes.filter((c) => c.kind === kind).length;
  return {
    changes,
    touchedStepIds,
    isEmpty: changes.length === 0,
    counts: {
      added: count('added'),
      removed: count('removed'),
      changed: count('changed'),
      moved: movedIds.size,
    },
  };
}

/** Two `dependsOn` lists name the same steps (parse keeps them sorted and unique; absent is none). */
function sameIds(a: readonly string[] = [], b: readonly string[] = []): boolean {
  return a.length === b.length && a.every((id, index) => id === b[index]);
}

function indexById(steps: readonly Step[]): Map<string, number> {
  const index = new Map<string, number>();
  steps.forEach((step, i) => {
    if (index.has(step.id))
      throw new CountersignError(
        'internal_invariant',
        `diffPlans: duplicate step id ${JSON.stringify(step.id)}`,
      );
    index.set(step.id, i);
  });
  return index;
}

function fieldChanges(before: JsonObject, after: JsonObject): FieldChange[] {
  // Values are read back from the caller's args, not from the null-prototype copies given to microdiff.
  return diff(dataOnly(before), dataOnly(after), { cyclesFix: false }).map((d): FieldChange => {
    if (d.type === 'CREATE') return { kind: 'added', path: d.path, after: presentAt(after, d.path) };
    if (d.type === 'REMOVE') return { kind: 'removed', path: d.path, before: presentAt(before, d.path) };
    return {
      kind: 'changed',
      path: d.path,
      before: presentAt(before, d.path),
      after: presentAt(after, d.path),
    };
  });
}

/**
 * A copy whose objects have no prototype. microdiff tests keys with `in`, which would see inherited
 * members: an arg named `constructor` or `toString` would be missed when added and compared with a
 * function when removed. Plans are untrusted, so their keys must be treated as data only.
 * The copy is a tree, which is why microdiff's cycle guard can be off.
 */
function dataOnly(object: JsonObject): JsonObject {
  const copy: JsonObject = Object.create(null);
  // defineProperty, not assignment: an own `__proto__` key must stay a plain key.
  for (const [key, child] of Object.entries(object)) {
    Object.defineProperty(copy, key, {
      value: dataOnlyValue(child),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

function dataOnlyValue(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(dataOnlyValue);
  return isJsonObject(value) ? dataOnly(value) : value;
}

function presentAt(root: JsonValue, path: ArgPath): JsonValue {
  const value = valueAt(root, path);
  // microdiff only reports paths it walked, so a miss is a bug in this module, not bad input.
  if (value === undefined)
    throw new CountersignError('internal_invariant', `diffPlans: no value at ${describeFieldPath(path)}`);
  return value;
}

/**
 * Indexes into `sequence` of one longest strictly increasing subsequence (patience sorting,
 * O(n log n)). Deterministic: among equally long ones it keeps the one ending in the smallest values.
 */
function longestIncreasingSubsequence(sequence: readonly number[]): Set<number> {
  const tails: number[] = []; // tails[k]: index of the smallest last value of an increasing run of length k+1
  const previous: number[] = [];
  sequence.forEach((value, i) => {
    let low = 0;
    let high = tails.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (sequence[tails[mid]!]! < value) low = mid + 1;
      else high = mid;
    }
    previous[i] = low > 0 ? tails[low - 1]! : -1;
    tails[low] = i;
  });
  const members = new Set<number>();
  for (let i = tails.at(-1) ?? -1; i !== -1; i = previous[i]!) members.add(i);
  return members;
}
