import { z } from 'zod';
import type { RunView } from '../src/approvals/types.ts';
import {
  ID_PATTERN,
  type JsonObject,
  type JsonValue,
  RUN_ID_PATTERN,
  type ToolDefinition,
  valueAt,
} from '../src/pipeline/index.ts';
import { type ArgField, argFields } from './arg-fields.ts';
import { LIMITS } from './blocks.ts';
import { toolOf, type ViewConfig } from './view-config.ts';

/**
 * Which steps and fields the edit modal shows and under which block ids: computed the same way when the
 * modal is built and when its submission is read, so both agree on every `arg:<stepId>:<argPath>`.
 * It depends on the run's version and the modal's private_metadata only (never on who is editing).
 */

/** The ids of the edit modal (docs/architecture.md §9). */
export const EDIT_IDS = {
  callbackId: 'edit_plan',
  /** action_id of every input element. */
  input: 'input',
  removeSteps: 'remove_steps',
  /** block_id of the actions block and action_id of its select. */
  addStep: 'add_step',
  /** Step picker of a plan edited step by step: block_id and action_id. */
  pickStep: 'pick_step',
} as const;

/** `deps:<stepId>`: the input choosing the steps a step depends on. */
export function dependencyBlockId(stepId: string): string {
  return `deps:${stepId}`;
}

/** `arg:<stepId>:<argPath>`, nested paths joined with `.`. */
export function argBlockId(stepId: string, path: readonly (string | number)[]): string {
  return `arg:${stepId}:${path.join('.')}`;
}

/** A step added in this modal, not yet in any version. */
export interface AddedStep {
  readonly id: string;
  readonly tool: string;
}

/** What the modal carries in `private_metadata`: the run, the version it edits, steps added so far. */
export interface EditMetadata {
  readonly runId: string;
  readonly baseVersion: number;
  readonly added: readonly AddedStep[];
  /** In a plan edited step by step, the step shown. */
  readonly focusStepId?: string;
}

/** At most this many steps can be added in one edit (keeps metadata and the modal small). */
export const MAX_ADDED_STEPS = 10;

const metadataSchema = z
  .strictObject({
    r: z.string().regex(RUN_ID_PATTERN),
    v: z.int().min(1),
    a: z
      .array(z.tuple([z.string().regex(ID_PATTERN), z.string().min(1).max(64)]))
      .max(MAX_ADDED_STEPS)
      .default([]),
    f: z.string().regex(ID_PATTERN).optional(),
  })
  .transform(
    ({ r, v, a, f }): EditMetadata => ({
      runId: r,
      baseVersion: v,
      added: a.map(([id, tool]) => ({ id, tool })),
      ...(f === undefined ? {} : { focusStepId: f }),
    }),
  );

/** `{"r":"<runId>","v":2,"a":[["s4","issue_refund"]],"f":"s2"}` — well under Slack's 3000. */
export function encodeEditMetadata(metadata: EditMetadata): string {
  return JSON.stringify({
    r: metadata.runId,
    v: metadata.baseVersion,
    ...(metadata.added.length === 0 ? {} : { a: metadata.added.map((step) => [step.id, step.tool]) }),
    ...(metadata.focusStepId === undefined ? {} : { f: metadata.focusStepId }),
  });
}

export type EditMetadataResult =
  | { readonly ok: true; readonly metadata: EditMetadata }
  | { readonly ok: false; readonly message: string };

/** Reads an edit modal's private_metadata; never throws. */
export function parseEditMetadata(text: string): EditMetadataResult {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, message: 'private_metadata is not JSON' };
  }
  const parsed = metadataSchema.safeParse(json);
  return parsed.success
    ? { ok: true, metadata: parsed.data }
    : { ok: false, message: `private_metadata is not an edit session: ${z.prettifyError(parsed.error)}` };
}

/**
 * The ids the service would give new steps: `s<n+1>`, `s<n+2>`… where n is the largest `s<number>` id
 * in the plan, skipping ids in use.
 */
export function nextStepIds(usedIds: readonly string[], count: number): string[] {
  const used = new Set(usedIds);
  let next = Math.max(0, ...usedIds.map((id) => Number(/^s(\d+)$/.exec(id)?.[1] ?? 0))) + 1;
  const ids: string[] = [];
  while (ids.length < count) {
    while (used.has(`s${next}`)) next++;
    ids.push(`s${next}`);
    used.add(`s${next}`);
  }
  return ids;
}

