import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ArgPath,
  diffPlans,
  type FieldChange,
  type PlanDiff,
  type StepChange,
} from '../../src/pipeline/diff.ts';
import { isJsonObject, type JsonObject, type JsonValue } from '../../src/pipeline/json.ts';
import { describeFieldPath } from '../../src/pipeline/json-path.ts';
import type { Step, ValidatedStep } from '../../src/pipeline/plan.ts';

const step = (id: string, args: JsonObject = {}, tool = 'hold_shipment'): Step => ({ id, tool, args });
const plan = (...steps: Step[]) => ({ steps });

describe('diffPlans', () => {
  const s1 = step('s1', { shipment: 'SH-1001', reason: 'damaged pallet' });
  const s2 = step('s2', { invoice: 'in_74119', amount: 1200 }, 'issue_refund');
  const s3 = step('s3', { customer: 'cus_88', template: 'refund_issued' }, 'notify_customer');
  const s4 = step('s4', { shipment: 'SH-1001', depot: 'OSL-2' }, 'reroute_shipment');

  it('reports nothing between a plan and an identical copy of it', () => {
    const copy = plan(...[s1, s2, s3].map((s) => structuredClone(s)));
    for (const d of [diffPlans(plan(s1, s2, s3), plan(s1, s2, s3)), diffPlans(plan(s1, s2, s3), copy)]) {
      expect(d).toEqual({
        changes: [],
        touchedStepIds: [],
        isEmpty: true,
        counts: { added: 0, removed: 0, changed: 0, moved: 0 },
      });
    }
  });

  it('reports only the added step when a step is inserted at the front', () => {
    const s0 = step('s0', { shipment: 'SH-0999' });
    const d = diffPlans(plan(s1, s2, s3), plan(s0, s1, s2, s3));
    expect(d.changes).toEqual([{ kind: 'added', stepId: 's0', step: s0, index: 0 }]);
    expect(d.touchedStepIds).toEqual(['s0']);
    expect(d.counts).toEqual({ added: 1, removed: 0, changed: 0, moved: 0 });
  });

  it('reports one removed step when a middle step is removed, and nothing to re-approve', () => {
    const d = diffPlans(plan(s1, s2, s3), plan(s1, s3));
    expect(d.changes).toEqual([{ kind: 'removed', stepId: 's2', step: s2, index: 1 }]);
    expect(d.touchedStepIds).toEqual([]);
    expect(d.isEmpty).toBe(false);
  });

  it('reports one move, and nothing to re-approve, when two steps are swapped', () => {
    const d = diffPlans(plan(s1, s2, s3), plan(s2, s1, s3));
    expect(d.counts).toEqual({ added: 0, removed: 0, changed: 0, moved: 1 });
    expect(d.changes).toEqual([{ kind: 'moved', stepId: 's1', step: s1, from: 0, to: 1 }]);
    expect(d.touchedStepIds).toEqual([]);
  });

  it('reports only the moved step when the last step is moved to the front', () => {
    const d = diffPlans(plan(s1, s2, s3, s4), plan(s4, s1, s2, s3));
    expect(d.changes).toEqual([{ kind: 'moved', stepId: 's4', step: s4, from: 3, to: 0 }]);
  });

  it('reports exactly the changed argument with its value before and after', () => {
    const edited = step('s2', { invoice: 'in_74119', amount: 1500 }, 'issue_refund');
    const d = diffPlans(plan(s1, s2, s3), plan(s1, edited, s3));
    expect(d.changes).toEqual([
      {
        kind: 'changed',
        stepId: 's2',
        before: s2,
        after: edited,
        from: 1,
        to: 1,
        moved: false,
        toolChanged: false,
        dependenciesChanged: false,
        fields: [{ kind: 'changed', path: ['amount'], before: 1200, after: 1500 }],
      },
    ]);
    expect(d.touchedStepIds).toEqual(['s2']);
  });

  it('marks a step changed when only its tool changed', () => {
    const swapped = step('s1', { shipment: 'SH-1001', reason: 'damaged pallet' }, 'cancel_shipment');
    const [change] = diffPlans(plan(s1), plan(swapped)).changes;
    expect(change).toMatchObject({ kind: 'changed', toolChanged: true, fields: [] });
  });

  it('marks a step changed when only its dependencies changed, so it needs approval again', () => {
    const depending = { ...s3, dependsOn: ['s1'] };
    const more = { ...s3, dependsOn: ['s1', 's2'] };
    const d = diffPlans(plan(s1, s2, depending), plan(s1, s2, more));
    expect(d.changes).toEqual([
      expect.objectContaining({ kind: 'changed', stepId: 's3', dependenciesChanged: true, fields: [] }),
    ]);
    expect(d.touchedStepIds).toEqual(['s3']);
    expect(diffPlans(plan(s1, s2, more), plan(s1, s2, s3)).touchedStepIds).toEqual(['s3']);
    expect(diffPlans(plan(s1, s2, more), plan(s1, s2, { ...more })).isEmpty).toBe(true);
  });

  it('lists the args differences of a step whose tool changed', () => {
    const swapped = step('s1', { shipment: 'SH-1001' }, 'cancel_shipment');
    const [change] = diffPlans(plan(s1), plan(swapped)).changes;
    expect(change).toMatchObject({
      kind: 'changed',
      toolChanged: true,
      fields: [{ kind: 'removed', path: ['reason'], before: 'damaged pallet' }],
    });
  });

  it('reports nested object and array changes at their full paths', () => {
    const before = step('s1', {
      window: { from: '2026-12-01', to: '2026-12-03' },
      items: [
        { sku: 'A-1', qty: 2 },
        { sku: 'B-7', qty: 1 },
      ],
      note: 'fragile',
      depots: ['OSL-1'],
    });
    const after = step('s1', {
      window: { from: '2026-12-01', to: '2026-12-05' },
      items: [
        { sku: 'A-1', qty: 2 },
        { sku: 'B-7', qty: 3 },
        { sku: 'C-2', qty: 1 },
      ],
      depots: { primary: 'OSL-1' },
    });
    const [change] = diffPlans(plan(before), plan(after)).changes;
    const fields = change?.kind === 'changed' ? change.fields : [];
    expect(fields).toEqual([
      { kind: 'changed', path: ['window', 'to'], before: '2026-12-03', after: '2026-12-05' },
      { kind: 'changed', path: ['items', 1, 'qty'], before: 1, after: 3 },
      { kind: 'added', path: ['items', 2], after: { sku: 'C-2', qty: 1 } },
      { kind: 'removed', path: ['note'], before: 'fragile' },
      // A list replaced by an object is one change of the whole value, not a change per element.
      { kind: 'changed', path: ['depots'], before: ['OSL-1'], after: { primary: 'OSL-1' } },
    ]);
    expect(fields.map((f) => describeFieldPath(f.path))).toEqual([
      'window.to',
      'items[1].qty',
      'items[2]',
      'note',
      'depots',
    ]);
  });

  it('treats a step reverted to its original bytes as untouched', () => {
    const v1 = plan(s1, s2);
    const v2 = plan(s1, step('s2', { invoice: 'in_74119', amount: 99_000 }, 'issue_refund'));
    const v3 = plan(s1, step('s2', { invoice: 'in_74119', amount: 1200 }, 'issue_refund'));
    expect(diffPlans(v2, v3).touchedStepIds).toEqual(['s2']);
    expect(diffPlans(v1, v3).isEmpty).toBe(true);
  });

  it('ignores the order of keys in args, as the step digest does', () => {
    const reordered = step('s2', { amount: 1200, invoice: 'in_74119' }, 'issue_refund');
    expect(diffPlans(plan(s2), plan(reordered)).isEmpty).toBe(true);
  });

  it('compares args named like Object.prototype members as plain data', () => {
    const withOwnProto: JsonObject = JSON.parse('{"constructor": 2, "__proto__": {"admin": true}}');
    const d = diffPlans(plan(step('s1', { toString: 1 })), plan(step('s1', withOwnProto)));
    const [change] = d.changes;
    expect(change?.kind === 'changed' && change.fields).toEqual([
      { kind: 'removed', path: ['toString'], before: 1 },
      { kind: 'added', path: ['constructor'], after: 2 },
      { kind: 'added', path: ['__proto__'], after: { admin: true } },
    ]);
    expect(diffPlans(plan(step('s1', withOwnProto)), plan(step('s1', {}))).counts.changed).toBe(1);
  });

  it('lists a step that changed and moved once, as changed with moved set', () => {
    const edited = step('s1', { shipment: 'SH-1002', reason: 'damaged pallet' });
    const d = diffPlans(plan(s1, s2, s3), plan(s2, s3, edited));
    expect(d.changes).toMatchObject([{ kind: 'changed', stepId: 's1', from: 0, to: 2, moved: true }]);
    expect(d.counts).toEqual({ added: 0, removed: 0, changed: 1, moved: 1 });
  });

  it('places a removed step where it stood, ahead of a step added in its place', () => {
    const x = step('x1', { shipment: 'SH-2000' });
    const d = diffPlans(plan(s1, s2, s3), plan(s1, x, s3));
    expect(d.changes.map((c) => [c.kind, c.stepId])).toEqual([
      ['removed', 's2'],
      ['added', 'x1'],
    ]);
  });

  it('hands back the caller’s step type, so views can read digests and routes', () => {
    const validated = (s: Step, digest: string): ValidatedStep => ({
      ...s,
      digest,
      route: { kind: 'auto', rule: 'reads' },
      annotations: [],
    });
    const d = diffPlans(
      { steps: [validated(s1, 'a1')] },
      { steps: [validated(s1, 'a1'), validated(s3, 'c3')] },
    );
    const [change] = d.changes;
    expect(change?.kind === 'added' && change.step.digest).toBe('c3');
  });

  it('throws on duplicate step ids, which parse never lets through', () => {
    expect(() => diffPlans(plan(s1, s1), plan(s1))).toThrow(/duplicate step id "s1"/);
  });
});

