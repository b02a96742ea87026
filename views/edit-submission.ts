import type { ModalView } from '@slack/types';
import { z } from 'zod';
import type { RunView, UseCaseResult } from '../src/approvals/types.ts';
import type { EditedStep } from '../src/pipeline/index.ts';
import {
  type Diagnostic,
  dependencyProblems,
  describeFieldPath,
  formatMoney,
  type JsonObject,
  type JsonValue,
  parseMoneyInput,
} from '../src/pipeline/index.ts';
import type { ViewStateValues } from './blocks.ts';
import {
  argBlockId,
  dependencyBlockId,
  EDIT_IDS,
  type EditLayout,
  type FieldSlot,
  inputBlockIds,
  parseEditMetadata,
  planEditLayout,
  type StepSlot,
} from './edit-layout.ts';
import { editRefusalModal } from './edit-modal.ts';
import { tooLongMessage } from './input-messages.ts';
import { listInWords, truncate } from './mrkdwn.ts';
import type { ViewConfig } from './view-config.ts';

/** An edit modal's submission, read: the steps of the candidate plan, or why it can't be one yet. */
export type EditSubmission =
  | {
      readonly ok: true;
      readonly runId: string;
      readonly baseVersion: number;
      /** Kept steps in plan order (with their ids), then added steps (with the ids the modal gave them). */
      readonly steps: readonly EditedStep[];
      /** The input blocks the form showed: where the pipeline's diagnostics go back to. */
      readonly inputBlockIds: readonly string[];
    }
  /** Field-level errors for `response_action: "errors"`, keyed by block id. */
  | { readonly ok: false; readonly reason: 'fields'; readonly errors: Readonly<Record<string, string>> };

/** What each input element puts in view.state.values (slack-protocol/state_values.json); unknown keys pass. */
const elementState = z.looseObject({
  type: z.string(),
  value: z.string().nullish(),
  selected_date: z.string().nullish(),
  selected_date_time: z.number().nullish(),
  selected_option: z.looseObject({ value: z.string() }).nullish(),
  selected_options: z.array(z.looseObject({ value: z.string() })).nullish(),
});
type ElementState = z.infer<typeof elementState>;

/** "Leave the key out" — distinct from `null`, which is a value. */
const OMIT = Symbol('omit');
type FieldValue = JsonValue | typeof OMIT;
type FieldRead =
  | { readonly ok: true; readonly value: FieldValue }
  | { readonly ok: false; readonly message: string };

/**
 * Reads an edit modal's `view.state.values` back into steps, using the same layout the modal was
 * built with — `run` is the run at the version the modal edits (the guard's `mayEdit` answer): integers parsed exactly, money decimals converted to minor units without floats, dates
 * as strings, checkboxes as booleans; removed steps dropped; added steps appended; fields the modal
 * did not show keep their values. Problems come back per block id, for `response_action: "errors"`.
 * @example
 * const read = readEditSubmission({ run, config, stateValues: view.state.values, privateMetadata: view.private_metadata });
 * if (read.ok) await service.applyEdit({ runId: read.runId, baseVersion: read.baseVersion, editorId, steps: read.steps });
 */
