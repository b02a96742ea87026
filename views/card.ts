import type { ActionsBlock, Button, KnownBlock } from '@slack/types';
import type { RunView, StepOutcome, StoredVersion } from '../src/approvals/types.ts';
import { canonicalJson, type JsonObject, type ValidatedStep } from '../src/pipeline/index.ts';
import { argumentsOnDemand } from './arguments-modal.ts';
import {
  button,
  confirmDialog,
  context,
  divider,
  header,
  LIMITS,
  type SlackMessage,
  section,
} from './blocks.ts';
import { encodeButtonValue } from './button-value.ts';
import { consistencyWarningBlocks, staleQuotesSince } from './consistency-warning.ts';
import { escalatedLines } from './escalation-rights.ts';
import { isActionable, lifecycleText } from './lifecycle.ts';
import { clipMrkdwn, escapeMrkdwn, joinWithinLimit, plural, quoteLines } from './mrkdwn.ts';
import type { PeopleNames } from './people.ts';
import { releasedText, stepReleaseInputs } from './releases.ts';
import {
  awaitingText,
  isIrreversible,
  outcomeTally,
  type StepRenderInput,
  stepLine,
  stepSection,
  stepStanding,
  toolTitle,
} from './step-section.ts';
import { formatInstant, formatInstantFromNow, type TimeOptions } from './time.ts';
import { toolOf, type ViewConfig } from './view-config.ts';

/** What the approval card shows. */
export interface ApprovalCardModel {
  readonly run: RunView;
  readonly config: ViewConfig;
  /** Milliseconds since the epoch. */
  readonly now: number;
  /** IANA time zone for times shown (default UTC). */
  readonly tz?: string;
  /**
   * The version this message shows; default the run's current one. An older version renders as
   * superseded ("Superseded by version 3 — see the thread"), without buttons.
   */
  readonly version?: StoredVersion;
  /**
   * What the agent reported for each step after approval, or after its early release (the latest per
   * step counts).
   */
  readonly outcomes?: readonly StepOutcome[];
  /**
   * Earlier versions to compare the shown one with (the agent's and the one it was edited from): a
   * pending card warns about steps that still quote a value changed since (consistency-warning.ts).
   */
  readonly earlierVersions?: readonly StoredVersion[];
  /** Display names of the people the card names (default: mentions, which Slack draws as names). */
  readonly names?: PeopleNames;
}

/** Header, status, divider, context, actions: every block that is not a step (besides the agent's words). */
const FIXED_BLOCKS = 5;

/**
 * The approval card (docs/architecture.md §9) for chat.postMessage / chat.update: a header with the agent and the
 * state; what the card is waiting for (or the outcome: who, when, why); the agent's summary, labelled
 * as its own words and kept apart from the steps; one section per step rendered from the structured
 * plan; run id, version, short plan digest and expiry; and `approve` / `reject` / `edit` buttons while
 * the version is current and pending. A plan too long for one message shows its first steps in full
 * and lists the rest ("…and N more steps"), within Slack's 50 blocks.
 * @example await client.chat.postMessage({ channel, ...buildApprovalCard({ run, config, now }) });
 */
export function buildApprovalCard(model: ApprovalCardModel): SlackMessage {
  const { run, config } = model;
  const shown = model.version ?? run.current;
  const time: TimeOptions = { now: model.now, ...(model.tz === undefined ? {} : { tz: model.tz }) };
  const actionable = isActionable(run, shown.version);
  const steps = shown.plan.steps;
  const standingSource = shown.version === run.version ? run : { approvals: run.approvals };
  const latestOutcome = new Map((model.outcomes ?? []).map((outcome) => [outcome.stepId, outcome]));
  // What ran is told on the approved card's current version only; every step says where it stands.
  const ran = run.status === 'approved' && shown.version === run.version;
  const releaseOf = stepReleaseInputs(run, shown, latestOutcome);
  const inputs: StepRenderInput[] = steps.map((step, index) => ({
    step,
    position: index + 1,
    tool: toolOf(config, step.tool),
    standing: stepStanding(step, standingSource),
    ...(shown.provenance[step.id] === undefined ? {} : { provenance: shown.provenance[step.id]! }),
    ...releaseOf(step.id),
    ...(ran ? { outcome: latestOutcome.get(step.id) ?? 'not_reported' } : {}),
  }));

  const agentWords = agentSection(shown.plan.summary, shown.plan.context);
  const warnings = actionable ? cardConsistencyBlocks(model, shown) : [];
  const room = LIMITS.messageBlocks - FIXED_BLOCKS - (agentWords === undefined ? 0 : 1) - warnings.length;
  const full = inputs.length <= room ? inputs : inputs.slice(0, room - 1);
  const rest = inputs.slice(full.length);
  // A decided card keeps no time relative to when it was drawn: every date is written out.
  const decidedTime = model.tz === undefined ? {} : { tz: model.tz };
  const stepOptions = {
    ...(actionable ? { now: model.now } : {}),
    ...decidedTime,
    ...(model.names === undefined ? {} : { names: model.names }),
  };
  const tally = ran ? outcomeTally(steps.length, [...latestOutcome.values()]) : undefined;
  const outcome = lifecycleText(run, shown.version, decidedTime, model.names);
  const released = releasedText(run, shown, latestOutcome);

  const blocks: KnownBlock[] = [
    header(headerText(run, shown, steps.length)),
    section([
      ...(outcome === undefined
        ? [pendingText(run, steps, time, model.names)]
        : [outcome, ...(tally === undefined ? [] : [`📊 *${tally}*`])]),
      ...(released === undefined ? [] : [released]),
    ]),
    ...warnings,
    ...(agentWords === undefined ? [] : [agentWords]),
    divider(),
    ...full.map((input) =>
      stepSection(
        { ...input, fullArguments: !actionable },
        { ...stepOptions, ...argumentsOnDemand(run.runId, shown.version, input.step, actionable) },
      ),
    ),
    ...(rest.length === 0 ? [] : [moreStepsSection(rest)]),
    context(footerText(run.runId, shown, actionable ? time : undefined)),
    ...(actionable
      ? [approvalActions({ runId: run.runId, version: run.version, awaiting: run.awaiting, steps, config })]
      : []),
  ];
  return { text: fallbackText(run, shown, steps.length), blocks };
}

