/**
 * Recurring edits (issue 20): each edit's changes reduced to a pattern — a step of tool X added before
 * tool Y, a field of tool X raised or moved later, text appended, a step removed — and the patterns
 * that recur across edited plans, with counts, examples and a suggestion in plain words. Pure.
 */
import { type ArgPath, describeFieldPath, type JsonValue, type StepChange } from '../../pipeline/index.ts';
import type { RunHistory } from './run-history.ts';

/** What kind of change to a field (or step) a pattern is. */
export type PatternKind =
  | 'added_before'
  | 'added_at_end'
  | 'removed'
  | 'raised'
  | 'lowered'
  | 'later'
  | 'earlier'
  | 'appended'
  | 'prepended'
  | 'rewritten'
  | 'set'
  | 'cleared'
  | 'dependencies'
  | 'moved';

export interface EditPattern {
  /** Stable grouping key: `added_before:add_note:reply_to_customer`, `raised:issue_refund:amount`. */
  readonly key: string;
  readonly kind: PatternKind;
  readonly tool: string;
  /** The argument path for field patterns (`delivery.date`), the following step's tool for `added_before`. */
  readonly detail?: string;
}

export interface PatternExample {
  readonly runId: string;
  readonly editor: string;
  /** What changed, in the tool's terms ("`issue_refund` Amount: $1,489.00 → $1,500.00"). */
  readonly text: string;
}

export interface RecurringEdit {
  readonly pattern: EditPattern;
  /** Edited plans in which the pattern occurs (a plan counts once). */
  readonly plans: number;
  /** Edited plans of the agent considered. */
  readonly editedPlans: number;
  /** Distinct editors who made it. */
  readonly editors: number;
  readonly examples: readonly PatternExample[];
  /** A rule or prompt note, in plain words. */
  readonly suggestion: string;
}

