/**
 * Change sets built by hand (issue 19), spread into steps of validated plans: the view tests do not
 * depend on any tool's `preview` hook.
 */
import type { StoredVersion } from '../../src/approvals/types.ts';
import type { ChangeSet, Unverified, ValidatedStep } from '../../src/pipeline/index.ts';

/** Rescheduling delivery dl_55120 from Friday to Monday, as a preview of the freight data would read it. */
export const rescheduleChangeSet: ChangeSet = {
  target: { type: 'delivery', id: 'dl_55120', version: '7' },
  changes: [
    {
      path: 'delivery.date',
      label: "delivery date used for the driver's route",
      before: '2026-04-03',
      after: '2026-04-06',
      beforeText: 'Fri 3 Apr',
      afterText: 'Mon 6 Apr',
    },
    { path: 'delivery.driver_note', label: 'note for the driver', before: null, after: 'Call ahead' },
    { path: 'delivery.slot', label: 'morning slot', before: true, after: null },
  ],
  related: [
    {
      entity: { type: 'route', id: 'rt_88', label: 'Monday route rt_88' },
      impact: 'write',
      source: 'declared',
      note: "the driver's route for Monday is rebuilt",
    },
    { entity: { type: 'customer', id: 'cu_9' }, impact: 'unknown', source: 'observed' },
    { entity: { type: 'ticket', id: '74991' }, impact: 'event', source: 'observed' },
  ],
  invariants: [
    {
      name: 'delivery_within_window',
      label: "delivery stays inside the customer's booked window",
      status: 'violated',
      evidence: 'booked window ends Fri 3 Apr; new date Mon 6 Apr',
    },
    { name: 'depot_open', label: 'the depot is open that day', status: 'unknown' },
    { name: 'driver_hours', label: 'driver hours stay within limits', status: 'preserved' },
  ],
};

/** The same step's preview that ran out of its time budget. */
export const previewTimedOut: readonly Unverified[] = [
  { hook: 'preview', reason: 'preview timed out after 2 s' },
];

/** `version` with `extra` spread into step `stepId` (a change set, hooks that could not verify). */
export function withStepExtras(
  version: StoredVersion,
  stepId: string,
  extra: Pick<Partial<ValidatedStep>, 'changeSet' | 'unverified'>,
): StoredVersion {
  return {
    ...version,
    plan: {
      ...version.plan,
      steps: version.plan.steps.map((step) => (step.id === stepId ? { ...step, ...extra } : step)),
    },
  };
}

/**
 * `version` with no step's change set, as a config without `preview` hooks validates it: the freight
 * tools' own previews (examples/freight/previews.ts) stay out of these tests.
 */
export function withoutChangeSets(version: StoredVersion): StoredVersion {
  return {
    ...version,
    plan: { ...version.plan, steps: version.plan.steps.map(({ changeSet: _, ...step }) => step) },
  };
}

/** A change set of `fields` changed fields, `related` related entities and `violated` broken invariants. */
export function largeChangeSet(counts: { fields: number; related?: number; violated?: number }): ChangeSet {
  return {
    target: { type: 'delivery', id: 'dl_55120', version: 'etag-"abc"' },
    changes: Array.from({ length: counts.fields }, (_, i) => ({
      path: `delivery.stops.${i}.eta`,
      label: `estimated arrival at stop ${i + 1} of the driver's Monday route, as the customer sees it`,
      before: `2026-04-03T${String(8 + (i % 10)).padStart(2, '0')}:00:00Z`,
      after: `2026-04-06T${String(8 + (i % 10)).padStart(2, '0')}:30:00Z`,
    })),
    related: Array.from({ length: counts.related ?? 0 }, (_, i) => ({
      entity: { type: 'stop', id: `st_${i}`, label: `Stop ${i + 1} on route rt_88` },
      impact: 'write' as const,
      source: 'observed' as const,
      note: 'arrival time moves',
    })),
    invariants: Array.from({ length: counts.violated ?? 0 }, (_, i) => ({
      name: `window_${i}`,
      label: `stop ${i + 1} stays inside its booked window`,
      status: 'violated' as const,
      evidence: `booked window for stop ${i + 1} ends Fri 3 Apr 17:00; new arrival Mon 6 Apr`,
    })),
  };
}
