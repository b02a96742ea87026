/**
 * Block Kit limits, checked the way Slack checks them: each problem becomes a message in Slack's own
 * words and JSON pointer (`must be less than 51 items [json-pointer:/blocks]`). Pure: no I/O, no state.
 *
 * The emulator answers chat.* with `invalid_blocks` + `errors` and views.* with `invalid_arguments` +
 * `response_metadata.messages`, as Slack does. Builders' tests use it directly:
 *
 * @example
 * expect(checkMessageBlocks(buildCard(plan).blocks)).toEqual([]);
 * expect(checkView(buildEditModal(plan))).toEqual([]);
 *
 * Lengths are JavaScript string lengths (UTF-16 code units), never fewer than the characters Slack counts.
 * The rule table is in README.md.
 */

/** Every limit, by name (characters for text, items for arrays). */
export const BLOCK_KIT_LIMITS = {
  messageBlocks: 50,
  viewBlocks: 100,
  blockId: 255,
  actionId: 255,
  sectionText: 3000,
  sectionFields: 10,
  sectionFieldText: 2000,
  headerText: 150,
  markdownText: 12000,
  contextElements: 10,
  actionsElements: 25,
  inputLabel: 2000,
  inputHint: 2000,
  imageAltText: 2000,
  url: 3000,
  buttonText: 75,
  buttonValue: 2000,
  placeholder: 150,
  plainTextInputLength: 3000,
  optionText: 75,
  optionValue: 150,
  optionDescription: 75,
  selectOptions: 100,
  optionGroups: 100,
  optionGroupLabel: 75,
  checkboxOptions: 10,
  radioOptions: 10,
  overflowOptions: 5,
  confirmTitle: 100,
  confirmText: 300,
  confirmButton: 30,
  viewTitle: 24,
  viewSubmit: 24,
  viewClose: 24,
  privateMetadata: 3000,
  callbackId: 255,
  externalId: 255,
} as const;

/** A named limit, or one of the structural rules. */
export type BlockKitRule =
  | keyof typeof BLOCK_KIT_LIMITS
  | 'requiredField'
  | 'wrongType'
  | 'unknownType'
  | 'emptyText'
  | 'duplicateBlockId'
  | 'duplicateActionId'
  | 'sectionEmpty'
  | 'submitRequired';

/** One problem. `message` is what Slack would say, pointer included. */
export interface BlockKitViolation {
  readonly rule: BlockKitRule;
  /** JSON pointer into the API arguments, e.g. `/blocks/3/text/text` or `/view/title/text`. */
  readonly pointer: string;
  readonly message: string;
}

/** Check a message's `blocks` (chat.postMessage, chat.update, chat.postEphemeral). */
export function checkMessageBlocks(blocks: unknown, pointer = '/blocks'): readonly BlockKitViolation[] {
  const out = new Violations();
  checkBlockList(out, blocks, pointer, 'messageBlocks');
  return out.list;
}

/** Check a modal or Home tab view (views.open/push/update/publish), pointers under `/view`. */
export function checkView(view: unknown, pointer = '/view'): readonly BlockKitViolation[] {
  const out = new Violations();
  if (!isRecord(view)) {
    out.add('wrongType', pointer, 'must be an object');
    return out.list;
  }
  const type = view.type;
  if (type !== 'modal' && type !== 'home') {
    out.add('wrongType', `${pointer}/type`, 'must be one of: modal, home');
    return out.list;
  }
  if (type === 'modal') {
    checkText(out, view.title, `${pointer}/title`, { max: 'viewTitle', plainOnly: true, required: true });
    checkText(out, view.submit, `${pointer}/submit`, { max: 'viewSubmit', plainOnly: true });
    checkText(out, view.close, `${pointer}/close`, { max: 'viewClose', plainOnly: true });
  }
  checkString(out, view.private_metadata, `${pointer}/private_metadata`, 'privateMetadata');
  checkString(out, view.callback_id, `${pointer}/callback_id`, 'callbackId');
  checkString(out, view.external_id, `${pointer}/external_id`, 'externalId');
  checkBlockList(out, view.blocks, `${pointer}/blocks`, 'viewBlocks');
  const hasInput =
    Array.isArray(view.blocks) && view.blocks.some((block) => isRecord(block) && block.type === 'input');
  if (type === 'modal' && hasInput && view.submit === undefined) {
    out.add(
      'submitRequired',
      `${pointer}/submit`,
      'missing required field: submit (required when blocks hold an input)',
    );
  }
  return out.list;
}