/** How one field is edited; `fixed` fields are shown and kept as they are. */
export type InputKind =
  | 'plain_text'
  | 'multiline'
  | 'email'
  | 'url'
  | 'integer'
  | 'money'
  | 'select'
  | 'date'
  | 'datetime'
  | 'checkbox'
  | 'fixed';

export interface FieldSlot {
  readonly field: ArgField;
  readonly blockId: string;
  readonly input: InputKind;
  /** The current value (undefined for a new step or an absent optional field). */
  readonly value: JsonValue | undefined;
}

export interface StepSlot {
  readonly id: string;
  readonly toolName: string;
  readonly tool: ToolDefinition | undefined;
  /** 1-based position in the edited plan (added steps after the existing ones). */
  readonly position: number;
  readonly isNew: boolean;
  /** Current args (`{}` for a new step). */
  readonly args: JsonObject;
  /** The steps it depends on now (none for a new step). */
  readonly dependsOn: readonly string[];
  /**
   * `deps:<stepId>` when the form lets the step's dependencies be chosen (the plan has another step
   * to depend on); absent otherwise.
   */
  readonly dependencyBlockId?: string;
  readonly fields: readonly FieldSlot[];
  /** Fields left out because the modal had no room; they keep their values. */
  readonly hiddenFields: number;
}

export interface EditLayout {
  readonly runId: string;
  readonly baseVersion: number;
  /** `whole`: every step at once; `step_by_step`: a picker, then one step (and added steps). */
  readonly mode: 'whole' | 'step_by_step';
  /** Steps whose fields the modal shows, existing then added. */
  readonly shown: readonly StepSlot[];
  /** Existing steps, for remove_steps and the picker. */
  readonly existing: readonly { readonly id: string; readonly label: string }[];
  /** Every step of the form, existing then added: what a step may depend on (itself excepted). */
  readonly dependable: readonly { readonly id: string; readonly label: string }[];
  readonly added: readonly AddedStep[];
  readonly focusStepId?: string;
}

/** Blocks around the steps: intro, divider, remove_steps, add_step (counted even when absent). */
const OVERHEAD_BLOCKS = 4;

/**
 * Lays out the edit modal for `run`'s current version. Steps in `added` whose id is already taken or
 * whose tool the config lacks are dropped; `focusStepId` is the step shown (a plan too large to be
 * edited at once), or shown first (a form opened at a step).
 */
export function planEditLayout(input: {
  readonly run: RunView;
  readonly config: ViewConfig;
  readonly added?: readonly AddedStep[] | undefined;
  readonly focusStepId?: string | undefined;
}): EditLayout {
  const { run, config } = input;
  const steps = run.current.plan.steps;
  const taken = new Set(steps.map((step) => step.id));
  const added = (input.added ?? [])
    .filter((step) => {
      const fresh = !taken.has(step.id) && toolOf(config, step.tool) !== undefined;
      taken.add(step.id);
      return fresh;
    })
    .slice(0, MAX_ADDED_STEPS);
  // Dependencies can be chosen once there is another step to depend on.
  const dependencies = steps.length + added.length > 1;
  const slots: StepSlot[] = [
    ...steps.map((step, index) =>
      stepSlot(
        step.id,
        step.tool,
        toolOf(config, step.tool),
        index + 1,
        false,
        step.args,
        step.dependsOn ?? [],
        dependencies,
      ),
    ),
    ...added.map((step, index) =>
      stepSlot(
        step.id,
        step.tool,
        toolOf(config, step.tool),
        steps.length + index + 1,
        true,
        {},
        [],
        dependencies,
      ),
    ),
  ];
  const labelled = (slot: StepSlot) => ({
    id: slot.id,
    label: `${slot.position}. ${slot.tool?.title ?? slot.toolName} (${slot.id}${slot.isNew ? ', new' : ''})`,
  });
  const existing = slots.filter((slot) => !slot.isNew).map(labelled);
  const base = {
    runId: run.runId,
    baseVersion: run.version,
    existing,
    dependable: slots.map(labelled),
    added,
  };

  const focus = slots.find((slot) => slot.id === input.focusStepId && !slot.isNew);
  const wholeBlocks = OVERHEAD_BLOCKS + slots.reduce((sum, slot) => sum + slotBlocks(slot), 0);
  if (wholeBlocks <= LIMITS.viewBlocks) {
    // A form opened at a step ("Edit s3") shows it first; the others follow in plan order.
    if (focus === undefined) return { ...base, mode: 'whole', shown: slots };
    return {
      ...base,
      mode: 'whole',
      shown: [focus, ...slots.filter((slot) => slot !== focus)],
      focusStepId: focus.id,
    };
  }

  // Step by step: the picked step (or none yet) and the added steps, each cut to the room left.
  const candidates = [...(focus ? [focus] : []), ...slots.filter((slot) => slot.isNew)];
  let room = LIMITS.viewBlocks - OVERHEAD_BLOCKS - 1; // the picker
  const shown: StepSlot[] = [];
  for (const slot of candidates) {
    const available = room - slotBlocks(slot) + slot.fields.length; // its heading and dependencies
    if (available < 1) break;
    // When fields must be left out, one block says so.
    const fit = slot.fields.length <= available ? slot.fields.length : available - 1;
    room -= slotBlocks(slot) - slot.fields.length + fit + (fit < slot.fields.length ? 1 : 0);
    shown.push(
      fit === slot.fields.length
        ? slot
        : { ...slot, fields: slot.fields.slice(0, fit), hiddenFields: slot.fields.length - fit },
    );
  }
  return {
    ...base,
    mode: 'step_by_step',
    shown,
    ...(focus === undefined ? {} : { focusStepId: focus.id }),
  };
}

