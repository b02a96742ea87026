import type { Button, KnownBlock, ModalView, SectionBlock } from '@slack/types';
import type { StoredVersion } from '../src/approvals/types.ts';
import type { ValidatedStep } from '../src/pipeline/index.ts';
import { formatArgLines } from './arg-fields.ts';
import { button, context, LIMITS, mrkdwn, plain } from './blocks.ts';
import { encodeButtonValue } from './button-value.ts';
import { changeSetWarnings, entityName, fieldLine, keptLine, relatedLine } from './change-set.ts';
import { clipMrkdwn, escapeMrkdwn, plural, truncate } from './mrkdwn.ts';
import { stepHeading } from './step-section.ts';
import { toolOf, type ViewConfig } from './view-config.ts';

/**
 * The arguments on demand (issue 19): a step whose change set says what it does shows that on the
 * card, and its full arguments behind a button, `show_args`, whose value names run, version and step.
 * The click opens this modal for someone who may look at the run, with the arguments of the version
 * the button was drawn for — and the whole change set, which the card may have had to summarize.
 */

/** The button's `action_id` (docs/architecture.md §9). */
export const SHOW_ARGS_ACTION = 'show_args';

/** "Arguments", on the section of a step with a change set; the value is `{"r":…,"v":2,"s":"s2"}`. */
export function showArgsButton(runId: string, version: number, stepId: string): Button {
  return button({
    actionId: SHOW_ARGS_ACTION,
    text: 'Arguments',
    value: encodeButtonValue({ runId, version, stepId }),
  });
}

/**
 * The `show_args` accessory for a step's section when its change set took the arguments' place, on a
 * message that still takes actions; none for a step without one (its arguments are on the section)
 * nor on a decided or superseded message, which has no buttons and shows every argument instead.
 */
export function argumentsOnDemand(
  runId: string,
  version: number,
  step: Pick<ValidatedStep, 'id' | 'changeSet'>,
  actionable: boolean,
): { readonly accessory?: Button } {
  return step.changeSet === undefined || !actionable
    ? {}
    : { accessory: showArgsButton(runId, version, step.id) };
}

/** What the arguments modal shows. */
export interface ArgumentsModalModel {
  readonly runId: string;
  /** The version the button was drawn for. */
  readonly version: StoredVersion;
  /** The run's current version: an older `version` says it was superseded. */
  readonly currentVersion: number;
  readonly step: ValidatedStep;
  readonly config: ViewConfig;
  readonly tz?: string;
}

/** Blocks a modal may hold, less the context lines around the arguments. */
const MODAL_BLOCKS = LIMITS.viewBlocks - 4;

/**
 * The modal with one step's arguments in readable form (labels, money, dates, as the card showed them
 * before change sets), and below them every line of its change set.
 * @example await client.views.open({ trigger_id, view: buildArgumentsModal({ runId, version, currentVersion: 2, step, config }) });
 */
export function buildArgumentsModal(model: ArgumentsModalModel): ModalView {
  const { step, version } = model;
  const tool = toolOf(model.config, step.tool);
  const position = version.plan.steps.findIndex((candidate) => candidate.id === step.id) + 1;
  const superseded =
    version.version < model.currentVersion
      ? ` It was superseded by version ${model.currentVersion}: the card shows the current plan.`
      : '';
  const argLines = formatArgLines(tool?.args, step.args, model.tz === undefined ? {} : { tz: model.tz });
  const changeSet = step.changeSet;
  const worldLines =
    changeSet === undefined
      ? []
      : [
          `*What it changes:* ${entityName(changeSet.target)} · read at version \`${clipMrkdwn(changeSet.target.version, 80)}\``,
          ...changeSet.changes.map(fieldLine),
          ...(changeSet.related.length === 0
            ? []
            : ['_Also touches:_', ...changeSet.related.map(relatedLine)]),
          ...changeSet.invariants.filter((invariant) => invariant.status === 'preserved').map(keptLine),
        ];
  const warnings = changeSetWarnings(step);
  const sections = [
    ...packSections([stepHeading({ step, position, tool }), ...warnings]),
    ...packSections(
      argLines.length === 0 ? ['_This step takes no arguments._'] : ['*Arguments*', ...argLines],
    ),
    ...packSections(worldLines),
  ];
  const shown = sections.slice(0, MODAL_BLOCKS);
  const left = sections.length - shown.length;
  const blocks: KnownBlock[] = [
    context(
      `Run \`${escapeMrkdwn(model.runId)}\` · version ${version.version} · step \`${escapeMrkdwn(step.id)}\`.${superseded}`,
    ),
    ...shown,
    ...(left === 0 ? [] : [context(`…and ${plural(left, 'more section')} (Edit shows every field)`)]),
  ];
  return {
    type: 'modal',
    title: plain('Step arguments', LIMITS.viewTitle),
    close: plain('Close', LIMITS.viewTitle),
    blocks,
  };
}

/** Lines (each within a section's limit) packed into as few sections as hold them. */
function packSections(lines: readonly string[]): SectionBlock[] {
  const sections: SectionBlock[] = [];
  let current = '';
  for (const raw of lines) {
    // Lines are bounded where they are built; this only guards the section's limit.
    const line = truncate(raw, LIMITS.sectionText);
    if (current !== '' && current.length + 1 + line.length > LIMITS.sectionText) {
      sections.push({ type: 'section', text: mrkdwn(current) });
      current = '';
    }
    current = current === '' ? line : `${current}\n${line}`;
  }
  if (current !== '') sections.push({ type: 'section', text: mrkdwn(current) });
  return sections;
}