describe('describeFieldPath', () => {
  it('renders keys with dots and indexes in brackets', () => {
    expect(describeFieldPath(['window'])).toBe('window');
    expect(describeFieldPath(['items', 0, 'sku'])).toBe('items[0].sku');
    expect(describeFieldPath([])).toBe('');
  });

  it('quotes keys that are not identifiers, so different paths never read the same', () => {
    expect(describeFieldPath(['a.b'])).toBe('["a.b"]');
    expect(describeFieldPath(['a', 'b'])).toBe('a.b');
    expect(describeFieldPath(['ship to', '0', 0])).toBe('["ship to"]["0"][0]');
  });
});

// ---------------------------------------------------------------------------------------------
// Properties

/** Builds an object with own properties only, as JSON.parse does (an own `__proto__` included). */
function objectFromEntries(entries: Iterable<readonly [string, JsonValue]>): JsonObject {
  const object: JsonObject = {};
  for (const [key, value] of entries) setOwn(object, key, value);
  return object;
}

function setOwn(object: JsonObject, key: string, value: JsonValue): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

function cloneJson(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(cloneJson);
  return isJsonObject(value) ? cloneArgs(value) : value;
}

function cloneArgs(args: JsonObject): JsonObject {
  return objectFromEntries(Object.entries(args).map(([key, value]) => [key, cloneJson(value)] as const));
}