/** The patterns of one step change, each with an example text. */
export function patternsOf(
  change: StepChange,
  after: readonly { readonly id: string; readonly tool: string }[],
  addedIds: ReadonlySet<string>,
  fields: FieldDescriber = JSON_FIELDS,
): { readonly pattern: EditPattern; readonly text: string }[] {
  switch (change.kind) {
    case 'added': {
      const next = after.slice(change.index + 1).find((step) => !addedIds.has(step.id));
      const tool = change.step.tool;
      return next === undefined
        ? [
            {
              pattern: { key: `added_at_end:${tool}`, kind: 'added_at_end', tool },
              text: `added \`${tool}\``,
            },
          ]
        : [
            {
              pattern: {
                key: `added_before:${tool}:${next.tool}`,
                kind: 'added_before',
                tool,
                detail: next.tool,
              },
              text: `added \`${tool}\` before \`${next.tool}\``,
            },
          ];
    }
    case 'removed':
      return [
        {
          pattern: { key: `removed:${change.step.tool}`, kind: 'removed', tool: change.step.tool },
          text: `removed \`${change.step.tool}\``,
        },
      ];
    case 'moved':
      return [
        {
          pattern: { key: `moved:${change.step.tool}`, kind: 'moved', tool: change.step.tool },
          text: `moved \`${change.step.tool}\` from position ${change.from + 1} to ${change.to + 1}`,
        },
      ];
    case 'changed': {
      const tool = change.after.tool;
      const found: { pattern: EditPattern; text: string }[] = [];
      if (change.dependenciesChanged) {
        found.push({
          pattern: { key: `dependencies:${tool}`, kind: 'dependencies', tool },
          text: `changed what \`${tool}\` depends on`,
        });
      }
      for (const field of change.fields) {
        const path = describeFieldPath(field.path);
        const kind =
          field.kind === 'added'
            ? 'set'
            : field.kind === 'removed'
              ? 'cleared'
              : changeKind(field.before, field.after);
        const show = (value: JsonValue) => short(fields.value(tool, field.path, value));
        const before = field.kind === 'added' ? '(none)' : show(field.before);
        const after = field.kind === 'removed' ? '(none)' : show(field.after);
        found.push({
          pattern: { key: `${kind}:${tool}:${path}`, kind, tool, detail: path },
          text: `\`${tool}\` ${fields.label(tool, field.path)}: ${before} → ${after}`,
        });
      }
      return found;
    }
  }
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/;

/** How a value changed: numbers up or down, dates later or earlier, text appended or rewritten. */
export function changeKind(before: JsonValue, after: JsonValue): PatternKind {
  if (typeof before === 'number' && typeof after === 'number') return after > before ? 'raised' : 'lowered';
  if (typeof before === 'string' && typeof after === 'string') {
    if (ISO_DATE.test(before) && ISO_DATE.test(after)) {
      const [a, b] = [Date.parse(before), Date.parse(after)];
      if (Number.isFinite(a) && Number.isFinite(b)) return b > a ? 'later' : 'earlier';
    }
    if (after.startsWith(before)) return 'appended';
    if (after.endsWith(before)) return 'prepended';
  }
  return 'rewritten';
}

/** How the report names a field and shows a value: in the tool's terms (labels, money), by default as JSON. */
export interface FieldDescriber {
  label(tool: string, path: ArgPath): string;
  value(tool: string, path: ArgPath, value: JsonValue): string;
}

export const JSON_FIELDS: FieldDescriber = {
  label: (_tool, path) => describeFieldPath(path),
  value: (_tool, _path, value) => JSON.stringify(value),
};

function short(text: string): string {
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

/** The patterns one run's edits made, each with its first example. */
function runPatterns(
  run: RunHistory,
  fields: FieldDescriber,
): Map<string, { pattern: EditPattern; example: PatternExample }> {
  const found = new Map<string, { pattern: EditPattern; example: PatternExample }>();
  for (const edit of run.edits) {
    const added = new Set(edit.diff.changes.filter((c) => c.kind === 'added').map((c) => c.stepId));
    for (const change of edit.diff.changes) {
      for (const { pattern, text } of patternsOf(change, edit.after.steps, added, fields)) {
        if (!found.has(pattern.key))
          found.set(pattern.key, { pattern, example: { runId: run.runId, editor: edit.editor, text } });
      }
    }
  }
  return found;
}

export interface RecurringOptions {
  /** A pattern recurs when it occurs in at least this many edited plans (default 2). */
  readonly minPlans?: number;
  /** Examples kept per pattern (default 3). */
  readonly examples?: number;
  /** How fields and values are shown in examples (default: paths and JSON). */
  readonly fields?: FieldDescriber;
}

/**
 * The patterns that recur across the edited plans of `runs` (one agent's), most frequent first, each
 * with how many edited plans show it, by how many editors, examples and a suggestion.
 */
export function recurringEdits(runs: readonly RunHistory[], options: RecurringOptions = {}): RecurringEdit[] {
  const minPlans = options.minPlans ?? 2;
  const keep = options.examples ?? 3;
  const edited = runs.filter((run) => run.edits.length > 0);
  const groups = new Map<
    string,
    { pattern: EditPattern; plans: number; editors: Set<string>; examples: PatternExample[] }
  >();
  for (const run of edited) {
    for (const [key, { pattern, example }] of runPatterns(run, options.fields ?? JSON_FIELDS)) {
      const group = groups.get(key) ?? { pattern, plans: 0, editors: new Set<string>(), examples: [] };
      group.plans++;
      for (const edit of run.edits) group.editors.add(edit.editor);
      if (group.examples.length < keep) group.examples.push(example);
      groups.set(key, group);
    }
  }
  return [...groups.values()]
    .filter((group) => group.plans >= minPlans)
    .sort((a, b) => b.plans - a.plans || a.pattern.key.localeCompare(b.pattern.key))
    .map((group) => ({
      pattern: group.pattern,
      plans: group.plans,
      editedPlans: edited.length,
      editors: group.editors.size,
      examples: group.examples,
      suggestion: suggestionFor(group.pattern, group.plans, edited.length),
    }));
}

/** The suggestion for a recurring pattern, in plain words. */
export function suggestionFor(pattern: EditPattern, plans: number, editedPlans: number): string {
  const share = `in ${plans} of ${editedPlans} edited plans`;
  const tool = `\`${pattern.tool}\``;
  const field = `\`${pattern.detail ?? ''}\` of ${tool}`;
  switch (pattern.kind) {
    case 'added_before':
      return `${share} an operator added ${tool} before \`${pattern.detail}\`: tell the agent to plan ${tool} before \`${pattern.detail}\` (prompt note), or add it to the agent's playbook.`;
    case 'added_at_end':
      return `${share} an operator added ${tool} at the end: tell the agent to finish with ${tool}.`;
    case 'removed':
      return `${share} an operator removed ${tool}: tell the agent when not to plan it, or route it to block by rule.`;
    case 'raised':
    case 'lowered':
      return `${share} an operator ${pattern.kind} ${field}: check how the agent computes it; a rule can route such values to review.`;
    case 'later':
    case 'earlier':
      return `${share} an operator moved ${field} ${pattern.kind}: check the dates the agent proposes (lead times, cut-offs).`;
    case 'appended':
    case 'prepended':
      return `${share} an operator ${pattern.kind} text to ${field}: add the missing wording to the agent's template.`;
    case 'rewritten':
      return `${share} an operator rewrote ${field}: look at the examples; the agent's value is not what people want.`;
    case 'set':
      return `${share} an operator set ${field}, which the agent left out: tell the agent to fill it.`;
    case 'cleared':
      return `${share} an operator cleared ${field}: tell the agent to leave it out.`;
    case 'dependencies':
      return `${share} an operator changed what ${tool} depends on: tell the agent the order its effects need.`;
    case 'moved':
      return `${share} an operator moved ${tool}: tell the agent where it belongs in the plan.`;
  }
}