export function readEditSubmission(input: {
  readonly run: RunView;
  readonly config: ViewConfig;
  readonly stateValues: ViewStateValues;
  readonly privateMetadata: string;
}): EditSubmission {
  const { run } = input;
  const parsed = parseEditMetadata(input.privateMetadata);
  if (!parsed.ok || parsed.metadata.runId !== run.runId || parsed.metadata.baseVersion !== run.version) {
    return {
      ok: false,
      reason: 'fields',
      errors: {
        [EDIT_IDS.removeSteps]: 'This form is out of date: close it and click Edit on the card again.',
      },
    };
  }
  const { metadata } = parsed;
  const layout = planEditLayout({
    run,
    config: input.config,
    added: metadata.added,
    focusStepId: metadata.focusStepId,
  });
  const errors: Record<string, string> = {};
  const stateOf = (blockId: string): ElementState | undefined => {
    const parsedState = elementState.safeParse(input.stateValues[blockId]?.[EDIT_IDS.input]);
    return parsedState.success ? parsedState.data : undefined;
  };

  const removed = new Set((stateOf(EDIT_IDS.removeSteps)?.selected_options ?? []).map((o) => o.value));
  const shown = new Map(layout.shown.map((slot) => [slot.id, slot]));
  const readArgs = (slot: StepSlot): JsonObject => {
    const args = structuredClone(slot.args) as JsonObject;
    for (const field of slot.fields) {
      if (field.input === 'fixed') continue;
      const read = readField(field, stateOf(field.blockId));
      if (!read.ok) errors[field.blockId] = read.message;
      else setAt(args, field.field.path, read.value);
    }
    return args;
  };

  // A step's dependencies: what its input picked, or what it had when the form sent no such input
  // (not shown, or a form drawn before dependencies could be edited): never dropped unseen.
  const dependenciesOf = (id: string, had: readonly string[]): readonly string[] => {
    const blockId = shown.get(id)?.dependencyBlockId;
    const picked = blockId === undefined ? undefined : stateOf(blockId)?.selected_options;
    if (picked === undefined || picked === null) return had;
    return [...new Set(picked.map((o) => o.value))].sort();
  };
  const withDependencies = (step: EditedStep, dependsOn: readonly string[]): EditedStep =>
    dependsOn.length === 0 ? step : { ...step, dependsOn };

  const steps: EditedStep[] = [];
  for (const step of run.current.plan.steps) {
    if (removed.has(step.id)) continue;
    const slot = shown.get(step.id);
    steps.push(
      withDependencies(
        { id: step.id, tool: step.tool, args: slot === undefined ? step.args : readArgs(slot) },
        dependenciesOf(step.id, step.dependsOn ?? []),
      ),
    );
  }
  for (const step of layout.added) {
    const slot = shown.get(step.id);
    steps.push(
      withDependencies(
        { id: step.id, tool: step.tool, args: slot === undefined ? {} : readArgs(slot) },
        dependenciesOf(step.id, []),
      ),
    );
  }
  Object.assign(errors, dependencyErrors(steps, removed, layout));
  if (Object.keys(errors).length > 0) return { ok: false, reason: 'fields', errors };
  return {
    ok: true,
    runId: run.runId,
    baseVersion: metadata.baseVersion,
    steps,
    inputBlockIds: inputBlockIds(layout),
  };
}

/**
 * What is wrong with the dependencies the form would save, at the fields a person can fix it in: a
 * removed step others still depend on (at that step's dependency input, else at `remove_steps`: "s3
 * depends on this step; remove that dependency first"); a step picked that is not in the plan, the
 * step itself, or steps depending on each other in a circle (at the dependency input).
 */
function dependencyErrors(
  steps: readonly EditedStep[],
  removed: ReadonlySet<string>,
  layout: EditLayout,
): Record<string, string> {
  const errors = new Map<string, string[]>();
  const add = (blockId: string, message: string) =>
    errors.set(blockId, [...(errors.get(blockId) ?? []), message]);
  const inputOf = (stepId: string | undefined) =>
    layout.shown.find((slot) => slot.id === stepId)?.dependencyBlockId;
  for (const id of removed) {
    const dependents = steps
      .filter((step) => step.dependsOn?.includes(id) === true)
      .map((step) => step.id ?? '');
    if (dependents.length === 0) continue;
    const verb = dependents.length === 1 ? 'depends' : 'depend';
    const input = inputOf(id);
    if (input !== undefined)
      add(input, `${listInWords(dependents)} ${verb} on this step; remove that dependency first.`);
    else
      add(
        EDIT_IDS.removeSteps,
        `${listInWords(dependents)} ${verb} on ${id}; remove that dependency first, or keep ${id}.`,
      );
  }
  if (errors.size > 0) return joinErrors(errors);
  const nodes = steps.map((step) => ({
    id: step.id ?? '',
    ...(step.dependsOn ? { dependsOn: step.dependsOn } : {}),
  }));
  for (const problem of dependencyProblems(nodes)) {
    const input = inputOf(problem.stepId) ?? EDIT_IDS.removeSteps;
    add(input, dependencyMessage(problem));
  }
  return joinErrors(errors);
}

