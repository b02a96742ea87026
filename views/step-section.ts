import type { SectionBlock } from '@slack/types';
import type {
  ApprovalRecord,
  AwaitedStep,
  StepApprovals,
  StepOutcome,
  StepWait,
} from '../src/approvals/types.ts';
import type { Provenance, ToolDefinition, ValidatedStep } from '../src/pipeline/index.ts';
import { formatArgLines } from './arg-fields.ts';
import { changeSetText, changeSetWarnings, warningText } from './change-set.ts';
import { clipMrkdwn, escapeMrkdwn, joinWithinLimit, plural } from './mrkdwn.ts';
import { type PeopleNames, peopleList, person } from './people.ts';
import { formatInstant } from './time.ts';

/** Slack's limit on a section's text. */
export const SECTION_TEXT_MAX = 3000;

/** Where a step stands with its approvers. */
export type StepStanding =
  | { readonly kind: 'auto'; readonly rule: string }
  | {
      readonly kind: 'review';
      readonly group: string;
      readonly have: number;
      readonly need: number;
      /** Users whose approval counts for this step (its id at its digest). */
      readonly approvers: readonly string[];
      /** Enough approvals (N of them, or one that counts alone). */
      readonly done: boolean;
      readonly distinctFromAuthor: boolean;
    }
  | { readonly kind: 'blocked'; readonly reason: string };

/**
 * Where the approvals of a step come from: for the run's current version, the standing approvals
 * computed (`RunView.standing`); for an older version, only the approvals given to each step's id at
 * its digest there.
 */
export interface StandingSource {
  readonly standing?: Readonly<Record<string, StepApprovals>>;
  readonly approvals: readonly ApprovalRecord[];
}

/** A step's standing from its route and the approvals approvals counted for it (see `StandingSource`). */
export function stepStanding(step: ValidatedStep, source?: StandingSource): StepStanding {
  const { route } = step;
  if (route.kind === 'auto') return { kind: 'auto', rule: route.rule };
  if (route.kind === 'block') return { kind: 'blocked', reason: route.reason };
  const standing = source?.standing?.[step.id];
  const approvers = standing?.approvers ?? [
    ...new Set(
      (source?.approvals ?? [])
        .filter((a) => a.stepId === step.id && a.stepDigest === step.digest)
        .map((a) => a.userId),
    ),
  ];
  return {
    kind: 'review',
    group: route.group,
    have: approvers.length,
    need: route.approvals,
    approvers,
    done: standing?.satisfied ?? approvers.length >= route.approvals,
    distinctFromAuthor: route.distinctFromAuthor,
  };
}

/** Everything one step's section shows. */
export interface StepRenderInput {
  readonly step: ValidatedStep;
  /** 1-based position in its version. */
  readonly position: number;
  /** The step's tool from the config (undefined if the config no longer has it). */
  readonly tool: ToolDefinition | undefined;
  readonly standing: StepStanding;
  readonly provenance?: Provenance;
  /** How the step changed in the version shown, when known (diff messages): wording of provenance. */
  readonly change?: 'added' | 'changed';
  /**
   * What the agent reported after approval; `not_reported` on an approved run's step the agent has
   * said nothing about yet.
   */
  readonly outcome?: StepOutcome | 'not_reported';
  /** When the step was released to the agent before the whole plan was decided (ms). */
  readonly releasedAt?: number;
  /** What the step still waits for, when that is worth saying (views/releases.ts decides). */
  readonly waiting?: StepWait;
  /** First line, mrkdwn (already escaped); default "*2. Reschedule delivery* · `s2`". */
  readonly heading?: string;
  /**
   * Lines under the heading, mrkdwn (already escaped); default the step's arguments — for a step with a
   * change set, one line of them (the rest behind `show_args`) unless `fullArguments`.
   */
  readonly body?: readonly string[];
  /** Every argument even beside a change set: for a message that has no `show_args` button. */
  readonly fullArguments?: boolean;
}

export interface StepRenderOptions {
  readonly tz?: string;
  /** Milliseconds since the epoch, for times of day ("14:05 UTC" today, with the date otherwise). */
  readonly now?: number;
  /** Default 3000, a section's limit. */
  readonly maxChars?: number;
  /** Display names for the people a step names (default: mentions). */
  readonly names?: PeopleNames;
}

/** The tool's title, or its name when the config no longer has it. */
export function toolTitle(step: Pick<ValidatedStep, 'tool'>, tool: ToolDefinition | undefined): string {
  return tool?.title ?? step.tool;
}

