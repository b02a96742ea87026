import type { InputBlock, InputBlockElement, KnownBlock, ModalView } from '@slack/types';
import type { RunView, UseCaseResult } from '../src/approvals/types.ts';
import { authorableTools, mayAuthor, type ToolDefinition } from '../src/pipeline/index.ts';
import { button, context, divider, LIMITS, mrkdwn, option, plain, selectOptions } from './blocks.ts';
import { encodeButtonValue } from './button-value.ts';
import {
  type AddedStep,
  EDIT_IDS,
  type EditLayout,
  encodeEditMetadata,
  MAX_ADDED_STEPS,
  nextStepIds,
  planEditLayout,
  type StepSlot,
} from './edit-layout.ts';
import { fieldBlock } from './field-input.ts';
import { lifecycleText } from './lifecycle.ts';
import { clipMrkdwn, escapeMrkdwn, plural } from './mrkdwn.ts';
import { buildNotice, buildNoticeModal } from './notices.ts';
import { stepHeading } from './step-section.ts';
import type { ViewConfig } from './view-config.ts';

/** What the edit modal is built from. Fields from the modal's private_metadata pass straight through. */
export interface EditModalModel {
  readonly run: RunView;
  readonly config: ViewConfig;
  /** Who edits: decides which tools `add_step` offers and which steps say they can't be changed. */
  readonly editorId: string;
  /** The version being edited: the card's on open, the modal's on updates (default: the current one). */
  readonly baseVersion?: number | undefined;
  /** Steps added so far in this modal. */
  readonly added?: readonly AddedStep[] | undefined;
  /** A tool just chosen in `add_step`: appended as a new step with a fresh id (`s<max+1>`). */
  readonly addedTool?: string | undefined;
  /** The step chosen in the picker of a plan edited step by step, or shown first ("Edit s3"). */
  readonly focusStepId?: string | undefined;
  /** The input (`arg:<stepId>:<path>`) of the focused step that takes the cursor; default its first. */
  readonly focusField?: string | undefined;
  /** For times in the notice shown when the plan can no longer be edited (default: dates in UTC). */
  readonly now?: number;
  readonly tz?: string;
}

/**
 * The edit modal (docs/architecture.md §9), callback_id `edit_plan`: one input per argument (`arg:<stepId>:<path>`,
 * element `input`) typed from the tool's zod schema and prefilled; `remove_steps`; `add_step` offering
 * only tools the editor may author; private_metadata with run, base version and added steps. A plan too
 * large for one modal is edited a step at a time through a `pick_step` select.
 *
 * It is built for a run the guard let the editor edit (`ApprovalService.mayEdit`); when it did not,
 * `editRefusalModal` says why instead.
 * @example await client.views.open({ trigger_id, view: buildEditModal({ run, config, editorId }) });
 */
export function buildEditModal(model: EditModalModel): ModalView {
  const { run, config } = model;

  // New steps get ids the run never used, as the service would give them.
  const usedIds = [...run.usedStepIds, ...(model.added ?? []).map((s) => s.id)];
  const justAdded =
    model.addedTool !== undefined &&
    config.pipeline.tools.has(model.addedTool) &&
    (model.added ?? []).length < MAX_ADDED_STEPS
      ? { id: nextStepIds(usedIds, 1)[0]!, tool: model.addedTool }
      : undefined;
  const added = [...(model.added ?? []), ...(justAdded ? [justAdded] : [])];
  const layout = planEditLayout({
    run,
    config,
    added,
    // Added steps are always shown; the picked step stays shown beside them.
    focusStepId: model.focusStepId,
  });
  const allowlist = config.pipeline.agents[run.agent]?.tools ?? [];
  const addable =
    layout.added.length < MAX_ADDED_STEPS ? authorableTools(config.pipeline, model.editorId, allowlist) : [];

  const blocks: KnownBlock[] = [
    context(introText(layout)),
    ...(layout.mode === 'step_by_step' ? [stepPicker(layout)] : []),
    ...layout.shown.flatMap((slot) => [
      ...stepBlocks(
        slot,
        config,
        model.editorId,
        slot.id === layout.focusStepId ? (model.focusField ?? true) : undefined,
      ),
      ...dependencyInput(slot, layout),
    ]),
    divider(),
    removeStepsInput(layout),
    ...(addable.length === 0 ? [] : [addStepSelect(addable)]),
  ];
  return {
    type: 'modal',
    callback_id: EDIT_IDS.callbackId,
    title: plain(`Edit plan v${run.version}`, LIMITS.viewTitle),
    submit: plain(`Save as version ${run.version + 1}`, LIMITS.viewTitle),
    close: plain('Cancel', LIMITS.viewTitle),
    private_metadata: encodeEditMetadata({
      runId: layout.runId,
      baseVersion: layout.baseVersion,
      added: layout.added,
      ...(layout.focusStepId === undefined ? {} : { focusStepId: layout.focusStepId }),
    }),
    blocks,
  };
}