function cardConsistencyBlocks(model: ApprovalCardModel, shown: StoredVersion): KnownBlock[] {
  const earlier = (model.earlierVersions ?? []).filter((version) => version.version < shown.version);
  if (earlier.length === 0) return [];
  return consistencyWarningBlocks({
    runId: model.run.runId,
    version: shown.version,
    quotes: staleQuotesSince(earlier, shown, model.config),
    current: shown,
    config: model.config,
    actionable: true,
    ...(model.tz === undefined ? {} : { tz: model.tz }),
  });
}

function statusWord(run: RunView, shown: StoredVersion): string {
  if (shown.version < run.version) return `version ${shown.version} (superseded)`;
  return run.status === 'pending' ? 'awaiting approval' : run.status;
}

const STATUS_EMOJI: Readonly<Record<RunView['status'], string>> = {
  pending: '📋',
  approved: '✅',
  rejected: '❌',
  expired: '⌛',
  invalid: '🚫',
};

function headerText(run: RunView, shown: StoredVersion, count: number): string {
  const emoji = shown.version < run.version ? '⏭️' : STATUS_EMOJI[run.status];
  return `${emoji} ${run.agent} plan, ${plural(count, 'step')} — ${statusWord(run, shown)}`;
}

function fallbackText(run: RunView, shown: StoredVersion, count: number): string {
  return escapeMrkdwn(
    `${run.agent} plan ${statusWord(run, shown)}: ${plural(count, 'step')} (run ${run.runId}, version ${shown.version})`,
  );
}

/** What a pending card is waiting for: approvals by group, blocked steps, escalation. */
function pendingText(
  run: RunView,
  steps: readonly ValidatedStep[],
  time: TimeOptions,
  names: PeopleNames | undefined,
): string {
  const lines: string[] = [];
  if (run.awaiting.length > 0) lines.push(`🕓 *Waiting for* ${awaitingText(run.awaiting, names)}`);
  if (run.recheckProblem !== undefined) {
    lines.push(
      `⚠️ *Not approved:* the checks were run again when the last approval came in, and failed: ${clipMrkdwn(run.recheckProblem, 600)}`,
    );
  }
  if (run.escalated.length > 0) {
    const at = run.escalatedAt === undefined ? '' : `, last at ${formatInstant(run.escalatedAt, time)}`;
    lines.push(...escalatedLines(run.escalated, at));
  }
  for (const step of run.blocked) {
    const reason = step.route.kind === 'block' ? step.route.reason : 'blocked';
    lines.push(
      `⛔ *Can't be approved while step \`${escapeMrkdwn(step.id)}\` is in the plan:* ${clipMrkdwn(reason, 300)}. Edit the plan to remove it.`,
    );
  }
  if (run.awaiting.length === 0 && run.blocked.length === 0) {
    lines.unshift(steps.length > 0 ? 'Every step has its approvals.' : 'No steps.');
  }
  return joinWithinLimit(lines, LIMITS.sectionText, (left) => `…and ${plural(left, 'more blocked step')}`);
}

/** The agent's summary and context, labelled as its own words, quoted, escaped. */
function agentSection(
  summary: string | undefined,
  planContext: JsonObject | undefined,
): KnownBlock | undefined {
  const lines: string[] = [];
  if (summary !== undefined && summary.trim() !== '') {
    lines.push(`💬 *The agent says:*\n${quoteLines(clipMrkdwn(summary, 1500))}`);
  }
  const entries = Object.entries(planContext ?? {});
  if (entries.length > 0) {
    const shown = entries
      .slice(0, 12)
      .map(
        ([key, value]) =>
          `${clipMrkdwn(key, 40)}: ${clipMrkdwn(typeof value === 'string' ? value : canonicalJson(value), 120)}`,
      );
    const more = entries.length > shown.length ? ` · …and ${entries.length - shown.length} more` : '';
    lines.push(`_Context from the agent:_ ${shown.join(' · ')}${more}`);
  }
  return lines.length === 0 ? undefined : section(lines);
}

