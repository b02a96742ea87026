import type {
  Button,
  ConfirmationDialog,
  ContextBlock,
  DividerBlock,
  HeaderBlock,
  KnownBlock,
  MrkdwnElement,
  PlainTextElement,
  PlainTextOption,
  SectionBlock,
} from '@slack/types';
import { joinWithinLimit, truncate } from './mrkdwn.ts';

/**
 * Block Kit constructors that hold Slack's limits themselves (header 150, button text 75, section 3000,
 * option text 75, confirm texts), so no builder can produce a block Slack would reject. Text given to
 * `mrkdwn` must already be escaped; `plain` texts are never parsed by Slack.
 */

/** A message for chat.postMessage / chat.update / chat.postEphemeral: fallback text and blocks. */
export interface SlackMessage {
  /** Notification and screen-reader text (mrkdwn, escaped). */
  readonly text: string;
  readonly blocks: KnownBlock[];
}

/** `view.state.values` as Slack sends it: block_id → action_id → element state. */
export type ViewStateValues = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

/** Slack's limits this module enforces, by name. */
export const LIMITS = {
  messageBlocks: 50,
  viewBlocks: 100,
  sectionText: 3000,
  headerText: 150,
  buttonText: 75,
  optionText: 75,
  selectOptions: 100,
  checkboxOptions: 10,
  viewTitle: 24,
  privateMetadata: 3000,
  blockId: 255,
  plainTextInput: 3000,
  inputLabel: 2000,
} as const;

export function plain(text: string, max: number = LIMITS.sectionText): PlainTextElement {
  return { type: 'plain_text', text: truncate(text, max), emoji: true };
}

export function mrkdwn(text: string): MrkdwnElement {
  return { type: 'mrkdwn', text };
}

export function header(text: string): HeaderBlock {
  return { type: 'header', text: plain(text, LIMITS.headerText) };
}

/** A section of escaped mrkdwn lines, cut at Slack's 3000 with "…and N more <noun>". */
export function section(lines: readonly string[], noun = 'line'): SectionBlock {
  const text = joinWithinLimit(
    lines,
    LIMITS.sectionText,
    (left) => `…and ${left} more ${left === 1 ? noun : `${noun}s`}`,
  );
  return { type: 'section', text: mrkdwn(text) };
}

/** A context block of one escaped mrkdwn text. */
export function context(text: string): ContextBlock {
  return { type: 'context', elements: [mrkdwn(truncateEscaped(text, LIMITS.sectionText))] };
}

export function divider(): DividerBlock {
  return { type: 'divider' };
}

export function button(spec: {
  readonly actionId: string;
  readonly text: string;
  readonly value: string;
  readonly style?: 'primary' | 'danger';
  readonly confirm?: ConfirmationDialog;
}): Button {
  return {
    type: 'button',
    action_id: spec.actionId,
    text: plain(spec.text, LIMITS.buttonText),
    value: spec.value,
    ...(spec.style === undefined ? {} : { style: spec.style }),
    ...(spec.confirm === undefined ? {} : { confirm: spec.confirm }),
  };
}

/** A confirmation dialog within Slack's limits (title 100, text 300, buttons 30); `danger` paints its confirm button red. */
export function confirmDialog(spec: {
  readonly title: string;
  readonly text: string;
  readonly confirm: string;
  readonly deny: string;
  readonly style?: 'primary' | 'danger';
}): ConfirmationDialog {
  return {
    title: plain(spec.title, 100),
    text: plain(spec.text, 300),
    confirm: plain(spec.confirm, 30),
    deny: plain(spec.deny, 30),
    ...(spec.style === undefined ? {} : { style: spec.style }),
  };
}

export function option(text: string, value: string): PlainTextOption {
  return { text: plain(text, LIMITS.optionText), value };
}

/**
 * Options for a static select: `options` up to Slack's 100, beyond that `option_groups` of 100 each
 * ("1–100", "101–200").
 */
export function selectOptions(
  options: readonly PlainTextOption[],
):
  | { options: PlainTextOption[] }
  | { option_groups: { label: PlainTextElement; options: PlainTextOption[] }[] } {
  if (options.length <= LIMITS.selectOptions) return { options: [...options] };
  const groups: { label: PlainTextElement; options: PlainTextOption[] }[] = [];
  for (let start = 0; start < options.length; start += LIMITS.selectOptions) {
    const chunk = options.slice(start, start + LIMITS.selectOptions);
    groups.push({ label: plain(`${start + 1}–${start + chunk.length}`, 75), options: chunk });
  }
  return { option_groups: groups };
}

/** Cuts escaped mrkdwn at a line boundary when it is too long, so no entity or mention is split. */
function truncateEscaped(text: string, max: number): string {
  if (text.length <= max) return text;
  return joinWithinLimit(text.split('\n'), max, () => '…');
}
