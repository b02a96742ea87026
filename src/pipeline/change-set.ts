import type { JsonValue } from './json.ts';

/**
 * What a step will change in the world, as the tool's `preview` hook read it (issue 19): the target
 * entity at the version it was read at, before → after per field with a label in the approver's
 * terms, the related entities it touches, and the invariants it keeps or breaks. Unknown stays
 * visible as unknown: nothing here is inferred by Countersign.
 */
export interface ChangeSet {
  /** The entity the step changes, and the version it was read at (an ETag, an `updated_at`, a counter). */
  readonly target: VersionedEntity;
  /** Before → after for each changed field of the target. */
  readonly changes: readonly ChangedField[];
  /** Other entities the step reads, writes, or emits events about. */
  readonly related: readonly RelatedEntity[];
  /** Rules of the domain the change keeps, breaks, or cannot be judged against. */
  readonly invariants: readonly Invariant[];
}

/** An entity in the outside system: `{ type: 'delivery', id: 'dl_55120' }`. */
export interface EntityRef {
  /** A stable machine name for the kind of entity (`delivery`, `invoice`); policy rules match on it. */
  readonly type: string;
  readonly id: string;
  /** How a person names it ("Delivery dl_55120 for Halvorsen Freight"); `type id` when absent. */
  readonly label?: string;
}

/** An entity with the version it was read at. The version is compared as an opaque string. */
export interface VersionedEntity extends EntityRef {
  readonly version: string;
}

/** One changed field: the machine path beside its human label, and values before and after. */
export interface ChangedField {
  /** Dotted machine path on the target (`delivery.date`); policy rules match on it. */
  readonly path: string;
  /** What a person calls it ("delivery date used for the driver's route"). */
  readonly label: string;
  /** The value now; null when the field does not exist yet. */
  readonly before: JsonValue;
  /** The value after the step; null when the step removes it. */
  readonly after: JsonValue;
  /** The values as a person reads them ("Fri 3 Apr", "$1,489.00"); the JSON values are shown when absent. */
  readonly beforeText?: string;
  readonly afterText?: string;
}

/** How a step touches a related entity. `unknown` is shown as unknown, never guessed. */
export type Impact = 'read' | 'write' | 'event' | 'unknown';

export interface RelatedEntity {
  readonly entity: EntityRef;
  readonly impact: Impact;
  /** `declared`: the tool says it always touches it; `observed`: the preview found it in the data. */
  readonly source: 'declared' | 'observed';
  /** Why, in a few words ("the driver's route for Monday is rebuilt"). */
  readonly note?: string;
}

export interface Invariant {
  /** Short machine name (`delivery_within_window`); policy rules match on it. */
  readonly name: string;
  /** What it means to a person ("delivery stays inside the customer's booked window"). */
  readonly label: string;
  readonly status: 'preserved' | 'violated' | 'unknown';
  /** What the preview saw ("booked window ends Fri 3 Apr; new date Mon 6 Apr"). */
  readonly evidence?: string;
}

/** A hook that failed or ran out of its time budget: the step is routed to review and says so. */
export interface Unverified {
  readonly hook: 'checks' | 'annotate' | 'preview';
  /** In the reader's terms: "timed out after 2 s", "the freight API answered 503". */
  readonly reason: string;
}

/**
 * What an executor checks right before the effect: the target as it was read when the step was
 * previewed (and so as the approvers saw it). Bound into the decision and its receipt.
 */
export interface Precondition {
  readonly type: string;
  readonly id: string;
  readonly version: string;
}
