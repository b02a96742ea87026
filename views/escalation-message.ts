import type { KnownBlock } from '@slack/types';
import type { RunView, StoredVersion } from '../src/approvals/types.ts';
import type { EscalationGrant } from '../src/config/config-types.ts';
import { argumentsOnDemand } from './arguments-modal.ts';
import { context, type SlackMessage, section } from './blocks.ts';
import { approvalActions } from './card.ts';
import { grantsText } from './escalation-rights.ts';
import { isActionable, lifecycleText } from './lifecycle.ts';
import { clipMrkdwn, escapeMrkdwn, listInWords, mentionList, plural, quoteLines } from './mrkdwn.ts';
import type { PeopleNames } from './people.ts';
import { type StepReleaseInput, stepReleaseInputs } from './releases.ts';
import { awaitingText, type StepRenderInput, stepLine, stepSection, stepStanding } from './step-section.ts';
import { formatInstant, formatInstantFromNow, type TimeOptions } from './time.ts';
import { toolOf, type ViewConfig } from './view-config.ts';

/** Which step of the escalation chain a message is for. */
export type EscalationStepLabel =
  | { readonly kind: 'reminder' }
  | {
      readonly kind: 'escalation';
      /** 1-based. */
      readonly level: number;
      /** 0 for the level itself, 1… for re-notifications. */
      readonly repeat?: number;
    };

/** What an escalation (or reminder) message shows. */
export interface EscalationMessageModel {
  /** The run as it is now. */
  readonly run: RunView;
  /** The version the message was posted for; default the run's current one. */
  readonly version?: StoredVersion;
  readonly step: EscalationStepLabel;
  /** Who this step notified (Slack user ids from the config); empty for the reminder. */
  readonly notified: readonly string[];
  /** The group they were named by, when the level named one. */
  readonly group?: string;
  /** What the level lets them do (`escalation.<agent>.levels[n].may`); absent: only follow up. */
  readonly may?: EscalationGrant;
  /** The channel the run's card is in, for "see the card in #ops". */
  readonly cardChannel?: string;
  /** The card's permalink (`chat.getPermalink`): "the card" then opens it. */
  readonly cardLink?: string;
  readonly config: ViewConfig;
  /** Milliseconds since the epoch. */
  readonly now: number;
  readonly tz?: string;
  /** Display names of the people the message names (default: mentions). */
  readonly names?: PeopleNames;
}

/** Steps that need a person shown in full; the rest are listed one line each. */
const FULL_STEPS = 8;

/**
 * The compact card sent when an unanswered run escalates (docs/architecture.md §8–9) — by DM to the people of
 * the level and/or in its channel — or, as a reminder, to the card's channel: who it was escalated to
 * and why, what it waits for, the agent's words (quoted), the steps that still need a person rendered
 * like on the card, and `approve` / `reject` / `edit` buttons with the card's values (escalated
 * people may act on the run). Once the version is superseded or the run decided, the same message
 * shows that instead, without buttons.
 * @example await client.chat.postMessage({ channel: dm, ...buildEscalationMessage({ run, step: { kind: 'escalation', level: 1 }, notified, config, now }) });
 */
export function buildEscalationMessage(model: EscalationMessageModel): SlackMessage {
  const { run, config } = model;
  const shown = model.version ?? run.current;
  const time: TimeOptions = { now: model.now, ...(model.tz === undefined ? {} : { tz: model.tz }) };
  const actionable = isActionable(run, shown.version);
  const standingSource = shown.version === run.version ? run : { approvals: run.approvals };
  // Released steps and what the others wait for, as on the card (outcomes are the card's to tell).
  const releaseOf = stepReleaseInputs(run, shown, new Map());
  const inputs: StepRenderInput[] = shown.plan.steps.map((step, index) => ({
    step,
    position: index + 1,
    tool: toolOf(config, step.tool),
    standing: stepStanding(step, standingSource),
    ...(shown.provenance[step.id] === undefined ? {} : { provenance: shown.provenance[step.id]! }),
    ...withoutOutcome(releaseOf(step.id)),
  }));
  // A step with a change set is shown in full too: what it changes in the world, and its warnings.
  const needPerson = inputs.filter(
    (input) =>
      needsPerson(input, run, shown) ||
      input.step.changeSet !== undefined ||
      (input.step.unverified ?? []).length > 0,
  );
  const full = needPerson.slice(0, FULL_STEPS);
  const listed = inputs.filter((input) => !full.includes(input));

  // Once decided or superseded, no time relative to when it was drawn: every date is written out.
  const fixedTime = model.tz === undefined ? {} : { tz: model.tz };
  const stepOptions = {
    ...(actionable ? time : fixedTime),
    ...(model.names === undefined ? {} : { names: model.names }),
  };
  const outcome = actionable ? undefined : outcomeText(model, shown, fixedTime);
  const summary = shown.plan.summary?.trim();
  const blocks: KnownBlock[] = [
    section([headline(model, shown, actionable, time)]),
    ...(outcome === undefined ? [] : [section([outcome])]),
    ...(summary === undefined || summary === ''
      ? []
      : [section([`💬 _The agent says:_\n${quoteLines(clipMrkdwn(summary, 600))}`])]),
    ...full.map((input) =>
      stepSection(
        { ...input, fullArguments: !actionable },
        { ...stepOptions, ...argumentsOnDemand(run.runId, shown.version, input.step, actionable) },
      ),
    ),
    ...(listed.length === 0 ? [] : [otherStepsSection(listed, full.length > 0)]),
    context(footerText(model, shown, actionable ? time : undefined)),
    ...(actionable
      ? [
          approvalActions({
            runId: run.runId,
            version: shown.version,
            awaiting: run.awaiting,
            steps: shown.plan.steps,
            config,
          }),
        ]
      : []),
  ];
  return { text: fallbackText(model, shown), blocks };
}

