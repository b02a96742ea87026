import type { ModalView } from '@slack/types';
import type { RunStatus, UseCaseResult } from '../src/approvals/types.ts';
import { LIMITS, plain, type SlackMessage, section } from './blocks.ts';
import { clipMrkdwn, escapeMrkdwn, listInWords, mention, plural } from './mrkdwn.ts';
import { awaitingText } from './step-section.ts';
import { formatInstant } from './time.ts';

/** How many diagnostics a notice lists before "…and N more". */
const SHOWN_DIAGNOSTICS = 10;

/**
 * The short message a person gets after acting (an ephemeral reply, or a modal's replacement): every
 * use-case answer has one, so listeners post it without deciding anything. Refusals say why and that
 * nothing changed; stale clicks point to the current version.
 * @example await client.chat.postEphemeral({ channel, user, ...buildNotice(result, { now }) });
 */
export function buildNotice(
  result: UseCaseResult,
  time: { readonly now?: number; readonly tz?: string } = {},
): SlackMessage {
  const lines = noticeLines(result, time);
  return { text: lines[0] ?? '', blocks: [section(lines, 'problem')] };
}

function noticeLines(result: UseCaseResult, time: { readonly now?: number; readonly tz?: string }): string[] {
  switch (result.kind) {
    case 'pending':
      return [`🕓 This plan is still waiting: ${waitingFor(result.run)}.`];
    case 'awaiting': {
      const recorded =
        result.approvedSteps.length > 0
          ? `👍 Your approval of ${stepList(result.approvedSteps)} is recorded.`
          : '👍 You have already approved every step you can approve here.';
      return [`${recorded} Still waiting for ${waitingFor(result.run)}.`];
    }
    case 'approved':
      return ['✅ Approved: the agent has been told it may run the plan.'];
    case 'rejected':
      return ['❌ Rejected: the agent has been told, with your reason. Nothing will be executed.'];
    case 'expired':
      return [
        `⌛ This plan expired at ${formatInstant(Date.parse(result.run.current.plan.expiresAt), time)} — nothing was executed.`,
      ];
    case 'edited':
      return [
        `✏️ Version ${result.run.version} is posted with your changes.${
          result.diff.touchedStepIds.length > 0
            ? ` ${capitalize(stepList(result.diff.touchedStepIds))} ${result.diff.touchedStepIds.length === 1 ? 'needs' : 'need'} approval again.`
            : ''
        }`,
      ];
    case 'escalated':
      return [`⏫ Escalated (level ${result.level}).`];
    case 'reminded':
      return ['⏰ A reminder was posted.'];
    case 'stale':
      return [
        `⏭️ That was an older version of the plan: version ${result.currentVersion} is current — see the newest card in the thread. Nothing was changed.`,
      ];
    case 'already_decided':
      return [`${decided(result.status, result.by)} Nothing was changed.`];
    case 'unauthorized':
      return [`🚫 You can't do that: ${clipMrkdwn(result.reason, 1000)}. Nothing was changed.`];
    case 'invalid': {
      const shown = result.diagnostics.slice(0, SHOWN_DIAGNOSTICS);
      const more = result.diagnostics.length - shown.length;
      return [
        `🚫 The plan failed validation (${result.phase} phase), so nothing was changed:`,
        ...shown.map((diagnostic) => `• ${clipMrkdwn(diagnostic.message, 400)}`),
        ...(more > 0 ? [`…and ${plural(more, 'more problem')}`] : []),
      ];
    }
    case 'duplicate':
      return [`This plan was already submitted as run \`${escapeMrkdwn(result.run.runId)}\`.`];
    case 'run_exists':
      return [`A run \`${escapeMrkdwn(result.runId)}\` already exists; nothing was changed.`];
    case 'not_found':
      // An empty id: the button or form named no run this app could read.
      return [
        result.runId === ''
          ? "I can't tell which plan that was for. Nothing was changed."
          : `I can't find run \`${escapeMrkdwn(result.runId)}\`. Nothing was changed.`,
      ];
    case 'unchanged':
      return [`Nothing changed: your edit matches version ${result.run.version}.`];
  }
}

/** "1 of 2 finance approvals (`s4`)", or what else keeps the run open. */
function waitingFor(run: Extract<UseCaseResult, { kind: 'awaiting' }>['run']): string {
  const parts: string[] = [];
  if (run.awaiting.length > 0) parts.push(awaitingText(run.awaiting));
  if (run.blocked.length > 0) {
    parts.push(`the blocked ${stepList(run.blocked.map((step) => step.id))} to be removed`);
  }
  return parts.length > 0 ? parts.join(', and ') : 'nothing more';
}

/** "step `s2`", "steps `s2` and `s4`". */
function stepList(ids: readonly string[]): string {
  const shown = ids.slice(0, 10).map((id) => `\`${escapeMrkdwn(id)}\``);
  const more = ids.length > shown.length ? [`${ids.length - shown.length} more`] : [];
  return `${ids.length === 1 ? 'step' : 'steps'} ${listInWords([...shown, ...more])}`;
}

/** "This plan was already approved by <@U0OP2>." / "This plan already expired." */
function decided(status: RunStatus, by: string | undefined): string {
  const who = by !== undefined && /^[UW][A-Z0-9]+$/.test(by) ? ` by ${mention(by)}` : '';
  if (status === 'expired') return 'This plan already expired.';
  if (status === 'pending') return 'This plan changed meanwhile.';
  return `This plan was already ${status}${who}.`;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A notice as a modal (no inputs), e.g. to replace an edit form that can no longer be submitted. */
export function buildNoticeModal(notice: SlackMessage, title: string): ModalView {
  return {
    type: 'modal',
    title: plain(title, LIMITS.viewTitle),
    close: plain('Close', LIMITS.viewTitle),
    blocks: notice.blocks,
  };
}

/**
 * When Slack could not open a form within the 3 s it allows after a click (it is rate limiting, or
 * slow): said at once, rather than a form that opens late or never. Nothing changed.
 */
export function buildFormTooLateNotice(form: 'reject' | 'edit' | 'arguments'): SlackMessage {
  const what = form === 'arguments' ? "the step's arguments" : `the ${form} form`;
  const again = { reject: 'Reject', edit: 'Edit', arguments: 'Arguments' }[form];
  const line = `⏳ Slack is busy and did not open ${what} in time. Nothing changed — click ${again} again in a moment.`;
  return { text: line, blocks: [section([line], 'problem')] };
}

/** What a message posted twice by accident becomes: no buttons, a pointer to the one that counts (`ts`). */
export function buildDuplicateNotice(originalTs: string): SlackMessage {
  return {
    text: 'Duplicate of an earlier message — see the original.',
    blocks: [
      {
        type: 'context',
        elements: [
          {
            type: 'mrkdwn',
            text: `_Duplicate — this was posted twice by accident; the message that counts is the earlier one (ts ${originalTs})._`,
          },
        ],
      },
    ],
  };
}