const TOOLS = ['hold_shipment', 'issue_refund', 'notify_customer', 'reroute_shipment'] as const;
// Keys that trip up code testing keys with `in` or assigning through `__proto__`.
const keyArb = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', '', '0', 'a.b'),
  fc.string({ maxLength: 5 }),
);
// Safe integers only, and never -0 (docs/architecture.md §2).
const leafArb: fc.Arbitrary<JsonValue> = fc.oneof(
  fc.maxSafeInteger().map((n) => n + 0),
  fc.string({ maxLength: 6 }),
  fc.boolean(),
  fc.constant(null),
);
const { json: jsonArb, object: argsArb } = fc.letrec<{
  json: JsonValue;
  array: JsonValue[];
  object: JsonObject;
}>((tie) => ({
  json: fc.oneof({ maxDepth: 3, depthIdentifier: 'json' }, leafArb, tie('object'), tie('array')),
  array: fc.array(tie('json'), { maxLength: 4, depthIdentifier: 'json' }),
  object: fc
    .uniqueArray(fc.tuple(keyArb, tie('json')), {
      selector: ([key]) => key,
      maxLength: 4,
      depthIdentifier: 'json',
    })
    .map(objectFromEntries),
}));
const stepArb: fc.Arbitrary<Step> = fc.record({
  id: fc.integer({ min: 1, max: 30 }).map((n) => `s${n}`),
  tool: fc.constantFrom(...TOOLS),
  args: argsArb,
});
const planArb = fc.uniqueArray(stepArb, { selector: (s) => s.id, maxLength: 10 }).map((steps) => ({ steps }));