/** A step's blocks in the form: its heading, its fields, its dependencies. */
function slotBlocks(slot: StepSlot): number {
  return 1 + slot.fields.length + (slot.dependencyBlockId === undefined ? 0 : 1);
}

function stepSlot(
  id: string,
  toolName: string,
  tool: ToolDefinition | undefined,
  position: number,
  isNew: boolean,
  args: JsonObject,
  dependsOn: readonly string[],
  dependencies: boolean,
): StepSlot {
  const seen = new Set<string>();
  const fields =
    tool === undefined
      ? []
      : argFields(tool.args, isNew ? undefined : args).map((field): FieldSlot => {
          const blockId = argBlockId(id, field.path);
          const value = valueAt(args, field.path);
          // Two paths can join to the same id (`{"a.b": …}` and `{a: {b: …}}`): the second is kept as is.
          const input =
            seen.has(blockId) || blockId.length > LIMITS.blockId ? 'fixed' : inputKind(field, value);
          seen.add(blockId);
          return { field, blockId, input, value };
        });
  return {
    id,
    toolName,
    tool,
    position,
    isNew,
    args,
    dependsOn,
    ...(dependencies ? { dependencyBlockId: dependencyBlockId(id) } : {}),
    fields,
    hiddenFields: 0,
  };
}

/** The element that edits a field holding `value` (docs/architecture.md §9), or `fixed` when none can. */
function inputKind(field: ArgField, value: JsonValue | undefined): InputKind {
  const absent = value === undefined || value === null;
  const isString = absent || typeof value === 'string';
  switch (field.kind) {
    case 'text':
    case 'long_text':
    case 'email':
    case 'url': {
      // Slack's text inputs hold 3000 characters; a longer value is kept rather than cut.
      if (!isString || (typeof value === 'string' && value.length > LIMITS.plainTextInput)) return 'fixed';
      if (field.kind === 'email' || field.kind === 'url') return field.kind;
      return field.kind === 'long_text' ? 'multiline' : 'plain_text';
    }
    case 'int':
      return absent || Number.isSafeInteger(value) ? 'integer' : 'fixed';
    case 'money':
      return absent || Number.isSafeInteger(value) ? 'money' : 'fixed';
    case 'enum': {
      const options = field.options ?? [];
      const fits =
        options.length > 0 && options.length <= LIMITS.selectOptions && options.every((o) => o.length <= 150);
      if (!isString) return 'fixed';
      return fits ? 'select' : 'plain_text';
    }
    case 'date':
      return isString ? 'date' : 'fixed';
    case 'datetime':
      return absent || (typeof value === 'string' && !Number.isNaN(Date.parse(value))) ? 'datetime' : 'fixed';
    case 'boolean':
      return absent || typeof value === 'boolean' ? 'checkbox' : 'fixed';
    case 'other':
      return 'fixed';
  }
}

/** Block ids of the input blocks the layout shows: where field errors may go. */
export function inputBlockIds(layout: EditLayout): string[] {
  return [
    ...layout.shown.flatMap((slot) => [
      ...slot.fields.filter((field) => field.input !== 'fixed').map((field) => field.blockId),
      ...(slot.dependencyBlockId === undefined ? [] : [slot.dependencyBlockId]),
    ]),
    EDIT_IDS.removeSteps,
  ];
}
