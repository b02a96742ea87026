import type { ActionsBlock, KnownBlock, SectionBlock } from '@slack/types';
import type { RunView, StoredVersion } from '../src/approvals/types.ts';
import {
  type ArgPath,
  describeFieldPath,
  type FieldChange,
  humanizeKey,
  type JsonValue,
  type PlanDiff,
  type StepChange,
  type ValidatedStep,
} from '../src/pipeline/index.ts';
import { type ArgField, argFields, formatArgLines, formatArgValue } from './arg-fields.ts';
import { button, context, LIMITS, mrkdwn, type SlackMessage, section } from './blocks.ts';
import { encodeButtonValue } from './button-value.ts';
import { approveButton } from './card.ts';
import { consistencyWarningBlocks, staleQuotesSince } from './consistency-warning.ts';
import { isActionable, lifecycleText } from './lifecycle.ts';
import { clipMrkdwn, escapeMrkdwn, joinWithinLimit, plural } from './mrkdwn.ts';
import { type PeopleNames, person } from './people.ts';
import {
  IRREVERSIBLE_MARK,
  idList,
  isIrreversible,
  stepSection,
  stepStanding,
  toolTitle,
} from './step-section.ts';
import { formatInstant } from './time.ts';
import { toolOf, type ViewConfig } from './view-config.ts';

/** What the diff message shows: one edit, from `previous` to `current`. */
export interface DiffMessageModel {
  readonly runId: string;
  readonly previous: StoredVersion;
  readonly current: StoredVersion;
  readonly diff: PlanDiff<ValidatedStep>;
  readonly editorId: string;
  readonly config: ViewConfig;
  /** Milliseconds since the epoch. */
  readonly now: number;
  readonly tz?: string;
  /**
   * The run as it is now. Once it has moved past `current` (a newer version, or a decision) the message
   * renders without buttons, with the outcome or a pointer; while pending at `current`, its approvals
   * show on the steps (a step reverted to approved bytes shows its approvals again).
   */
  readonly run?: RunView;
  /** Display names of the people the message names (default: mentions). */
  readonly names?: PeopleNames;
}

/** Headline, re-approval list, context, actions: every block that is not a change (besides the outcome). */
const FIXED_BLOCKS = 4;

/**
 * The diff message posted in the card's thread after an edit (docs/architecture.md §6): a headline counting the
 * changes; added and removed steps set apart from changed fields (`before → after`, readable via
 * field metadata); moves; the tools' annotations on the new steps; which steps need approval again;
 * and buttons `approve`, `remove_step` (per added step), `revert_step` (per changed step) and
 * `discard_edit`, each carrying run and version (and step).
 * @example await client.chat.postMessage({ channel, thread_ts: cardTs, ...buildDiffMessage(model) });
 */
export function buildDiffMessage(model: DiffMessageModel): SlackMessage {
  const { runId, current, diff } = model;
  const actionable = model.run === undefined || isActionable(model.run, current.version);
  // Once decided or superseded, no time relative to when it was drawn: every date is written out.
  const time = {
    ...(actionable ? { now: model.now } : {}),
    ...(model.tz === undefined ? {} : { tz: model.tz }),
  };
  const outcome =
    model.run === undefined ? undefined : lifecycleText(model.run, current.version, time, model.names);
  const warnings = actionable ? diffConsistencyBlocks(model) : [];
  const room = LIMITS.messageBlocks - FIXED_BLOCKS - (outcome === undefined ? 0 : 1) - warnings.length;
  const shown = diff.changes.length <= room ? diff.changes : diff.changes.slice(0, room - 1);
  const rest = diff.changes.slice(shown.length);

  const blocks: KnownBlock[] = [
    section([headline(model)]),
    ...(outcome === undefined ? [] : [section([outcome])]),
    ...shown.map((change) => changeSection(change, model, actionable)),
    ...(rest.length === 0 ? [] : [moreChangesSection(rest)]),
    ...warnings,
    section([reapprovalText(diff)]),
    context(
      [
        `Run \`${escapeMrkdwn(runId)}\``,
        `version ${model.previous.version} → ${current.version}`,
        `plan \`${current.plan.digest.slice(0, 12)}\``,
        `edited ${formatInstant(current.createdAt, time)}`,
      ].join(' · '),
    ),
    ...(actionable ? [diffActions(model)] : []),
  ];
  return { text: headline(model), blocks };
}

/** Steps that still quote a value this edit changed, each with an "Edit <step>" button. */
function diffConsistencyBlocks(model: DiffMessageModel): KnownBlock[] {
  return consistencyWarningBlocks({
    runId: model.runId,
    version: model.current.version,
    quotes: staleQuotesSince([model.previous], model.current, model.config),
    current: model.current,
    config: model.config,
    actionable: true,
    ...(model.tz === undefined ? {} : { tz: model.tz }),
  });
}

