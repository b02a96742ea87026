/**
 * Reading Block Kit as a person would see it, for integration tests that assert on what the emulator
 * stored: the text of a message, its buttons, a modal's blocks and select options. (For escaping checks,
 * `mrkdwnTexts` and `unescapedMarkup` in test/views/fixtures.ts.)
 */
import { z } from 'zod';
import { type Block, type BlockActionInput, buttonAction } from '../../src/emulator/index.ts';
import { parseButtonValue } from '../../views/index.ts';

type Json = { readonly [key: string]: unknown };

const isJson = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every text object (`{ type: 'mrkdwn' | 'plain_text', text }`) anywhere in `value`, depth first. */
export function textObjects(value: unknown): { readonly type: string; readonly text: string }[] {
  if (Array.isArray(value)) return value.flatMap(textObjects);
  if (!isJson(value)) return [];
  const own =
    (value.type === 'mrkdwn' || value.type === 'plain_text') && typeof value.text === 'string'
      ? [{ type: value.type, text: value.text }]
      : [];
  return [...own, ...Object.values(value).flatMap(textObjects)];
}

/** All visible text of `blocks`, one text object per line. */
export function visibleText(blocks: readonly Block[]): string {
  return textObjects(blocks)
    .map((text) => text.text)
    .join('\n');
}

/** The text of the section whose text matches `pattern`, or undefined. */
export function sectionMatching(blocks: readonly Block[], pattern: RegExp): string | undefined {
  return blocks
    .filter((block) => block.type === 'section')
    .flatMap((block) => textObjects(block.text))
    .map((text) => text.text)
    .find((text) => pattern.test(text));
}

/** action_ids of the interactive elements, in order (actions blocks and section accessories). */
export function actionIds(blocks: readonly Block[]): string[] {
  return blocks.flatMap((block) =>
    [...(Array.isArray(block.elements) ? block.elements : []), block.accessory].flatMap((element) =>
      isJson(element) && typeof element.action_id === 'string' ? [element.action_id] : [],
    ),
  );
}

/** The per-step button `actionId` (`remove_step`, `revert_step`) whose value names `stepId`. */
export function stepButton(blocks: readonly Block[], actionId: string, stepId: string): BlockActionInput {
  const block = blocks.find((candidate) => {
    const accessory = candidate.accessory;
    if (!isJson(accessory) || accessory.action_id !== actionId || typeof accessory.value !== 'string')
      return false;
    const value = parseButtonValue(accessory.value);
    return value.ok && value.value.stepId === stepId;
  });
  if (block === undefined) throw new Error(`no ${actionId} button for step ${stepId}`);
  return buttonAction([block], actionId);
}

/** block_ids of the blocks, in order. */
export function blockIds(blocks: readonly Block[]): string[] {
  return blocks.flatMap((block) => (typeof block.block_id === 'string' ? [block.block_id] : []));
}

/** Option values of the select `actionId` (flat options or option groups). */
export function selectValues(blocks: readonly Block[], actionId: string): string[] {
  for (const block of blocks) {
    for (const element of Array.isArray(block.elements) ? block.elements : []) {
      if (!isJson(element) || element.action_id !== actionId) continue;
      const groups = Array.isArray(element.option_groups) ? element.option_groups : [];
      const options = [
        ...(Array.isArray(element.options) ? element.options : []),
        ...groups.flatMap((group) => (isJson(group) && Array.isArray(group.options) ? group.options : [])),
      ];
      return options.flatMap((option) =>
        isJson(option) && typeof option.value === 'string' ? [option.value] : [],
      );
    }
  }
  throw new Error(`no select ${JSON.stringify(actionId)} in these blocks`);
}

const viewSubmissionAnswer = z.object({
  response_action: z.enum(['errors', 'update', 'push', 'clear']),
  errors: z.record(z.string(), z.string()).optional(),
  view: z
    .looseObject({
      title: z.object({ text: z.string() }).optional(),
      submit: z.object({ text: z.string() }).optional(),
      blocks: z.array(z.record(z.string(), z.unknown())),
    })
    .optional(),
});

/** The bot's JSON answer to a view_submission (fails the test when it is not one). */
export function submissionAnswer(body: unknown): z.output<typeof viewSubmissionAnswer> {
  return viewSubmissionAnswer.parse(body);
}

/** The run a message is the card of (its metadata says so), or undefined for any other message. */
export function cardRunId(message: {
  readonly metadata?:
    | { readonly event_type: string; readonly event_payload: Record<string, unknown> }
    | undefined;
}): string | undefined {
  if (message.metadata?.event_type !== 'countersign_card') return undefined;
  const runId = message.metadata.event_payload.run_id;
  return typeof runId === 'string' ? runId : undefined;
}