/** Invariants every diff must satisfy, whatever the inputs. */
function expectWellFormed(d: PlanDiff, before: readonly Step[], after: readonly Step[]): void {
  const ids = d.changes.map((c) => c.stepId);
  expect(new Set(ids).size).toBe(ids.length);
  expect(d.isEmpty).toBe(d.changes.length === 0);
  const ofKind = <K extends StepChange['kind']>(kind: K) =>
    d.changes.filter((c): c is Extract<StepChange, { kind: K }> => c.kind === kind);
  expect(d.counts).toEqual({
    added: ofKind('added').length,
    removed: ofKind('removed').length,
    changed: ofKind('changed').length,
    moved: ofKind('moved').length + ofKind('changed').filter((c) => c.moved).length,
  });
  expect(d.touchedStepIds).toEqual(
    d.changes.filter((c) => c.kind === 'added' || c.kind === 'changed').map((c) => c.stepId),
  );
  // Everything but removals follows `after`; removals follow `before`.
  const afterPositions = d.changes.flatMap((c) =>
    c.kind === 'removed' ? [] : [c.kind === 'added' ? c.index : c.to],
  );
  const beforePositions = ofKind('removed').map((c) => c.index);
  for (const positions of [afterPositions, beforePositions]) {
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  }
  for (const c of d.changes) {
    if (c.kind === 'added') expect(after[c.index]).toBe(c.step);
    if (c.kind === 'removed') expect(before[c.index]).toBe(c.step);
    if (c.kind === 'changed') {
      expect(before[c.from]).toBe(c.before);
      expect(after[c.to]).toBe(c.after);
    }
    if (c.kind === 'moved') {
      expect(before[c.from]?.id).toBe(c.stepId);
      expect(after[c.to]).toBe(c.step);
    }
  }
}

type EditSite =
  | { readonly op: 'change'; readonly path: ArgPath }
  | { readonly op: 'remove'; readonly path: ArgPath }
  | { readonly op: 'add'; readonly parent: ArgPath };

/** Places an edit can touch: leaves (and empty containers) to change, keys to remove, objects to add to. */
function editSites(value: JsonValue, path: ArgPath, sites: EditSite[]): EditSite[] {
  if (Array.isArray(value)) {
    if (value.length === 0 && path.length > 0) sites.push({ op: 'change', path });
    value.forEach((child, i) => {
      editSites(child, [...path, i], sites);
    });
  } else if (isJsonObject(value)) {
    sites.push({ op: 'add', parent: path });
    const keys = Object.keys(value);
    if (keys.length === 0 && path.length > 0) sites.push({ op: 'change', path });
    for (const key of keys) {
      sites.push({ op: 'remove', path: [...path, key] });
      editSites(value[key] ?? null, [...path, key], sites);
    }
  } else if (path.length > 0) {
    sites.push({ op: 'change', path });
  }
  return sites;
}

function valueAt(root: JsonValue, path: ArgPath): JsonValue {
  let value: JsonValue | undefined = root;
  for (const segment of path) {
    value = Array.isArray(value) ? value[Number(segment)] : isJsonObject(value) ? value[segment] : undefined;
    if (value === undefined) throw new Error(`test bug: no value at ${describeFieldPath(path)}`);
  }
  return value;
}