/**
 * Whether a step's effect cannot be undone: its tool says `irreversible` — or the config no longer has
 * the tool, which approvals treats as irreversible too.
 */
export function isIrreversible(tool: ToolDefinition | undefined): boolean {
  return (tool?.effect ?? 'irreversible') === 'irreversible';
}

/** The mark an irreversible step carries wherever it is shown. */
export const IRREVERSIBLE_MARK = '⚠️ *Irreversible*';

/** "*2. Reschedule delivery* · `s2`", and " · ⚠️ *Irreversible*" for a step that cannot be undone. */
export function stepHeading(input: {
  readonly step: Pick<ValidatedStep, 'id' | 'tool'>;
  readonly position: number;
  readonly tool: ToolDefinition | undefined;
}): string {
  const mark = isIrreversible(input.tool) ? ` · ${IRREVERSIBLE_MARK}` : '';
  return `*${input.position}. ${clipMrkdwn(toolTitle(input.step, input.tool), 150)}* · \`${escapeMrkdwn(input.step.id)}\`${mark}`;
}

const TAIL_LINE_MAX = 400;
const NOTES_MAX = 900;

/**
 * One step as mrkdwn, rendered from the structured plan (never from the agent's prose): heading, the
 * arguments in readable form, where it stands with its approvers, who wrote it, what happened when it
 * ran, and its annotations as warnings. Fits `maxChars`: arguments are cut first ("…and N more fields").
 * The card, the diff message and the escalation message all render steps with it.
 */
export function renderStep(input: StepRenderInput, options: StepRenderOptions = {}): string {
  const max = options.maxChars ?? SECTION_TEXT_MAX;
  const heading = input.heading ?? stepHeading(input);
  const tail = [
    standingLine(input.standing, input.provenance, options.names),
    dependencyLine(input.step),
    input.provenance && provenanceLine(input.provenance, input.change, options.names),
    input.releasedAt === undefined ? undefined : releasedLine(input.releasedAt, options),
    input.outcome && outcomeLine(input.outcome, options),
    input.waiting && waitingLine(input.waiting),
  ]
    .filter((line): line is string => line !== undefined)
    .map((line) => clipLine(line, TAIL_LINE_MAX));
  const notes = joinWithinLimit(
    input.step.annotations.map(
      (note) => `${note.level === 'warning' ? '⚠️' : 'ℹ️'} ${clipMrkdwn(note.message, 500)}`,
    ),
    NOTES_MAX,
    (left) => `…and ${plural(left, 'more note')}`,
  );
  // Warnings first, then what changes in the world, then the arguments (cut first when space runs out).
  const warningLines = changeSetWarnings(input.step);
  const warnings = warningLines.length === 0 ? '' : warningText(warningLines);
  const fixed = [heading, ...(warnings === '' ? [] : [warnings]), ...tail, ...(notes === '' ? [] : [notes])];
  const { changeSet } = input.step;
  const argOptions = options.tz === undefined ? {} : { tz: options.tz };
  const bodyLines =
    input.body ??
    (changeSet === undefined || input.fullArguments === true
      ? formatArgLines(input.tool?.args, input.step.args, argOptions)
      : [argumentsInBrief(input.step, input.tool, argOptions)]);
  let budget = max - fixed.join('\n').length - 1;
  let world = '';
  if (changeSet !== undefined) {
    const bodyRoom = Math.min(bodyLines.join('\n').length, BODY_MIN) + 1;
    world = changeSetText(changeSet, budget - bodyRoom - 1);
    budget -= world.length + 1;
  }
  const body =
    bodyLines.length === 0
      ? ''
      : joinWithinLimit(bodyLines, budget, (left) => `…and ${plural(left, 'more field')}`);
  return [heading, warnings, world, body, ...tail, notes].filter((part) => part !== '').join('\n');
}

/** What the arguments keep of a step's section once its change set is shown: room for a line or two. */
const BODY_MIN = 400;

/**
 * A step's arguments in one line, for a step whose change set says what it does: the tool's summary,
 * else the arguments joined ("Delivery: dl_55120 · Window: Fri 3 Apr 2026"). The full list is on demand.
 */
function argumentsInBrief(
  step: ValidatedStep,
  tool: ToolDefinition | undefined,
  options: { readonly tz?: string },
): string {
  const line =
    step.summary === undefined
      ? formatArgLines(tool?.args, step.args, options)
          .map((arg) => arg.replaceAll('\n>', ' '))
          .join(' · ')
      : clipMrkdwn(step.summary, SUMMARY_MAX);
  return `📝 ${clipLine(line, SUMMARY_MAX)}`;
}