/** "<@U0FIN1> edited the plan: 1 step added, 1 changed → version 2" */
function headline(model: DiffMessageModel): string {
  const { counts } = model.diff;
  const parts = (
    [
      [counts.added, 'added'],
      [counts.changed, 'changed'],
      [counts.removed, 'removed'],
      [counts.moved, 'moved'],
    ] as const
  )
    .filter(([count]) => count > 0)
    .map(([count, verb], index) => (index === 0 ? `${plural(count, 'step')} ${verb}` : `${count} ${verb}`));
  const what = parts.length === 0 ? 'no step changed' : parts.join(', ');
  return `✏️ ${person(model.editorId, model.names)} edited the plan: ${what} → version ${model.current.version}`;
}

function changeSection(
  change: StepChange<ValidatedStep>,
  model: DiffMessageModel,
  actionable: boolean,
): SectionBlock {
  const { config, current, runId } = model;
  const live = model.run === undefined || isActionable(model.run, current.version);
  const options = {
    ...(live ? { now: model.now } : {}),
    ...(model.tz === undefined ? {} : { tz: model.tz }),
    ...(model.names === undefined ? {} : { names: model.names }),
  };
  // An older version's steps show only the approvals given to each step's id at its digest there.
  const approvals =
    model.run === undefined || model.run.version === current.version
      ? model.run
      : { approvals: model.run.approvals };
  const stepButton = (actionId: 'remove_step' | 'revert_step', text: string) =>
    actionable
      ? {
          accessory: button({
            actionId,
            text,
            value: encodeButtonValue({ runId, version: current.version, stepId: change.stepId }),
          }),
        }
      : {};
  const id = `\`${escapeMrkdwn(change.stepId)}\``;
  switch (change.kind) {
    case 'added': {
      const tool = toolOf(config, change.step.tool);
      return stepSection(
        {
          step: change.step,
          position: change.index + 1,
          tool,
          standing: stepStanding(change.step, approvals),
          ...provenanceOf(current, change.stepId),
          change: 'added',
          // The diff has no room for a second button: an added step keeps its arguments in full.
          fullArguments: true,
          heading: `➕ *Added step ${id} — ${clipMrkdwn(toolTitle(change.step, tool), 150)}* (position ${change.index + 1})${irreversibleMark(tool)}`,
        },
        { ...options, ...stepButton('remove_step', `Remove step ${change.stepId}`) },
      );
    }
    case 'changed': {
      const tool = toolOf(config, change.after.tool);
      const moved = change.moved ? ` (moved from position ${change.from + 1} to ${change.to + 1})` : '';
      return stepSection(
        {
          step: change.after,
          position: change.to + 1,
          tool,
          standing: stepStanding(change.after, approvals),
          ...provenanceOf(current, change.stepId),
          change: 'changed',
          heading: `✏️ *Changed step ${id} — ${clipMrkdwn(toolTitle(change.after, tool), 150)}*${moved}${irreversibleMark(tool)}`,
          body: changedLines(change, model),
        },
        { ...options, ...stepButton('revert_step', `Revert step ${change.stepId}`) },
      );
    }
    case 'removed': {
      const tool = toolOf(config, change.step.tool);
      const lines = [
        `➖ *Removed step ${id} — ${clipMrkdwn(toolTitle(change.step, tool), 150)}* (was position ${change.index + 1})${irreversibleMark(tool)}`,
        ...(change.step.summary === undefined
          ? formatArgLines(tool?.args, change.step.args, options)
          : [clipMrkdwn(change.step.summary, 300)]),
      ];
      return section(lines, 'field');
    }
    case 'moved': {
      const tool = toolOf(config, change.step.tool);
      return section(
        [
          `↕️ *Moved step ${id} — ${clipMrkdwn(toolTitle(change.step, tool), 150)}*${irreversibleMark(tool)}: position ${change.from + 1} → ${change.to + 1}`,
        ],
        'line',
      );
    }
  }
}

/** " · ⚠️ *Irreversible*" after a step heading whose effect cannot be undone. */
function irreversibleMark(tool: Parameters<typeof isIrreversible>[0]): string {
  return isIrreversible(tool) ? ` · ${IRREVERSIBLE_MARK}` : '';
}

function provenanceOf(version: StoredVersion, stepId: string) {
  const provenance = version.provenance[stepId];
  return provenance === undefined ? {} : { provenance };
}

