/**
 * Consistency after an edit: a value the edit changed that other steps still quote. The reply to the
 * customer says "rebooked it for Friday 3 April" after the delivery was moved to 6 April — nothing in
 * the plan is invalid, but the agent would send the wrong date (docs/architecture.md §6).
 */
import { canonicalJson } from './canonical-json.ts';
import { type ArgPath, diffPlans } from './diff.ts';
import { fieldAt } from './fields.ts';
import { isJsonObject, type JsonValue, valueAt } from './json.ts';
import type { Step } from './plan.ts';
import { findQuote, type ValueKind, valueKindOf, valueRenderings } from './renderings.ts';
import type { ToolDefinition } from './tool.ts';

/** One value an edit changed. */
export interface ChangedValue {
  readonly stepId: string;
  readonly tool: string;
  readonly path: ArgPath;
  readonly before: JsonValue;
  readonly after: JsonValue;
  readonly kind: ValueKind;
  readonly currency?: string;
}

/** A step that still quotes (or, in a field declared the same thing, still holds) a changed value. */
export interface StaleQuote {
  /** The step that still says the old value. */
  readonly stepId: string;
  /** Where in its args. */
  readonly path: ArgPath;
  /** The old value as written there ("Friday 3 April"), or its first rendering for a non-text field. */
  readonly quoted: string;
  readonly changed: ChangedValue;
}

/**
 * Finds text (and declared same-thing fields) in `after`'s other steps that still holds a value the
 * edit from `before` changed. Every string argument of every other step is searched for every rendering
 * of the old value (valueRenderings), except for an argument whose tool declared `sameThingAs: { arg: [] }`
 * (nothing else refers to it); fields named in `sameThingAs` (either way round) are also compared by
 * value, so a money or date field holding the old value is found too. A quote of a rendering the new
 * value shares (the day of month when only the year changed) is not stale. Ordered by the quoting
 * step's place in `after`. Pure.
 * @example findStaleQuotes({ before: v1.plan, after: v2.plan, tools: config.tools })
 * // [{ stepId: 's3', path: ['body'], quoted: 'Friday 3 April', changed: { stepId: 's2', path: ['window'], … } }]
 */
export function findStaleQuotes(input: {
  readonly before: { readonly steps: readonly Step[] };
  readonly after: { readonly steps: readonly Step[] };
  readonly tools: ReadonlyMap<string, ToolDefinition>;
}): StaleQuote[] {
  const { tools } = input;
  const quotes: StaleQuote[] = [];
  for (const changed of changedValues(input.before, input.after, tools)) {
    const declared = declaredTargets(tools, changed.tool, changed.path);
    const afterRenderings = new Set(valueRenderings(changed, changed.after).map((r) => r.toLowerCase()));
    const renderings = valueRenderings(changed, changed.before).filter(
      (rendering) => !afterRenderings.has(rendering.toLowerCase()),
    );
    const scanText = declared !== 'none' && renderings.length > 0;
    for (const step of input.after.steps) {
      if (step.id === changed.stepId) continue;
      const seen = new Set<string>();
      const add = (path: ArgPath, quoted: string) => {
        const key = path.join('\u0000');
        if (seen.has(key)) return;
        seen.add(key);
        quotes.push({ stepId: step.id, path, quoted, changed });
      };
      for (const path of declared === 'none' ? [] : (declared.get(step.tool) ?? [])) {
        const value = valueAt(step.args, path);
        if (value === undefined) continue;
        if (canonicalJson(value) === canonicalJson(changed.before)) {
          add(path, typeof value === 'string' ? value : (renderings[0] ?? canonicalJson(value)));
        } else if (typeof value === 'string') {
          const quoted = findQuote(value, renderings);
          if (quoted !== undefined) add(path, quoted);
        }
      }
      if (!scanText) continue;
      for (const [path, text] of stringLeaves(step.args, [])) {
        const quoted = findQuote(text, renderings);
        if (quoted !== undefined) add(path, quoted);
      }
    }
  }
  const order = new Map(input.after.steps.map((step, index) => [step.id, index]));
  return quotes
    .map((quote, index) => ({ quote, index }))
    .sort((a, b) => (order.get(a.quote.stepId) ?? 0) - (order.get(b.quote.stepId) ?? 0) || a.index - b.index)
    .map(({ quote }) => quote);
}

/** Values the edit changed in place (same step id, same tool): the old and new value and what it is. */
function changedValues(
  before: { readonly steps: readonly Step[] },
  after: { readonly steps: readonly Step[] },
  tools: ReadonlyMap<string, ToolDefinition>,
): ChangedValue[] {
  const out: ChangedValue[] = [];
  for (const change of diffPlans(before, after).changes) {
    if (change.kind !== 'changed' || change.toolChanged) continue;
    const tool = tools.get(change.after.tool);
    for (const field of change.fields) {
      if (field.kind !== 'changed') continue;
      const { kind, currency } = valueKindOf(tool === undefined ? undefined : fieldAt(tool.args, field.path));
      out.push({
        stepId: change.stepId,
        tool: change.after.tool,
        path: field.path,
        before: field.before,
        after: field.after,
        kind,
        ...(currency === undefined ? {} : { currency }),
      });
    }
  }
  return out;
}

/**
 * The fields declared the same thing as `tool.path`, by tool: its own `sameThingAs` entry and every
 * other tool's entry naming it. `'none'` when its tool declared that nothing refers to it (an empty list).
 */
function declaredTargets(
  tools: ReadonlyMap<string, ToolDefinition>,
  toolName: string,
  path: ArgPath,
): Map<string, ArgPath[]> | 'none' {
  const key = path.join('.');
  const own = tools.get(toolName)?.sameThingAs?.[key];
  if (own !== undefined && own.length === 0) return 'none';
  const targets = new Map<string, ArgPath[]>();
  const addTarget = (ref: string) => {
    const dot = ref.indexOf('.');
    const tool = ref.slice(0, dot);
    const argPath = ref
      .slice(dot + 1)
      .split('.')
      .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
    targets.set(tool, [...(targets.get(tool) ?? []), argPath]);
  };
  for (const ref of own ?? []) addTarget(ref);
  for (const other of tools.values()) {
    for (const [arg, refs] of Object.entries(other.sameThingAs ?? {})) {
      if (refs.includes(`${toolName}.${key}`)) addTarget(`${other.name}.${arg}`);
    }
  }
  return targets;
}

/** Every string inside `value`, with its path. */
function stringLeaves(value: JsonValue, path: (string | number)[]): [ArgPath, string][] {
  if (typeof value === 'string') return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((item, index) => stringLeaves(item, [...path, index]));
  if (isJsonObject(value))
    return Object.entries(value).flatMap(([key, child]) => stringLeaves(child, [...path, key]));
  return [];
}
