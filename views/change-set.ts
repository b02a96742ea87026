import type {
  ChangedField,
  ChangeSet,
  EntityRef,
  Invariant,
  JsonValue,
  RelatedEntity,
  ValidatedStep,
} from '../src/pipeline/index.ts';
import { formatArgValue } from './arg-fields.ts';
import { clipMrkdwn, joinWithinLimit, plural } from './mrkdwn.ts';

/**
 * A step's change set in the approver's terms (issue 19): what it will change in the world, before →
 * after per field with the label beside the machine path, the related entities and how they are
 * touched, the invariants kept — and, for the top of the step, the warnings (broken or unknown
 * invariants, unknown impact, hooks that could not verify). Everything here is preview text from a
 * tool: untrusted, escaped, and cut so that a long change set is summarized, never refused by Slack.
 */

/** One side of a changed field is cut shorter than a card's value: two share the line. */
const VALUE_MAX = 200;
const LABEL_MAX = 200;
const PATH_MAX = 100;
const ENTITY_MAX = 150;
const NOTE_MAX = 300;
/** Warnings stay whole up to here; past it, "…and N more warnings". */
export const WARNINGS_MAX = 1200;

/** "Delivery dl_55120 for Halvorsen Freight", or "Delivery dl_55120" from its type and id. */
export function entityName(entity: EntityRef): string {
  const label = entity.label?.trim();
  if (label !== undefined && label !== '') return clipMrkdwn(label, ENTITY_MAX);
  const type = entity.type.charAt(0).toUpperCase() + entity.type.slice(1);
  return clipMrkdwn(`${type} ${entity.id}`, ENTITY_MAX);
}

/**
 * What stands out before anything else on the step, one line each: every violated invariant with its
 * evidence, every invariant that could not be judged, every related entity whose impact is unknown,
 * and every hook that could not verify the step. Empty when there is nothing to warn about.
 */
export function changeSetWarnings(step: Pick<ValidatedStep, 'changeSet' | 'unverified'>): string[] {
  const changeSet = step.changeSet;
  const invariants = changeSet?.invariants ?? [];
  return [
    ...(step.unverified ?? []).map(
      (problem) =>
        `⚠️ *Could not verify:* ${clipMrkdwn(problem.reason, NOTE_MAX)} (the tool's \`${problem.hook}\` hook) — a person must review this step`,
    ),
    ...invariants
      .filter((invariant) => invariant.status === 'violated')
      .map(
        (invariant) => `⚠️ *Breaks:* ${clipMrkdwn(invariant.label, LABEL_MAX)}${evidence(invariant.evidence)}`,
      ),
    ...invariants
      .filter((invariant) => invariant.status === 'unknown')
      .map(
        (invariant) =>
          `❔ *Unknown whether it keeps:* ${clipMrkdwn(invariant.label, LABEL_MAX)}${evidence(invariant.evidence)}`,
      ),
    ...(changeSet?.related ?? [])
      .filter((related) => related.impact === 'unknown')
      .map(
        (related) =>
          `❔ *Unknown impact on* ${entityName(related.entity)} (${sourceText(related)})${related.note === undefined ? '' : ` — ${clipMrkdwn(related.note, NOTE_MAX)}`}`,
      ),
  ];
}

/** The warnings as one block of lines, within `WARNINGS_MAX` ("…and N more warnings"). */
export function warningText(lines: readonly string[], max = WARNINGS_MAX): string {
  return joinWithinLimit(lines, max, (left) => `…and ${plural(left, 'more warning')}`);
}

function evidence(text: string | undefined): string {
  return text === undefined || text.trim() === '' ? '' : ` — ${clipMrkdwn(text, NOTE_MAX)}`;
}

/**
 * The change set as lines, within `max` characters: the target and the version it was read at, then
 * each changed field, the related entities and the invariants kept. What does not fit is counted
 * ("… 4 more fields"); the target line always stays.
 */