/** `Label: before → after` per changed field; a changed tool lists the new arguments in full. */
function changedLines(
  change: Extract<StepChange<ValidatedStep>, { kind: 'changed' }>,
  model: DiffMessageModel,
): string[] {
  const before = toolOf(model.config, change.before.tool);
  const after = toolOf(model.config, change.after.tool);
  const options = model.tz === undefined ? {} : { tz: model.tz };
  const dependencies = change.dependenciesChanged
    ? [`Depends on: ${dependencyText(change.before.dependsOn)} → ${dependencyText(change.after.dependsOn)}`]
    : [];
  if (change.toolChanged) {
    return [
      `Tool: ${clipMrkdwn(toolTitle(change.before, before), 100)} → ${clipMrkdwn(toolTitle(change.after, after), 100)}`,
      ...dependencies,
      ...formatArgLines(after?.args, change.after.args, options),
    ];
  }
  const fields = after === undefined ? [] : argFields(after.args, change.after.args);
  const beforeFields = before === undefined ? [] : argFields(before.args, change.before.args);
  return [...dependencies, ...fieldLines(change, fields, beforeFields, options)];
}

/** "`s1`, `s2`", or "_(nothing)_" for a step that depends on no other. */
function dependencyText(dependsOn: readonly string[] | undefined): string {
  return dependsOn === undefined || dependsOn.length === 0 ? '_(nothing)_' : idList(dependsOn);
}

function fieldLines(
  change: Extract<StepChange<ValidatedStep>, { kind: 'changed' }>,
  fields: readonly ArgField[],
  beforeFields: readonly ArgField[],
  options: { readonly tz?: string },
): string[] {
  return change.fields.map((fieldChange) => {
    const field = fieldAtPath(fields, fieldChange.path) ?? fieldAtPath(beforeFields, fieldChange.path);
    const label = escapeMrkdwn(field?.label ?? humanizePath(fieldChange.path));
    return `${label}: ${side(fieldChange, 'before', field, options)} → ${side(fieldChange, 'after', field, options)}`;
  });
}

/** Values in a change line are cut shorter than on a card: two of them share the line. */
const CHANGE_VALUE_MAX = 200;

function side(
  change: FieldChange,
  which: 'before' | 'after',
  field: ArgField | undefined,
  options: { readonly tz?: string },
): string {
  const value: JsonValue | undefined =
    which === 'before'
      ? change.kind === 'added'
        ? undefined
        : change.before
      : change.kind === 'removed'
        ? undefined
        : change.after;
  if (value === undefined) return '_(not set)_';
  return formatArgValue(field, value, { ...options, max: CHANGE_VALUE_MAX });
}

function fieldAtPath(fields: readonly ArgField[], path: ArgPath): ArgField | undefined {
  return fields.find(
    (field) => field.path.length === path.length && field.path.every((key, index) => key === path[index]),
  );
}

function humanizePath(path: ArgPath): string {
  return path.length === 1 && typeof path[0] === 'string' ? humanizeKey(path[0]) : describeFieldPath(path);
}

/** The changes that do not fit as sections, one short line each. */
function moreChangesSection(rest: readonly StepChange<ValidatedStep>[]): SectionBlock {
  const symbol = { added: '➕', changed: '✏️', removed: '➖', moved: '↕️' } as const;
  const lines = [
    `*…and ${plural(rest.length, 'more change')}* (edit the plan to see or undo them):`,
    ...rest.map((change) => `${symbol[change.kind]} ${change.kind} \`${escapeMrkdwn(change.stepId)}\``),
  ];
  return {
    type: 'section',
    text: mrkdwn(joinWithinLimit(lines, LIMITS.sectionText, (left) => `…and ${plural(left, 'more change')}`)),
  };
}

/** "🔁 Re-approval required for: step `s2` (changed), step `s4` (added)" */
function reapprovalText(diff: PlanDiff<ValidatedStep>): string {
  const kinds = new Map(diff.changes.map((change) => [change.stepId, change.kind]));
  const touched = diff.touchedStepIds.map(
    (id) => `step \`${escapeMrkdwn(id)}\` (${kinds.get(id) ?? 'changed'})`,
  );
  if (touched.length === 0) return '✅ No step needs approval again: the approvals already given still hold.';
  const shown = touched.slice(0, 30);
  const more = touched.length > shown.length ? ` and ${touched.length - shown.length} more` : '';
  return `🔁 *Re-approval required for:* ${shown.join(', ')}${more}. Steps not listed keep their approvals.`;
}

function diffActions(model: DiffMessageModel): ActionsBlock {
  const { runId, current, config } = model;
  return {
    type: 'actions',
    elements: [
      approveButton({
        runId,
        version: current.version,
        // Without the run, what the edit touched is what waits for approval again.
        awaiting: model.run?.awaiting ?? model.diff.touchedStepIds.map((stepId) => ({ stepId })),
        steps: current.plan.steps,
        config,
        text: `Approve version ${current.version}`,
      }),
      button({
        actionId: 'discard_edit',
        text: 'Discard this edit',
        value: encodeButtonValue({ runId, version: current.version }),
        style: 'danger',
      }),
    ],
  };
}