function withoutOutcome({ outcome: _, ...rest }: StepReleaseInput): StepReleaseInput {
  return rest;
}

/** Review steps still short of approvals, and blocked steps (they stop the run until removed). */
function needsPerson(input: StepRenderInput, run: RunView, shown: StoredVersion): boolean {
  if (input.standing.kind === 'blocked') return true;
  if (input.standing.kind !== 'review') return false;
  // Past the version's life nothing is awaited any more: show what needed review.
  return (
    shown.version !== run.version || run.status !== 'pending' || input.standing.have < input.standing.need
  );
}

function stepLabel(step: EscalationStepLabel): string {
  if (step.kind === 'reminder') return 'reminder';
  const repeat = step.repeat ?? 0;
  return `level ${step.level}${repeat > 0 ? `, repeat ${repeat}` : ''}`;
}

/** "⏫ *Escalated to <@U0LEAD1>* (leads, level 1): a freight-ops plan has waited since 10:00 UTC for …" */
function headline(
  model: EscalationMessageModel,
  shown: StoredVersion,
  actionable: boolean,
  time: TimeOptions,
): string {
  const agent = escapeMrkdwn(model.run.agent);
  const who =
    model.step.kind === 'reminder'
      ? '⏰ *Reminder*'
      : `⏫ *Escalated to ${mentionList(model.notified)}* (${model.group === undefined ? '' : `${escapeMrkdwn(model.group)}, `}${stepLabel(model.step)})`;
  if (!actionable) return `${who}: a ${agent} plan (version ${shown.version}).`;
  const since = formatInstant(shown.createdAt, time);
  const waiting =
    model.run.awaiting.length > 0
      ? `for ${awaitingText(model.run.awaiting, model.names)}`
      : 'and can’t be approved while a step is blocked';
  const act =
    model.step.kind === 'reminder'
      ? 'Approve, reject or edit it here or on the card.'
      : model.may === undefined
        ? `This escalation asks you to follow up: it lets you approve nothing yourself (approvals come from ${listInWords(awaitedGroups(model.run).map(escapeMrkdwn))}).`
        : `As escalated to you, you ${grantsText([model.may])}; approve, reject or edit it here.`;
  return `${who}: a ${agent} plan has waited since ${since} ${waiting}. ${act}`;
}

/** The groups whose approvals the run still waits for. */
function awaitedGroups(run: RunView): string[] {
  const groups = [...new Set(run.awaiting.map((awaited) => awaited.group))];
  return groups.length > 0 ? groups : ['the groups named on the card'];
}

/** Superseded (pointing at the card) or what became of the run. */
function outcomeText(
  model: EscalationMessageModel,
  shown: StoredVersion,
  time: { readonly tz?: string },
): string {
  if (shown.version < model.run.version) {
    return `⏭️ *Superseded by version ${model.run.version}* — ${cardPlace(model.cardChannel, model.cardLink)} shows it. Buttons here no longer act.`;
  }
  return lifecycleText(model.run, shown.version, time, model.names) ?? '';
}

/** "the card in <#C0OPS>" for a channel id from the config, else "the card"; linked when its permalink is known. */
function cardPlace(channel: string | undefined, link?: string): string {
  const card = link !== undefined && /^https?:\/\/[^\s<>|]+$/.test(link) ? `<${link}|the card>` : 'the card';
  return channel !== undefined && /^[CG][A-Z0-9]{2,}$/.test(channel) ? `${card} in <#${channel}>` : card;
}

function otherStepsSection(rest: readonly StepRenderInput[], afterFull: boolean): KnownBlock {
  const title = afterFull ? `*Also in the plan* (${plural(rest.length, 'step')}):` : '*The plan:*';
  return section([title, ...rest.map(stepLine)], 'step');
}

/** Run, version, digest, the expiry countdown while the message can be acted on (`time` given), the card's place. */
function footerText(
  model: EscalationMessageModel,
  shown: StoredVersion,
  time: TimeOptions | undefined,
): string {
  const expiresAt = Date.parse(shown.plan.expiresAt);
  return [
    `Run \`${escapeMrkdwn(model.run.runId)}\``,
    `version ${shown.version}`,
    `plan \`${shown.plan.digest.slice(0, 12)}\``,
    ...(time === undefined
      ? []
      : [`${expiresAt > time.now ? 'expires' : 'expired'} ${formatInstantFromNow(expiresAt, time)}`]),
    ...(model.cardChannel === undefined && model.cardLink === undefined
      ? []
      : [cardPlace(model.cardChannel, model.cardLink)]),
  ].join(' · ');
}

function fallbackText(model: EscalationMessageModel, shown: StoredVersion): string {
  const what = model.step.kind === 'reminder' ? 'Reminder' : `Escalated (${stepLabel(model.step)})`;
  const state =
    shown.version < model.run.version
      ? `superseded by version ${model.run.version}`
      : model.run.status === 'pending'
        ? 'waiting for approval'
        : model.run.status;
  return escapeMrkdwn(
    `${what}: ${model.run.agent} plan ${state} (run ${model.run.runId}, version ${shown.version})`,
  );
}