// --- internals ---------------------------------------------------------------------------------------

type Limit = keyof typeof BLOCK_KIT_LIMITS;
type Json = { readonly [key: string]: unknown };

class Violations {
  readonly list: BlockKitViolation[] = [];
  add(rule: BlockKitRule, pointer: string, detail: string): void {
    this.list.push({ rule, pointer, message: `${detail} [json-pointer:${pointer}]` });
  }
  tooLong(limit: Limit, pointer: string): void {
    this.add(limit, pointer, `must be less than ${BLOCK_KIT_LIMITS[limit] + 1} characters`);
  }
  tooMany(limit: Limit, pointer: string): void {
    this.add(limit, pointer, `must be less than ${BLOCK_KIT_LIMITS[limit] + 1} items`);
  }
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const BLOCK_TYPES = new Set([
  'actions',
  'context',
  'divider',
  'file',
  'header',
  'image',
  'input',
  'markdown',
  'rich_text',
  'section',
  'video',
]);

const ELEMENT_TYPES = new Set([
  'button',
  'channels_select',
  'checkboxes',
  'conversations_select',
  'datepicker',
  'datetimepicker',
  'email_text_input',
  'external_select',
  'file_input',
  'image',
  'multi_channels_select',
  'multi_conversations_select',
  'multi_external_select',
  'multi_static_select',
  'multi_users_select',
  'number_input',
  'overflow',
  'plain_text_input',
  'radio_buttons',
  'rich_text_input',
  'static_select',
  'timepicker',
  'url_text_input',
  'users_select',
  'workflow_button',
]);

function checkBlockList(out: Violations, blocks: unknown, pointer: string, max: Limit): void {
  if (blocks === undefined) return;
  if (!Array.isArray(blocks)) {
    out.add('wrongType', pointer, 'must be an array');
    return;
  }
  if (blocks.length > BLOCK_KIT_LIMITS[max]) out.tooMany(max, pointer);
  const seen = new Set<string>();
  blocks.forEach((block: unknown, index) => {
    const at = `${pointer}/${index}`;
    if (!isRecord(block)) {
      out.add('wrongType', at, 'must be an object');
      return;
    }
    if (typeof block.block_id === 'string') {
      if (seen.has(block.block_id)) out.add('duplicateBlockId', `${at}/block_id`, 'block_id must be unique');
      seen.add(block.block_id);
    }
    checkBlock(out, block, at);
  });
}

function checkBlock(out: Violations, block: Json, at: string): void {
  checkString(out, block.block_id, `${at}/block_id`, 'blockId', { nonEmpty: true });
  const type = block.type;
  if (typeof type !== 'string' || !BLOCK_TYPES.has(type)) {
    out.add(
      'unknownType',
      `${at}/type`,
      `failed to match all allowed schemas (unknown block type ${JSON.stringify(type)})`,
    );
    return;
  }
  const actionIds = new Set<string>();
  switch (type) {
    case 'section':
      checkText(out, block.text, `${at}/text`, { max: 'sectionText' });
      if (block.fields !== undefined) {
        checkArray(out, block.fields, `${at}/fields`, 'sectionFields', (field, fieldAt) =>
          checkText(out, field, fieldAt, { max: 'sectionFieldText', required: true }),
        );
      }
      if (block.text === undefined && block.fields === undefined) {
        out.add('sectionEmpty', at, 'must provide text or fields');
      }
      if (block.accessory !== undefined) checkElement(out, block.accessory, `${at}/accessory`, actionIds);
      return;
    case 'header':
      checkText(out, block.text, `${at}/text`, { max: 'headerText', plainOnly: true, required: true });
      return;
    case 'markdown':
      checkString(out, block.text, `${at}/text`, 'markdownText', { required: true, nonEmpty: true });
      return;
    case 'actions':
      checkArray(out, block.elements, `${at}/elements`, 'actionsElements', (element, elementAt) =>
        checkElement(out, element, elementAt, actionIds),
      );
      return;
    case 'context':
      checkArray(out, block.elements, `${at}/elements`, 'contextElements', (element, elementAt) => {
        if (isRecord(element) && (element.type === 'plain_text' || element.type === 'mrkdwn')) {
          checkText(out, element, elementAt, { max: 'sectionText' });
        } else {
          checkElement(out, element, elementAt, actionIds);
        }
      });
      return;
    case 'input':
      checkText(out, block.label, `${at}/label`, { max: 'inputLabel', plainOnly: true, required: true });
      checkText(out, block.hint, `${at}/hint`, { max: 'inputHint', plainOnly: true });
      if (block.element === undefined)
        out.add('requiredField', `${at}/element`, 'missing required field: element');
      else checkElement(out, block.element, `${at}/element`, actionIds);
      return;
    case 'image':
      checkString(out, block.image_url, `${at}/image_url`, 'url');
      checkString(out, block.alt_text, `${at}/alt_text`, 'imageAltText', { required: true });
      checkText(out, block.title, `${at}/title`, { max: 'imageAltText', plainOnly: true });
      return;
    default:
      // divider, file, rich_text, video: nothing the bot is likely to overflow.
      return;
  }
}

function checkElement(out: Violations, element: unknown, at: string, actionIds: Set<string>): void {
  if (!isRecord(element)) {
    out.add('wrongType', at, 'must be an object');
    return;
  }
  const type = element.type;
  if (typeof type !== 'string' || !ELEMENT_TYPES.has(type)) {
    out.add(
      'unknownType',
      `${at}/type`,
      `failed to match all allowed schemas (unknown element type ${JSON.stringify(type)})`,
    );
    return;
  }
  if (typeof element.action_id === 'string') {
    if (actionIds.has(element.action_id)) {
      out.add('duplicateActionId', `${at}/action_id`, 'action_id must be unique within its block');
    }
    actionIds.add(element.action_id);
  }
  checkString(out, element.action_id, `${at}/action_id`, 'actionId', { nonEmpty: true });
  checkText(out, element.placeholder, `${at}/placeholder`, { max: 'placeholder', plainOnly: true });
  if (element.confirm !== undefined) checkConfirm(out, element.confirm, `${at}/confirm`);
  switch (type) {
    case 'button':
      checkText(out, element.text, `${at}/text`, { max: 'buttonText', plainOnly: true, required: true });
      checkString(out, element.value, `${at}/value`, 'buttonValue');
      checkString(out, element.url, `${at}/url`, 'url');
      return;
    case 'static_select':
    case 'multi_static_select':
      if (element.option_groups !== undefined) {
        checkArray(out, element.option_groups, `${at}/option_groups`, 'optionGroups', (group, groupAt) => {
          if (!isRecord(group)) {
            out.add('wrongType', groupAt, 'must be an object');
            return;
          }
          checkText(out, group.label, `${groupAt}/label`, {
            max: 'optionGroupLabel',
            plainOnly: true,
            required: true,
          });
          checkOptions(out, group.options, `${groupAt}/options`, 'selectOptions', true);
        });
      } else {
        checkOptions(out, element.options, `${at}/options`, 'selectOptions', true);
      }
      return;
    case 'overflow':
      checkOptions(out, element.options, `${at}/options`, 'overflowOptions', true);
      return;
    case 'checkboxes':
      checkOptions(out, element.options, `${at}/options`, 'checkboxOptions', false);
      return;
    case 'radio_buttons':
      checkOptions(out, element.options, `${at}/options`, 'radioOptions', false);
      return;
    case 'plain_text_input':
      checkNumberAtMost(out, element.max_length, `${at}/max_length`, 'plainTextInputLength');
      checkNumberAtMost(out, element.min_length, `${at}/min_length`, 'plainTextInputLength');
      checkString(out, element.initial_value, `${at}/initial_value`, 'plainTextInputLength');
      return;
    case 'image':
      checkString(out, element.alt_text, `${at}/alt_text`, 'imageAltText', { required: true });
      checkString(out, element.image_url, `${at}/image_url`, 'url');
      return;
    default:
      return;
  }
}

function checkOptions(out: Violations, options: unknown, at: string, max: Limit, plainOnly: boolean): void {
  checkArray(out, options, at, max, (option, optionAt) => {
    if (!isRecord(option)) {
      out.add('wrongType', optionAt, 'must be an object');
      return;
    }
    checkText(out, option.text, `${optionAt}/text`, { max: 'optionText', plainOnly, required: true });
    checkString(out, option.value, `${optionAt}/value`, 'optionValue', { required: true });
    checkText(out, option.description, `${optionAt}/description`, { max: 'optionDescription', plainOnly });
    checkString(out, option.url, `${optionAt}/url`, 'url');
  });
}

function checkConfirm(out: Violations, confirm: unknown, at: string): void {
  if (!isRecord(confirm)) {
    out.add('wrongType', at, 'must be an object');
    return;
  }
  checkText(out, confirm.title, `${at}/title`, { max: 'confirmTitle', plainOnly: true, required: true });
  checkText(out, confirm.text, `${at}/text`, { max: 'confirmText', required: true });
  checkText(out, confirm.confirm, `${at}/confirm`, { max: 'confirmButton', plainOnly: true, required: true });
  checkText(out, confirm.deny, `${at}/deny`, { max: 'confirmButton', plainOnly: true, required: true });
}

/** An array of at most `max` items (at least one), each checked by `each`. */
function checkArray(
  out: Violations,
  items: unknown,
  at: string,
  max: Limit,
  each: (item: unknown, itemAt: string) => void,
): void {
  if (items === undefined) {
    out.add('requiredField', at, 'missing required field');
    return;
  }
  if (!Array.isArray(items)) {
    out.add('wrongType', at, 'must be an array');
    return;
  }
  if (items.length === 0) out.add('requiredField', at, 'must provide at least 1 item');
  if (items.length > BLOCK_KIT_LIMITS[max]) out.tooMany(max, at);
  for (const [index, item] of items.entries()) each(item, `${at}/${index}`);
}

/** A text object `{ type: 'plain_text' | 'mrkdwn', text }` whose text is 1..max characters. */
function checkText(
  out: Violations,
  value: unknown,
  at: string,
  rule: { readonly max: Limit; readonly plainOnly?: boolean; readonly required?: boolean },
): void {
  if (value === undefined) {
    if (rule.required) out.add('requiredField', at, 'missing required field');
    return;
  }
  if (!isRecord(value)) {
    out.add('wrongType', at, 'must be a text object');
    return;
  }
  const allowed = rule.plainOnly ? ['plain_text'] : ['plain_text', 'mrkdwn'];
  if (typeof value.type !== 'string' || !allowed.includes(value.type)) {
    out.add('wrongType', `${at}/type`, `must be one of: ${allowed.join(', ')}`);
  }
  checkString(out, value.text, `${at}/text`, rule.max, { required: true, nonEmpty: true });
}

function checkString(
  out: Violations,
  value: unknown,
  at: string,
  max: Limit,
  rule: { readonly required?: boolean; readonly nonEmpty?: boolean } = {},
): void {
  if (value === undefined) {
    if (rule.required) out.add('requiredField', at, 'missing required field');
    return;
  }
  if (typeof value !== 'string') {
    out.add('wrongType', at, 'must be a string');
    return;
  }
  if (rule.nonEmpty && value.length === 0) out.add('emptyText', at, 'must be more than 0 characters');
  if (value.length > BLOCK_KIT_LIMITS[max]) out.tooLong(max, at);
}

function checkNumberAtMost(out: Violations, value: unknown, at: string, max: Limit): void {
  if (typeof value === 'number' && value > BLOCK_KIT_LIMITS[max]) {
    out.add(max, at, `must be less than or equal to ${BLOCK_KIT_LIMITS[max]}`);
  }
}
