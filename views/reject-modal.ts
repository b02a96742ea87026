import type { ModalView } from '@slack/types';
import { context, LIMITS, plain, type ViewStateValues } from './blocks.ts';
import { encodeButtonValue, parseButtonValue } from './button-value.ts';
import { lengthHint, tooLongMessage } from './input-messages.ts';
import { escapeMrkdwn } from './mrkdwn.ts';

/** The ids of the reject modal (docs/architecture.md §9). */
export const REJECT_IDS = { callbackId: 'reject_plan', reason: 'reason', input: 'input' } as const;

/** Longest reason accepted: it travels to the agent inside the signed decision. */
export const REJECT_REASON_MAX = 2000;

/**
 * The reject modal, callback_id `reject_plan`: a required multi-line reason (block `reason`, element
 * `input`), sent back to the agent in the decision; private_metadata carries run and version.
 * @example await client.views.open({ trigger_id, view: buildRejectModal({ runId, version: 2, agent }) });
 */
export function buildRejectModal(input: {
  readonly runId: string;
  readonly version: number;
  readonly agent?: string;
}): ModalView {
  const from = input.agent === undefined ? '' : ` from ${escapeMrkdwn(input.agent)}`;
  return {
    type: 'modal',
    callback_id: REJECT_IDS.callbackId,
    title: plain('Reject plan', LIMITS.viewTitle),
    submit: plain('Reject', LIMITS.viewTitle),
    close: plain('Cancel', LIMITS.viewTitle),
    private_metadata: encodeButtonValue({ runId: input.runId, version: input.version }),
    blocks: [
      context(
        `You are rejecting version ${input.version} of the plan${from} (run \`${escapeMrkdwn(input.runId)}\`). Nothing in it will be executed, and the agent receives your reason.`,
      ),
      {
        type: 'input',
        block_id: REJECT_IDS.reason,
        label: plain('Why are you rejecting it?', LIMITS.inputLabel),
        element: {
          type: 'plain_text_input',
          action_id: REJECT_IDS.input,
          multiline: true,
          min_length: 1,
          // No max_length: a browser cuts pasted text there without a word. Checked on submit instead.
          placeholder: plain('e.g. The refund goes to the wrong account.', 150),
        },
        hint: plain(lengthHint(REJECT_REASON_MAX), 2000),
      },
    ],
  };
}

export type RejectSubmission =
  | { readonly ok: true; readonly runId: string; readonly version: number; readonly reason: string }
  | { readonly ok: false; readonly errors: Readonly<Record<string, string>> };

/** Reads the reject modal's submission: the run, the version rejected and the reason (trimmed, required). */
export function readRejectSubmission(input: {
  readonly stateValues: ViewStateValues;
  readonly privateMetadata: string;
}): RejectSubmission {
  const target = parseButtonValue(input.privateMetadata);
  if (!target.ok) {
    return {
      ok: false,
      errors: {
        [REJECT_IDS.reason]: 'This form is out of date: close it and click Reject on the card again.',
      },
    };
  }
  const state = input.stateValues[REJECT_IDS.reason]?.[REJECT_IDS.input];
  const typed =
    typeof state === 'object' && state !== null && 'value' in state && typeof state.value === 'string'
      ? state.value
      : '';
  const reason = typed.trim();
  if (reason === '')
    return {
      ok: false,
      errors: { [REJECT_IDS.reason]: 'Say why, so the agent (and its developers) can learn from it.' },
    };
  if (reason.length > REJECT_REASON_MAX) {
    return { ok: false, errors: { [REJECT_IDS.reason]: tooLongMessage(reason.length, REJECT_REASON_MAX) } };
  }
  return { ok: true, runId: target.value.runId, version: target.value.version, reason };
}