const isPrefix = (a: ArgPath, b: ArgPath): boolean => a.length <= b.length && a.every((s, i) => s === b[i]);

/** A primitive that differs from `old`: `candidate` unless it happens to be equal. */
function differentLeaf(old: JsonValue, candidate: JsonValue): JsonValue {
  if (!Object.is(old, candidate)) return candidate;
  if (typeof old === 'number') return old === Number.MAX_SAFE_INTEGER ? old - 1 : old + 1;
  if (typeof old === 'string') return `${old}!`;
  if (typeof old === 'boolean') return !old;
  return 0;
}

interface RandomEdit {
  readonly after: Step[];
  readonly added: ReadonlySet<string>;
  readonly removed: ReadonlySet<string>;
  /** Edited step id → the field changes the edit made, plus whether its tool changed. */
  readonly edited: ReadonlyMap<string, { fields: FieldChange[]; toolChanged: boolean }>;
  /** Steps whose position the permutation changed. */
  readonly permuted: number;
}

// fc.gen replays values while shrinking by matching builder identity and args, so builders must be
// stable: a fresh closure per call never matches, shrinking loops forever and its cache grows unbounded.
const sitePicksArb = fc.array(fc.nat(), { maxLength: 3 });
const additionsArb = fc.array(fc.record({ at: fc.nat(), tool: fc.constantFrom(...TOOLS), args: argsArb }), {
  maxLength: 3,
});
const builders = {
  json: () => jsonArb,
  leaf: () => leafArb,
  sitePicks: () => sitePicksArb,
  additions: () => additionsArb,
};

/** Edits a plan the way an operator might: remove, change args and tools, reorder, add. */
function randomEdit(before: readonly Step[], g: fc.GeneratorValue): RandomEdit {
  const removed = new Set(
    g(
      fc.subarray,
      before.map((s) => s.id),
    ),
  );
  const edited = new Map<string, { fields: FieldChange[]; toolChanged: boolean }>();

  let steps = before
    .filter((s) => !removed.has(s.id))
    .map((original): Step => {
      const args = cloneArgs(original.args);
      const sites = editSites(args, [], []);
      const fields: FieldChange[] = [];
      const picks = sites.length === 0 ? [] : g(builders.sitePicks);
      for (const pick of picks) {
        const site = sites[pick % sites.length]!;
        // Edits must not nest, or the later one would hide the earlier one from the diff.
        const blocked =
          site.op === 'add'
            ? fields.some((f) => isPrefix(f.path, site.parent))
            : fields.some((f) => isPrefix(f.path, site.path) || isPrefix(site.path, f.path));
        if (blocked) continue;
        const parentPath = site.op === 'add' ? site.parent : site.path.slice(0, -1);
        const parent = valueAt(args, parentPath);
        const key = site.op === 'add' ? freshKey(parent) : (site.path[site.path.length - 1] ?? '');
        const path = [...parentPath, key];
        if (site.op === 'add') {
          const value = g(builders.json);
          setAt(parent, key, value);
          fields.push({ kind: 'added', path, after: value });
        } else if (site.op === 'remove' && isJsonObject(parent)) {
          fields.push({ kind: 'removed', path, before: valueAt(original.args, path) });
          delete parent[String(key)];
        } else if (site.op === 'change') {
          const old = valueAt(args, path);
          const value = differentLeaf(old, g(builders.leaf));
          setAt(parent, key, value);
          fields.push({ kind: 'changed', path, before: valueAt(original.args, path), after: value });
        }
      }
      const toolChanged = g(fc.nat, { max: 4 }) === 0;
      const tool = toolChanged
        ? g(fc.constantFrom, ...TOOLS.filter((t) => t !== original.tool))
        : original.tool;
      if (fields.length > 0 || toolChanged) edited.set(original.id, { fields, toolChanged });
      return { id: original.id, tool, args };
    });

  const positions = g(
    fc.subarray,
    steps.map((_, i) => i),
  );
  const shuffled = g(fc.shuffledSubarray, positions, {
    minLength: positions.length,
    maxLength: positions.length,
  });
  const reordered = [...steps];
  positions.forEach((position, i) => {
    reordered[position] = steps[shuffled[i]!]!;
  });
  const permuted = positions.filter((position, i) => position !== shuffled[i]).length;
  steps = reordered;

  const additions = g(builders.additions);
  const added = new Set<string>();
  additions.forEach(({ at, tool, args }, i) => {
    const id = `new${i}`; // generated ids are s<n>, so these are fresh
    steps.splice(at % (steps.length + 1), 0, { id, tool, args });
    added.add(id);
  });

  return { after: steps, added, removed, edited, permuted };
}