const SUMMARY_MAX = 300;

/** A step as a section block; `accessory` is a button such as `remove_step`. */
export function stepSection(
  input: StepRenderInput,
  options: StepRenderOptions & { readonly accessory?: SectionBlock['accessory'] } = {},
): SectionBlock {
  return {
    type: 'section',
    text: { type: 'mrkdwn', text: renderStep(input, options) },
    ...(options.accessory === undefined ? {} : { accessory: options.accessory }),
  };
}

/** One line per step, for lists that cannot hold full sections: "44. Add internal note · `s44` — auto". */
export function stepLine(input: Pick<StepRenderInput, 'step' | 'position' | 'tool' | 'standing'>): string {
  const summary = input.step.summary === undefined ? '' : `: ${clipMrkdwn(input.step.summary, 120)}`;
  const mark = isIrreversible(input.tool) ? ` · ${IRREVERSIBLE_MARK}` : '';
  const dependsOn = input.step.dependsOn ?? [];
  const graph = dependsOn.length === 0 ? '' : ` ← ${idList(dependsOn, 5)}`;
  const warnings = changeSetWarnings(input.step).length;
  const warned = warnings === 0 ? '' : ` · ⚠️ ${plural(warnings, 'warning')}`;
  return `${input.position}. ${clipMrkdwn(toolTitle(input.step, input.tool), 80)} · \`${escapeMrkdwn(input.step.id)}\`${graph}${mark}${warned}${summary} — ${shortStanding(input.standing)}`;
}

function shortStanding(standing: StepStanding): string {
  switch (standing.kind) {
    case 'auto':
      return 'no approval needed';
    case 'blocked':
      return '⛔ blocked';
    case 'review':
      return standing.done
        ? `✅ ${escapeMrkdwn(standing.group)} approved`
        : `${standing.have} of ${standing.need} ${escapeMrkdwn(standing.group)}`;
  }
}

/** "1 of 2 finance approvals" */
export function progressText(standing: {
  readonly group: string;
  readonly have: number;
  readonly need: number;
}): string {
  const noun = standing.need === 1 ? 'approval' : 'approvals';
  return `${standing.have} of ${standing.need} ${escapeMrkdwn(standing.group)} ${noun}`;
}

/**
 * What a run still waits for, one entry per distinct progress and set of people who may act, naming
 * up to five of them: "Dana Ortiz or Ola Berg to approve `s2`, `s3` (0 of 1 operators approval) ·
 * Fay Chen or Ravi Nair to approve `s4` (1 of 2 finance approvals)".
 */
export function awaitingText(awaiting: readonly AwaitedStep[], names: PeopleNames = {}): string {
  const entries = new Map<string, { who: string; progress: string; ids: string[] }>();
  for (const awaited of awaiting) {
    const progress = progressText(awaited);
    const who =
      awaited.mayAct.length === 0
        ? 'nobody who may approve'
        : peopleList(awaited.mayAct, names, { conjunction: 'or' });
    const key = `${who}\u0000${progress}`;
    const entry = entries.get(key) ?? { who, progress, ids: [] };
    entry.ids.push(`\`${escapeMrkdwn(awaited.stepId)}\``);
    entries.set(key, entry);
  }
  const lines = [...entries.values()].map(({ who, progress, ids }) => {
    const shown = ids.slice(0, 12);
    const more = ids.length > shown.length ? ` and ${ids.length - shown.length} more` : '';
    return `${who} to approve ${shown.join(', ')}${more} (${progress})`;
  });
  const shown = lines.slice(0, 20);
  const more = lines.length > shown.length ? ` · …and ${lines.length - shown.length} more` : '';
  return `${shown.join(' · ')}${more}`;
}

function standingLine(
  standing: StepStanding,
  provenance: Provenance | undefined,
  names: PeopleNames | undefined,
): string {
  switch (standing.kind) {
    case 'auto':
      return `⚪ No approval needed (policy ${escapeMrkdwn(standing.rule)})`;
    case 'blocked':
      return `⛔ Blocked: ${clipMrkdwn(standing.reason, 200)} — the plan can't be approved while this step is in it`;
    case 'review': {
      const { done } = standing;
      const by =
        standing.approvers.length === 0 ? '' : ` · approved by ${peopleList(standing.approvers, names)}`;
      const notAuthor =
        standing.distinctFromAuthor && provenance?.by === 'user'
          ? ` · not by ${person(provenance.userId, names)} (its author)`
          : '';
      return `${done ? '✅' : '👥'} ${progressText(standing)}${by}${notAuthor}`;
    }
  }
}