function joinErrors(errors: ReadonlyMap<string, readonly string[]>): Record<string, string> {
  return Object.fromEntries(
    [...errors].map(([blockId, list]) => [blockId, truncate(list.join(' '), ERROR_MAX)]),
  );
}

/** A dependency problem of the pipeline in the words of the form. */
function dependencyMessage(problem: Diagnostic): string {
  const cycle = /in a circle: (.+)$/.exec(problem.message);
  switch (problem.code) {
    case 'dependency_cycle':
      return `These steps would wait for each other forever: ${cycle?.[1] ?? problem.message}. Remove one of these dependencies.`;
    case 'self_dependency':
      return 'A step cannot depend on itself.';
    case 'unknown_dependency': {
      const unknown = /depends on (.+), which is not a step/.exec(problem.message)?.[1];
      return `${unknown ?? 'A step picked here'} is not a step of this plan any more; pick again.`;
    }
    default:
      return problem.message;
  }
}

/** One field's value from its element state. */
function readField(slot: FieldSlot, state: ElementState | undefined): FieldRead {
  const { field } = slot;
  const typed = state?.value ?? '';
  switch (slot.input) {
    case 'plain_text':
    case 'multiline':
    case 'email':
    case 'url': {
      if (typed === '') return empty(slot);
      const limit = field.maxLength;
      return limit !== undefined && typed.length > limit
        ? { ok: false, message: tooLongMessage(typed.length, limit) }
        : { ok: true, value: typed };
    }
    case 'integer': {
      if (typed.trim() === '') return empty(slot);
      if (!/^[-+]?\d+$/.test(typed.trim())) return { ok: false, message: 'Enter a whole number, like 12.' };
      const value = Number(typed.trim());
      return Number.isSafeInteger(value)
        ? { ok: true, value: Object.is(value, -0) ? 0 : value }
        : { ok: false, message: 'That number is too large.' };
    }
    case 'money': {
      if (typed.trim() === '') return empty(slot);
      const currency = field.currency ?? 'USD';
      const money = parseMoneyInput(typed, currency);
      if (!money.ok) return { ok: false, message: capitalize(money.message) };
      const outside = outsideBounds(field, money.minor);
      return outside === undefined
        ? { ok: true, value: money.minor }
        : {
            ok: false,
            message: `Enter an amount of ${outside} (you entered ${formatMoney(money.minor, currency)}).`,
          };
    }
    case 'select': {
      const picked = state?.selected_option?.value;
      if (picked === undefined) return empty(slot);
      return (field.options ?? []).includes(picked)
        ? { ok: true, value: picked }
        : { ok: false, message: 'Choose one of the options.' };
    }
    case 'date': {
      const date = state?.selected_date;
      if (date === undefined || date === null) return empty(slot);
      return /^\d{4}-\d{2}-\d{2}$/.test(date)
        ? { ok: true, value: date }
        : { ok: false, message: 'Pick a date.' };
    }
    case 'datetime': {
      const seconds = state?.selected_date_time;
      if (seconds === undefined || seconds === null) return empty(slot);
      if (!Number.isSafeInteger(seconds)) return { ok: false, message: 'Pick a date and time.' };
      // An unchanged time keeps its exact text (sub-second digits included).
      if (typeof slot.value === 'string' && Math.floor(Date.parse(slot.value) / 1000) === seconds) {
        return { ok: true, value: slot.value };
      }
      return { ok: true, value: new Date(seconds * 1000).toISOString().replace('.000Z', 'Z') };
    }
    case 'checkbox': {
      const checked = (state?.selected_options ?? []).some((o) => o.value === 'true');
      // Unchecked on an optional field that had no value leaves it out, as it was.
      if (!checked && slot.value === undefined && field.optional) return { ok: true, value: OMIT };
      return { ok: true, value: checked };
    }
    case 'fixed':
      return { ok: true, value: slot.value === undefined ? OMIT : slot.value };
  }
}