/** The steps that do not fit as sections, one line each. */
function moreStepsSection(rest: readonly StepRenderInput[]): KnownBlock {
  const lines = [
    `*…and ${plural(rest.length, 'more step')}*, listed briefly (Edit shows every step in full):`,
    ...rest.map(stepLine),
  ];
  return {
    type: 'section',
    text: {
      type: 'mrkdwn',
      text: joinWithinLimit(lines, LIMITS.sectionText, (left) => `…and ${plural(left, 'more step')}`),
    },
  };
}

/** Run, version, plan digest, and — while the card can still be acted on (`time` given) — the expiry countdown. */
function footerText(runId: string, shown: StoredVersion, time: TimeOptions | undefined): string {
  const expiresAt = Date.parse(shown.plan.expiresAt);
  return [
    `Run \`${escapeMrkdwn(runId)}\``,
    `version ${shown.version}`,
    `plan \`${shown.plan.digest.slice(0, 12)}\``,
    ...(time === undefined
      ? []
      : [`${expiresAt > time.now ? 'expires' : 'expired'} ${formatInstantFromNow(expiresAt, time)}`]),
  ].join(' · ');
}

/** What an Approve button needs to know: the version's steps, and which of them still wait for approvals. */
export interface ApproveButtonInput {
  readonly runId: string;
  readonly version: number;
  /** Review steps still short of approvals (`RunView.awaiting`): what an approval now covers. */
  readonly awaiting: readonly { readonly stepId: string }[];
  readonly steps: readonly ValidatedStep[];
  readonly config: ViewConfig;
  readonly text?: string;
}

/**
 * The `approve` / `reject` / `edit` buttons for a version (the card's, and the escalation message's:
 * docs/architecture.md §9 gives both the same ids).
 */
export function approvalActions(input: ApproveButtonInput): ActionsBlock {
  const value = encodeButtonValue({ runId: input.runId, version: input.version });
  return {
    type: 'actions',
    elements: [
      approveButton(input),
      button({ actionId: 'reject', text: 'Reject', value, style: 'danger' }),
      button({ actionId: 'edit', text: 'Edit', value }),
    ],
  };
}

/**
 * The `approve` button for a version. When the approval covers an irreversible step (one still
 * waiting for approvals), Slack asks to confirm first, naming each irreversible effect ("Refund
 * $1,489.00 on invoice in_74119 — cannot be undone"). With blocked steps its text says so and the
 * confirmation explains that the approval is recorded but the plan can't complete until they are removed.
 */
export function approveButton(input: ApproveButtonInput): Button {
  const value = encodeButtonValue({ runId: input.runId, version: input.version });
  const text = input.text ?? 'Approve';
  const blocked = input.steps.filter((step) => step.route.kind === 'block');
  const irreversible = irreversibleCovered(input);
  if (blocked.length === 0 && irreversible.length === 0)
    return button({ actionId: 'approve', text, value, style: 'primary' });
  if (blocked.length === 0) {
    return button({
      actionId: 'approve',
      text,
      value,
      style: 'primary',
      confirm: confirmDialog({
        title:
          irreversible.length === 1
            ? 'Approve an irreversible step?'
            : `Approve ${plural(irreversible.length, 'irreversible step')}?`,
        text: irreversible.join('\n'),
        confirm: 'Approve',
        deny: 'Cancel',
        style: 'danger',
      }),
    });
  }
  const first = blocked[0]!;
  const reason = first.route.kind === 'block' ? first.route.reason : 'blocked';
  const position = input.steps.indexOf(first) + 1;
  const others = blocked.length > 1 ? ` (and ${plural(blocked.length - 1, 'other step')})` : '';
  const title = toolTitle(first, toolOf(input.config, first.tool));
  const cannotBeUndone = irreversible.length === 0 ? '' : ` Irreversible: ${irreversible.join('; ')}.`;
  return button({
    actionId: 'approve',
    text: `${text} (blocked step)`,
    value,
    style: 'primary',
    confirm: confirmDialog({
      title: "This plan can't be approved yet",
      text: `Step ${position} (${first.id}, ${title})${others} is blocked: ${reason}. Your approval of the other steps is recorded, but the plan stays pending until the blocked ${blocked.length === 1 ? 'step is' : 'steps are'} removed with Edit.${cannotBeUndone}`,
      confirm: 'Record my approval',
      deny: 'Cancel',
    }),
  });
}

/**
 * Each irreversible step an approval now would cover (those still waiting for approvals), in words:
 * the tool's own summary of the step, or its title, and "— cannot be undone".
 */
function irreversibleCovered(input: ApproveButtonInput): string[] {
  const awaited = new Set(input.awaiting.map((awaited) => awaited.stepId));
  return input.steps
    .filter((step) => awaited.has(step.id) && isIrreversible(toolOf(input.config, step.tool)))
    .map((step) => `${step.summary ?? toolTitle(step, toolOf(input.config, step.tool))} — cannot be undone`);
}