function introText(layout: EditLayout): string {
  const next = layout.baseVersion + 1;
  const lines = [
    `Editing version ${layout.baseVersion} of run \`${escapeMrkdwn(layout.runId)}\`. Saving creates version ${next}: steps you add or change need approval again; steps you leave alone keep theirs.`,
  ];
  if (layout.mode === 'whole' && layout.focusStepId !== undefined) {
    lines.push(`Step \`${escapeMrkdwn(layout.focusStepId)}\` is shown first; the other steps follow.`);
  }
  if (layout.mode === 'step_by_step') {
    lines.push(
      'This plan is too large to edit at once: choose a step, change it and save; then edit the next one.',
    );
  }
  return lines.join('\n');
}

function stepPicker(layout: EditLayout): KnownBlock {
  const options = layout.existing.map((step) => option(step.label, step.id));
  const focused = options.find((o) => o.value === layout.focusStepId);
  return {
    type: 'actions',
    block_id: EDIT_IDS.pickStep,
    elements: [
      {
        type: 'static_select',
        action_id: EDIT_IDS.pickStep,
        placeholder: plain('Choose a step to edit', 150),
        ...selectOptions(options),
        ...(focused === undefined ? {} : { initial_option: focused }),
      },
    ],
  };
}

/** `focus`: this step has the cursor — in the input `focus` names, else in its first input. */
function stepBlocks(
  slot: StepSlot,
  config: ViewConfig,
  editorId: string,
  focus: string | true | undefined,
): KnownBlock[] {
  const lines = [
    `${stepHeading({ step: { id: slot.id, tool: slot.toolName }, position: slot.position, tool: slot.tool })}${slot.isNew ? ' · _new step_' : ''}`,
  ];
  if (slot.tool === undefined) {
    lines.push(
      `⚠️ The tool \`${escapeMrkdwn(slot.toolName)}\` is no longer configured: this step can only be removed.`,
    );
  } else if (!mayAuthor(config.pipeline, editorId, slot.toolName)) {
    lines.push(
      `🔒 Your groups may not write ${clipMrkdwn(slot.tool.title, 80)} steps: changes to it will be refused${slot.isNew ? '' : ', but you may remove it'}.`,
    );
  }
  const hidden =
    slot.hiddenFields === 0
      ? []
      : [context(`…and ${plural(slot.hiddenFields, 'more field')} not shown here; they keep their values.`)];
  return [
    { type: 'section', text: mrkdwn(lines.join('\n')) },
    // One input takes the cursor (Slack allows one focus_on_load per view).
    ...slot.fields.map((field) => fieldBlock(field, { focus: field === focusedField(slot, focus) })),
    ...hidden,
  ];
}

function focusedField(
  slot: StepSlot,
  focus: string | true | undefined,
): StepSlot['fields'][number] | undefined {
  if (focus === undefined) return undefined;
  const editable = slot.fields.filter((field) => field.input !== 'fixed');
  return editable.find((field) => field.blockId === focus) ?? editable[0];
}

/**
 * The steps this one depends on (docs/architecture.md §9): a multi-select of every other step of the
 * form, added ones included, prefilled with its `dependsOn`; option values are step ids.
 */
function dependencyInput(slot: StepSlot, layout: EditLayout): InputBlock[] {
  if (slot.dependencyBlockId === undefined) return [];
  const options = layout.dependable
    .filter((step) => step.id !== slot.id)
    .map((step) => option(step.label, step.id));
  const initial = options.filter((o) => slot.dependsOn.includes(o.value ?? ''));
  return [
    {
      type: 'input',
      block_id: slot.dependencyBlockId,
      label: plain(`Step ${slot.id} runs after`, LIMITS.inputLabel),
      hint: plain(
        'It runs only once each step picked here has been applied. Leave empty if it needs none.',
        LIMITS.inputLabel,
      ),
      optional: true,
      element: {
        type: 'multi_static_select',
        action_id: EDIT_IDS.input,
        placeholder: plain('No other step', 150),
        ...selectOptions(options),
        ...(initial.length === 0 ? {} : { initial_options: initial }),
      },
    },
  ];
}