/**
 * "at least $0.01" when `minor` is below a money field's bounds, "at most $500.00" above them: checked
 * here so the editor reads the bound in the currency, at the field, before the plan is validated.
 */
function outsideBounds(field: FieldSlot['field'], minor: number): string | undefined {
  const currency = field.currency ?? 'USD';
  if (field.min !== undefined && minor < field.min) return `at least ${formatMoney(field.min, currency)}`;
  if (field.max !== undefined && minor > field.max) return `at most ${formatMoney(field.max, currency)}`;
  return undefined;
}

/** An empty field: null if it was null, left out if it may be, null if it may be, else required. */
function empty(slot: FieldSlot): FieldRead {
  if (slot.value === null) return { ok: true, value: null };
  if (slot.field.optional) return { ok: true, value: OMIT };
  if (slot.field.nullable) return { ok: true, value: null };
  return { ok: false, message: 'This field is required.' };
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Sets (or, for OMIT, deletes) the value at `path`, creating objects on the way for new steps. */
function setAt(args: JsonObject, path: readonly (string | number)[], value: FieldValue): void {
  let parent: JsonValue = args;
  for (const [index, key] of path.entries()) {
    const last = index === path.length - 1;
    if (Array.isArray(parent) && typeof key === 'number') {
      if (last) {
        if (value !== OMIT) parent[key] = value;
        return;
      }
      parent = parent[key] ?? null;
    } else if (
      typeof parent === 'object' &&
      parent !== null &&
      !Array.isArray(parent) &&
      typeof key === 'string'
    ) {
      const object: JsonObject = parent;
      if (last) {
        if (value === OMIT) delete object[key];
        else
          Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
        return;
      }
      if (!Object.hasOwn(object, key)) {
        if (value === OMIT) return;
        Object.defineProperty(object, key, {
          value: {},
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      parent = object[key] ?? null;
    } else {
      return;
    }
  }
}

/** Longest error shown under one field. */
const ERROR_MAX = 500;

/**
 * Puts pipeline diagnostics where the editor will see them: `arg:<stepId>:<path>` when that input is
 * shown (or the nearest shown parent path), else the step's first shown field (a plan-level problem
 * with a step, such as may_author on an added step), else `remove_steps`. Several messages for one
 * block are joined.
 */
export function diagnosticsToModalErrors(
  diagnostics: readonly Diagnostic[],
  inputBlockIds: readonly string[],
  stepIds: readonly string[] = [],
): Record<string, string> {
  const shown = new Set(inputBlockIds);
  const fallback = shown.has(EDIT_IDS.removeSteps) ? EDIT_IDS.removeSteps : inputBlockIds[0];
  const messages = new Map<string, string[]>();
  for (const raw of diagnostics) {
    const dependencies = atDependencies(raw, stepIds, shown);
    if (dependencies !== undefined) {
      messages.set(dependencies, [...(messages.get(dependencies) ?? []), dependencyMessage(raw)]);
      continue;
    }
    const diagnostic = atArgument(raw, stepIds);
    const field = targetBlock(diagnostic, shown, inputBlockIds);
    const target = field ?? fallback;
    if (target === undefined) continue;
    const message =
      field === argBlockId(diagnostic.stepId ?? '', diagnostic.path ?? [])
        ? atField(diagnostic)
        : raw.message;
    messages.set(target, [...(messages.get(target) ?? []), message]);
  }
  return Object.fromEntries(
    [...messages].map(([blockId, list]) => [blockId, truncate(list.join(' · '), ERROR_MAX)]),
  );
}

/** The dependency input a problem with `steps[i].dependsOn` belongs at, when the form shows it. */
function atDependencies(
  diagnostic: Diagnostic,
  stepIds: readonly string[],
  shown: ReadonlySet<string>,
): string | undefined {
  const { path } = diagnostic;
  if (path?.[0] !== 'steps' || typeof path[1] !== 'number' || path[2] !== 'dependsOn') return undefined;
  const stepId = stepIds[path[1]] ?? diagnostic.stepId;
  const blockId = stepId === undefined ? undefined : dependencyBlockId(stepId);
  return blockId !== undefined && shown.has(blockId) ? blockId : undefined;
}

/**
 * A parse-phase diagnostic about a whole plan's JSON (`steps[0].args.note`, step `#1`) as one about
 * the step and argument it is in, using the ids of the steps the form submitted, in order.
 */
function atArgument(diagnostic: Diagnostic, stepIds: readonly string[]): Diagnostic {
  const { path } = diagnostic;
  if (path === undefined || path[0] !== 'steps' || typeof path[1] !== 'number' || path[2] !== 'args')
    return diagnostic;
  const stepId = stepIds[path[1]];
  return stepId === undefined ? diagnostic : { ...diagnostic, stepId, path: path.slice(3) };
}

/**
 * A diagnostic shown under its own field, in the person's terms: what the field holds instead of
 * `step s1: note …` or `string at steps[0].args.note …` (the field's label already says which it is).
 */
function atField(diagnostic: Diagnostic): string {
  if (diagnostic.code === 'string_too_long') {
    const counts = /is (\d+) characters long; the limit is (\d+)/.exec(diagnostic.message);
    if (counts) return tooLongMessage(Number(counts[1]), Number(counts[2]));
    return 'This is longer than Countersign accepts; shorten it.';
  }
  if (diagnostic.phase === 'type' && diagnostic.stepId !== undefined && diagnostic.path !== undefined) {
    const prefix = `step ${diagnostic.stepId}: ${describeFieldPath(diagnostic.path)} `;
    if (diagnostic.message.startsWith(prefix)) {
      const rest = diagnostic.message.slice(prefix.length);
      const counts = /^must be at most (\d+) characters \(got (\d+)\)$/.exec(rest);
      if (counts) return tooLongMessage(Number(counts[2]), Number(counts[1]));
      return `${capitalize(rest.replace(/^is /, ''))}.`.replace(/\.\.$/, '.');
    }
  }
  return diagnostic.message;
}

function targetBlock(
  diagnostic: Diagnostic,
  shown: ReadonlySet<string>,
  inputBlockIds: readonly string[],
): string | undefined {
  const { stepId, path } = diagnostic;
  if (stepId === undefined) return undefined;
  for (let length = path?.length ?? 0; length > 0; length--) {
    const blockId = argBlockId(stepId, path!.slice(0, length));
    if (shown.has(blockId)) return blockId;
  }
  const prefix = argBlockId(stepId, []);
  return inputBlockIds.find((blockId) => blockId.startsWith(prefix));
}

/** What to answer a view_submission with: field errors, a replacement view, or close the modal. */
export type EditSubmissionAck =
  | { readonly response_action: 'errors'; readonly errors: Readonly<Record<string, string>> }
  | { readonly response_action: 'update'; readonly view: ModalView }
  | { readonly response_action: 'clear' };

/**
 * The answer to an edit modal's submission, from what `applyEdit` gave: the pipeline's diagnostics
 * stay in the modal next to their fields (`shown`: the read's input block ids); a new version (or no
 * change) closes the modal; anything else — the plan changed meanwhile, a decision, no rights —
 * replaces the form with the reason (`editRefusalModal`).
 * @example await ack(editResultAck(await service.applyEdit(edit), { inputBlockIds: read.inputBlockIds, baseVersion, now }));
 */
export function editResultAck(
  result: UseCaseResult,
  context: {
    readonly inputBlockIds: readonly string[];
    /** Ids of the submitted steps, in order: a problem found at `steps[i]` belongs to the i-th. */
    readonly stepIds?: readonly string[];
    readonly baseVersion: number;
    readonly now: number;
    readonly tz?: string;
  },
): EditSubmissionAck {
  switch (result.kind) {
    case 'invalid':
      return {
        response_action: 'errors',
        errors: diagnosticsToModalErrors(result.diagnostics, context.inputBlockIds, context.stepIds),
      };
    case 'edited':
    case 'unchanged':
      return { response_action: 'clear' };
    default:
      return { response_action: 'update', view: editRefusalModal(result, context) };
  }
}
