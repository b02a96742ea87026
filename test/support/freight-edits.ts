/**
 * The freight plan through the Slack surface, as people use it: the agent submits, someone opens
 * Edit on a card, moves the delivery window and/or adds the refund through `add_step`, and saves.
 */
import {
  addedRefundStep,
  freightContext,
  freightSteps,
  freightSummary,
} from '../../examples/freight/plans.ts';
import type { PlanStepInput } from '../../src/client/index.ts';
import {
  type EmulatedMessage,
  type SlackView,
  type StateValue,
  stateValue,
  type ViewStateValues,
} from '../../src/emulator/index.ts';
import { untouchedState } from '../views/fixtures.ts';
import type { BotStack } from './bot-stack.ts';
import { visibleText } from './slack-blocks.ts';

/** The refund of the product brief, as a person types it: in_74119, $1,489.00. */
export const REFUND = { invoiceId: addedRefundStep.args.invoice_id, amount: '1489.00' } as const;

/** The agent submits the 3-step freight plan (plus `extraSteps`); resolves with its run id. */
export async function submitFreight(
  stack: BotStack,
  extraSteps: readonly PlanStepInput[] = [],
): Promise<string> {
  const { runId } = await stack.client.submit({
    summary: freightSummary,
    context: freightContext,
    steps: [...freightSteps.map((step) => ({ ...step, args: { ...step.args } })), ...extraSteps],
    expiresIn: '2h',
  });
  return runId;
}

/**
 * `view.state.values` as Slack sends them on submit: every input with its initial value, except the
 * blocks in `changes`.
 */
export function submittedValues(
  view: SlackView,
  changes: { readonly [blockId: string]: StateValue } = {},
): ViewStateValues {
  return untouchedState(view, { ...changes }) as ViewStateValues;
}

export interface FreightEdit {
  /** New delivery date for step s2 (`YYYY-MM-DD`). */
  readonly window?: string;
  /** Add the refund (chosen in `add_step`, filled in as {@link REFUND}). */
  readonly addRefund?: boolean;
}

/**
 * `userId` clicks Edit on `card`, makes `edit` and saves. Resolves with the modal as it was submitted
 * and the bot's HTTP answer to the submission.
 */
export async function editFreight(
  stack: BotStack,
  userId: string,
  card: EmulatedMessage,
  edit: FreightEdit,
): Promise<{ view: SlackView; answer: { status: number; body: unknown } }> {
  let view = await stack.openModal(userId, card, 'edit');
  const changes: Record<string, StateValue> = {};
  if (edit.window !== undefined) changes['arg:s2:window'] = stateValue.date(edit.window);
  if (edit.addRefund === true) {
    view = await stack.select(userId, view, 'add_step', addedRefundStep.tool);
    changes['arg:s4:invoice_id'] = stateValue.plainText(REFUND.invoiceId);
    changes['arg:s4:amount'] = stateValue.number(REFUND.amount);
  }
  const answer = await stack.submit(userId, view, submittedValues(view, changes));
  return { view, answer };
}

/** Waits until `card` shows `version` (its context line: "… · version 2 · …") and returns it. */
export function cardAtVersion(
  stack: BotStack,
  card: EmulatedMessage,
  version: number,
): Promise<EmulatedMessage> {
  const marker = ` · version ${version} · `;
  return stack.until(() => {
    const message = stack.slack.state.message(card.channel, card.ts);
    return message !== undefined && visibleText(message.blocks).includes(marker) ? message : undefined;
  });
}