/** Ids in code marks, at most `max`, then "and N more". */
export function idList(ids: readonly string[], max = 10): string {
  const shown = ids.slice(0, max).map((id) => `\`${escapeMrkdwn(id)}\``);
  const more = ids.length > shown.length ? ` and ${ids.length - shown.length} more` : '';
  return `${shown.join(', ')}${more}`;
}

/** The step's place in the plan's graph: "🔗 `s4` ← `s2`, `s3`"; undefined when it depends on nothing. */
export function dependencyLine(step: Pick<ValidatedStep, 'id' | 'dependsOn'>): string | undefined {
  const dependsOn = step.dependsOn ?? [];
  if (dependsOn.length === 0) return undefined;
  return `🔗 \`${escapeMrkdwn(step.id)}\` ← ${idList(dependsOn)} — runs only once ${dependsOn.length === 1 ? 'it is' : 'they are'} applied`;
}

function releasedLine(at: number, options: StepRenderOptions): string {
  const time = formatInstant(at, {
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.tz === undefined ? {} : { tz: options.tz }),
  });
  return `🟢 *Released* at ${time}, before the whole plan was decided`;
}

/** "⏸️ *Waits for* its approvals · `s2` to be applied · the whole plan to be approved"; undefined when nothing. */
function waitingLine(waiting: StepWait): string | undefined {
  const reasons = [
    ...(waiting.approvals ? ['its approvals'] : []),
    ...(waiting.dependencies.length === 0 ? [] : [`${idList(waiting.dependencies)} to be applied`]),
    ...(waiting.plan ? ['the whole plan to be approved'] : []),
  ];
  return reasons.length === 0 ? undefined : `⏸️ *Waits for* ${reasons.join(' · ')}`;
}

function provenanceLine(
  provenance: Provenance,
  change: StepRenderInput['change'],
  names: PeopleNames | undefined,
): string | undefined {
  if (provenance.by === 'agent') return undefined;
  const verb = change ?? provenance.change ?? 'written';
  return `✏️ ${verb} by ${person(provenance.userId, names)} in v${provenance.version}`;
}

function outcomeLine(outcome: StepOutcome | 'not_reported', options: StepRenderOptions): string {
  if (outcome === 'not_reported') return '◻️ Not reported yet';
  const at = formatInstant(outcome.at, {
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.tz === undefined ? {} : { tz: options.tz }),
  });
  const detail = outcome.detail === undefined ? '' : `: ${clipMrkdwn(outcome.detail, 250)}`;
  switch (outcome.status) {
    case 'applying':
      return `⏳ *Applying* since ${at}${detail}`;
    case 'applied':
      return `✔️ *Applied* at ${at}${detail}`;
    case 'failed':
      return `❌ *Failed* at ${at}${detail}`;
    case 'uncertain':
      return `❓ *Uncertain — needs reconciliation, will not be re-run* (started ${at}, never reported back)${detail}`;
  }
}

/**
 * The run's tally of what the agent reported: "3 of 3 applied", "1 of 3 applied · 1 failed · 1
 * uncertain"; undefined before any report.
 */
export function outcomeTally(stepCount: number, outcomes: readonly StepOutcome[]): string | undefined {
  if (outcomes.length === 0) return undefined;
  const count = (status: StepOutcome['status']) =>
    outcomes.filter((outcome) => outcome.status === status).length;
  const parts = [
    `${count('applied').toLocaleString('en-US')} of ${stepCount.toLocaleString('en-US')} applied`,
  ];
  if (count('failed') > 0) parts.push(`${count('failed')} failed`);
  if (count('uncertain') > 0) parts.push(`${count('uncertain')} uncertain`);
  if (count('applying') > 0) parts.push(`${count('applying')} applying`);
  const unreported = stepCount - outcomes.length;
  if (unreported > 0 && count('applied') < stepCount) parts.push(`${unreported} not reported`);
  return parts.join(' · ');
}

/** Cuts an already-escaped line; used only on lines built here, whose escapes sit in short runs. */
function clipLine(line: string, max: number): string {
  if (line.length <= max) return line;
  // Back off to before any entity or mention the cut would split.
  let end = max - 1;
  const open = Math.max(line.lastIndexOf('&', end), line.lastIndexOf('<', end));
  if (open > line.lastIndexOf(';', end) && open > line.lastIndexOf('>', end)) end = open;
  return `${line.slice(0, end)}…`;
}