/** Checkboxes for up to 10 steps, a multi-select beyond (docs/architecture.md §9); option values are step ids. */
function removeStepsInput(layout: EditLayout): InputBlock {
  const options = layout.existing.map((step) => option(step.label, step.id));
  const element: InputBlockElement =
    options.length <= LIMITS.checkboxOptions
      ? { type: 'checkboxes', action_id: EDIT_IDS.input, options }
      : {
          type: 'multi_static_select',
          action_id: EDIT_IDS.input,
          placeholder: plain('Steps to remove', 150),
          ...selectOptions(options),
        };
  return {
    type: 'input',
    block_id: EDIT_IDS.removeSteps,
    label: plain('Remove steps', LIMITS.inputLabel),
    optional: true,
    element,
  };
}

function addStepSelect(tools: readonly ToolDefinition[]): KnownBlock {
  return {
    type: 'actions',
    block_id: EDIT_IDS.addStep,
    elements: [
      {
        type: 'static_select',
        action_id: EDIT_IDS.addStep,
        placeholder: plain('Add a step…', 150),
        ...selectOptions(tools.map((tool) => option(tool.title, tool.name))),
      },
    ],
  };
}

/**
 * Shown instead of the edit form when the guard refused it (or an edit came back refused): the plan
 * changed (with an `edit` button for the current version — nothing typed for an old version is carried
 * over), the run is decided or expired, no rights, or an unknown run.
 */
export function editRefusalModal(
  refusal: UseCaseResult,
  options: { readonly baseVersion: number; readonly now: number; readonly tz?: string },
): ModalView {
  const time = { now: options.now, ...(options.tz === undefined ? {} : { tz: options.tz }) };
  switch (refusal.kind) {
    case 'stale':
      return staleEditModal(refusal.run, options.baseVersion);
    case 'already_decided':
    case 'expired':
    case 'approved':
    case 'rejected':
      return closedEditModal(refusal.run, time);
    case 'unauthorized':
      return noRightsEditModal(refusal.reason);
    default:
      return buildNoticeModal(buildNotice(refusal, time), 'Edit plan');
  }
}

/** Shown instead of the form when the version being edited is no longer current. */
function staleEditModal(run: RunView, baseVersion: number): ModalView {
  return {
    type: 'modal',
    callback_id: EDIT_IDS.callbackId,
    title: plain('The plan changed', LIMITS.viewTitle),
    close: plain('Close', LIMITS.viewTitle),
    blocks: [
      {
        type: 'section',
        text: mrkdwn(
          `⚠️ *The plan changed while you were editing.* You were editing version ${baseVersion}; version ${run.version} is current now. Nothing you typed was applied — edits are never merged into a newer version.`,
        ),
      },
      {
        type: 'actions',
        elements: [
          button({
            actionId: 'edit',
            text: `Edit version ${run.version}`,
            value: encodeButtonValue({ runId: run.runId, version: run.version }),
            style: 'primary',
          }),
        ],
      },
    ],
  };
}

/** Shown instead of the form when the run is decided (or expired). */
function closedEditModal(run: RunView, time: { now?: number; tz?: string }): ModalView {
  const outcome = lifecycleText(run, run.version, time) ?? `This plan is ${run.status}.`;
  return {
    type: 'modal',
    callback_id: EDIT_IDS.callbackId,
    title: plain('Edit plan', LIMITS.viewTitle),
    close: plain('Close', LIMITS.viewTitle),
    blocks: [{ type: 'section', text: mrkdwn(`${outcome}\nIt can no longer be edited.`) }],
  };
}

/** For someone who may not edit at all: an explanation instead of a form they could never submit. */
function noRightsEditModal(reason: string): ModalView {
  return {
    type: 'modal',
    callback_id: EDIT_IDS.callbackId,
    title: plain('Edit plan', LIMITS.viewTitle),
    close: plain('Close', LIMITS.viewTitle),
    blocks: [
      {
        type: 'section',
        text: mrkdwn(
          `🚫 *You can't edit this plan:* ${escapeMrkdwn(reason)}. Ask one of its approvers to make the change. Nothing was changed.`,
        ),
      },
    ],
  };
}
