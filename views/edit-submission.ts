import { z } from 'zod';
import type { RunView } from '../src/approvals/types.ts';
import type { EditedStep } from '../src/pipeline/index.ts';
import { formatMoney, type JsonObject, type JsonValue, parseMoneyInput } from '../src/pipeline/index.ts';
import type { ViewStateValues } from './blocks.ts';
import { capitalize, dependencyErrors } from './edit-errors.ts';
import {
  EDIT_IDS,
  type FieldSlot,
  inputBlockIds,
  parseEditMetadata,
  planEditLayout,
  type StepSlot,
} from './edit-layout.ts';
import { tooLongMessage } from './input-messages.ts';
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