export function changeSetText(changeSet: ChangeSet, max: number): string {
  const target = `🎯 *${entityName(changeSet.target)}* · read at version \`${clipMrkdwn(changeSet.target.version, 80)}\``;
  const kept = changeSet.invariants.filter((invariant) => invariant.status === 'preserved');
  const groups: LineGroup[] = [
    { lines: changeSet.changes.map(fieldLine), noun: 'field' },
    {
      // Entities of unknown impact are warnings at the top of the step, not listed again here.
      lines: changeSet.related.filter((related) => related.impact !== 'unknown').map(relatedLine),
      noun: 'related entity',
      plural: 'related entities',
      title: '_Also touches:_',
    },
    {
      lines: kept.map(keptLine),
      noun: 'kept invariant',
    },
  ];
  return [target, ...fitGroups(groups, max - target.length - 1)].join('\n');
}

/** "✅ Keeps: driver hours stay within limits" */
export function keptLine(invariant: Invariant): string {
  return `✅ Keeps: ${clipMrkdwn(invariant.label, LABEL_MAX)}`;
}

/** "• *delivery date used for the driver's route* (`delivery.date`): Fri 3 Apr → Mon 6 Apr" */
export function fieldLine(field: ChangedField): string {
  const before =
    field.beforeText === undefined
      ? valueText(field.before, '_(none)_')
      : clipMrkdwn(field.beforeText, VALUE_MAX);
  const after =
    field.afterText === undefined
      ? valueText(field.after, '_(removed)_')
      : clipMrkdwn(field.afterText, VALUE_MAX);
  return `• *${clipMrkdwn(field.label, LABEL_MAX)}* (\`${clipMrkdwn(field.path, PATH_MAX)}\`): ${before} → ${after}`;
}

/** A JSON value as a person reads it: text as it is, yes/no, numbers, compact JSON for the rest. */
function valueText(value: JsonValue, whenNull: string): string {
  if (value === null) return whenNull;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return formatArgValue(undefined, value, { max: VALUE_MAX });
}

const IMPACT: Readonly<Record<RelatedEntity['impact'], string>> = {
  read: 'read',
  write: 'written',
  event: 'event sent',
  unknown: '*unknown* impact',
};

function sourceText(related: RelatedEntity): string {
  return related.source === 'declared' ? 'declared by the tool' : 'observed in the data';
}

/** "• Route rt_88 — written (declared by the tool): the driver's route for Monday is rebuilt" */
export function relatedLine(related: RelatedEntity): string {
  const source = sourceText(related);
  const note = related.note === undefined ? '' : `: ${clipMrkdwn(related.note, NOTE_MAX)}`;
  return `• ${entityName(related.entity)} — ${IMPACT[related.impact]} (${source})${note}`;
}

interface LineGroup {
  readonly lines: readonly string[];
  readonly noun: string;
  readonly plural?: string;
  /** A line before the group's first line, shown only with it. */
  readonly title?: string;
}

/** Room kept for each "… N more <noun>" a cut may need to add. */
const NOTE_ROOM = 40;

/**
 * Lines of several groups in order, within `max`: once a line does not fit, its group and every later
 * one end with a count of what was left out.
 */
function fitGroups(groups: readonly LineGroup[], max: number): string[] {
  const out: string[] = [];
  let used = 0;
  let full = false;
  groups.forEach((group, index) => {
    if (group.lines.length === 0) return;
    const later = groups.slice(index + 1).filter((other) => other.lines.length > 0).length;
    let shown = 0;
    for (const line of group.lines) {
      const title = shown === 0 && group.title !== undefined ? group.title.length + 1 : 0;
      const length = line.length + 1 + title;
      if (full || used + length + NOTE_ROOM * (later + 1) > max) {
        full = true;
        break;
      }
      if (shown === 0 && group.title !== undefined) out.push(group.title);
      out.push(line);
      used += length;
      shown++;
    }
    const left = group.lines.length - shown;
    if (left > 0) {
      const note = `… ${plural(left, `more ${group.noun}`, `more ${group.plural ?? `${group.noun}s`}`)}`;
      out.push(note);
      used += note.length + 1;
    }
  });
  return out;
}