function freshKey(parent: JsonValue): string {
  let key = 'extra';
  while (isJsonObject(parent) && Object.hasOwn(parent, key)) key += '_';
  return key;
}

function setAt(parent: JsonValue, key: string | number, value: JsonValue): void {
  if (Array.isArray(parent)) parent[Number(key)] = value;
  else if (isJsonObject(parent)) setOwn(parent, String(key), value);
}

const byPath = (a: FieldChange, b: FieldChange): number =>
  JSON.stringify(a.path) < JSON.stringify(b.path)
    ? -1
    : JSON.stringify(a.path) > JSON.stringify(b.path)
      ? 1
      : 0;

describe('diffPlans properties', () => {
  it('finds nothing between a plan and itself or a deep copy of it', () => {
    fc.assert(
      fc.property(planArb, (p) => {
        expect(diffPlans(p, p).isEmpty).toBe(true);
        const copy = { steps: p.steps.map((s) => ({ id: s.id, tool: s.tool, args: cloneArgs(s.args) })) };
        expect(diffPlans(p, copy).isEmpty).toBe(true);
      }),
    );
  });

  it('reports exactly what a random edit added, removed and changed, and no more moves than it made', () => {
    fc.assert(
      fc.property(planArb, fc.gen(), (p, g) => {
        const edit = randomEdit(p.steps, g);
        const d = diffPlans(p, { steps: edit.after });
        expectWellFormed(d, p.steps, edit.after);

        const idsOf = (kind: StepChange['kind']) =>
          new Set(d.changes.filter((c) => c.kind === kind).map((c) => c.stepId));
        expect(idsOf('added')).toEqual(edit.added);
        expect(idsOf('removed')).toEqual(edit.removed);
        expect(idsOf('changed')).toEqual(new Set(edit.edited.keys()));
        expect(d.touchedStepIds).toEqual(
          edit.after.map((s) => s.id).filter((id) => edit.added.has(id) || edit.edited.has(id)),
        );
        for (const c of d.changes) {
          if (c.kind !== 'changed') continue;
          const expected = edit.edited.get(c.stepId);
          expect(c.toolChanged).toBe(expected?.toolChanged);
          expect([...c.fields].sort(byPath)).toEqual([...(expected?.fields ?? [])].sort(byPath));
        }
        expect(d.counts.moved).toBeLessThanOrEqual(edit.permuted);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on unrelated plans, and is symmetric', () => {
    fc.assert(
      fc.property(planArb, planArb, (a, b) => {
        const forward = diffPlans(a, b);
        const backward = diffPlans(b, a);
        expectWellFormed(forward, a.steps, b.steps);
        expectWellFormed(backward, b.steps, a.steps);
        const ids = (d: PlanDiff, kind: StepChange['kind']) =>
          d.changes
            .filter((c) => c.kind === kind)
            .map((c) => c.stepId)
            .sort();
        expect(ids(backward, 'added')).toEqual(ids(forward, 'removed'));
        expect(ids(backward, 'removed')).toEqual(ids(forward, 'added'));
        expect(ids(backward, 'changed')).toEqual(ids(forward, 'changed'));
        // A permutation and its inverse have equally long increasing subsequences.
        expect(backward.counts.moved).toBe(forward.counts.moved);
      }),
    );
  });
});
