/**
 * The input block a field of the edit modal is edited with: an element typed from the field (one
 * builder per input kind), prefilled with the current value, and for money a hint in its currency.
 */
import type { InputBlock, InputBlockElement, KnownBlock } from '@slack/types';
import { CountersignError, formatMoney, moneyToDecimal } from '../src/pipeline/index.ts';
import { formatArgValue } from './arg-fields.ts';
import { context, LIMITS, option, plain } from './blocks.ts';
import { EDIT_IDS, type FieldSlot, type InputKind } from './edit-layout.ts';
import { lengthHint } from './input-messages.ts';
import { clipMrkdwn } from './mrkdwn.ts';

/** One input block per field, or a context line for a value no input can hold. */
export function fieldBlock(slot: FieldSlot, options: { readonly focus?: boolean } = {}): KnownBlock {
  const { field } = slot;
  if (slot.input === 'fixed') {
    return context(
      `*${clipMrkdwn(field.label, 200)}:* ${formatArgValue(field, slot.value)} — _can't be edited here; it is kept as it is_`,
    );
  }
  const money = field.kind === 'money' ? ` (${field.currency ?? 'USD'})` : '';
  const block: InputBlock = {
    type: 'input',
    block_id: slot.blockId,
    label: plain(`${field.label}${money}`, LIMITS.inputLabel),
    element: options.focus === true ? withFocus(inputElement(slot)) : inputElement(slot),
    // Unchecked is an answer for a checkbox, so it never blocks the form.
    optional: field.optional || field.nullable || slot.input === 'checkbox',
  };
  if (field.kind === 'money') return { ...block, hint: plain(moneyHint(field), 2000) };
  if (
    slot.input === 'multiline' &&
    field.maxLength !== undefined &&
    field.maxLength < LIMITS.plainTextInput
  ) {
    return { ...block, hint: plain(lengthHint(field.maxLength), 2000) };
  }
  return block;
}

/** The element with `focus_on_load` (every element the form uses takes it; a file input would not). */
function withFocus(element: InputBlockElement): InputBlockElement {
  return element.type === 'file_input' ? element : { ...element, focus_on_load: true };
}

/** "A decimal amount of at least $0.01, e.g. 1489.00": the bounds in the currency, an example within them. */
function moneyHint(field: FieldSlot['field']): string {
  const currency = field.currency ?? 'USD';
  const { min, max } = field;
  const exampleMinor = Math.min(
    Math.max(148_900, min ?? Number.MIN_SAFE_INTEGER),
    max ?? Number.MAX_SAFE_INTEGER,
  );
  const example = moneyToDecimal(exampleMinor, currency);
  const shown = (minor: number) => formatMoney(minor, currency);
  let range = '';
  if (min !== undefined && max !== undefined) range = ` from ${shown(min)} to ${shown(max)}`;
  else if (min !== undefined) range = ` of at least ${shown(min)}`;
  else if (max !== undefined) range = ` of at most ${shown(max)}`;
  return `A decimal amount${range}, e.g. ${example} or ${formatMoney(exampleMinor, currency)}`;
}

/** The element for a field that has an input (`slot.input` is not `'fixed'`). */
type ElementBuilder = (slot: FieldSlot) => InputBlockElement;

const ELEMENT_BUILDERS: Readonly<Record<Exclude<InputKind, 'fixed'>, ElementBuilder>> = {
  plain_text: textInput,
  multiline: textInput,
  email: emailInput,
  url: urlInput,
  integer: integerInput,
  money: moneyInput,
  select: selectInput,
  date: dateInput,
  datetime: dateTimeInput,
  checkbox: checkboxInput,
};

function inputElement(slot: FieldSlot): InputBlockElement {
  if (slot.input === 'fixed') {
    throw new CountersignError('internal_invariant', `edit modal: field ${slot.blockId} has no input`);
  }
  return ELEMENT_BUILDERS[slot.input](slot);
}

/** The value as text, for inputs that hold text (dates included); undefined when it is not a string. */
function textOf(slot: FieldSlot): string | undefined {
  return typeof slot.value === 'string' ? slot.value : undefined;
}

/**
 * No `max_length` below Slack's own 3000: a browser cuts pasted text at `maxlength` without a word, so
 * the field's limit is checked on submit instead and said at the field with the count (readField).
 */
function textInput(slot: FieldSlot): InputBlockElement {
  const text = textOf(slot);
  return {
    type: 'plain_text_input',
    action_id: EDIT_IDS.input,
    multiline: slot.input === 'multiline',
    ...(text === undefined ? {} : { initial_value: text }),
  };
}

function emailInput(slot: FieldSlot): InputBlockElement {
  const text = textOf(slot);
  return {
    type: 'email_text_input',
    action_id: EDIT_IDS.input,
    ...(text === undefined ? {} : { initial_value: text }),
  };
}

function urlInput(slot: FieldSlot): InputBlockElement {
  const text = textOf(slot);
  return {
    type: 'url_text_input',
    action_id: EDIT_IDS.input,
    ...(text === undefined ? {} : { initial_value: text }),
  };
}

/** A text input too, like money's (below): a number input would drop letters and come back "required". */
function integerInput(slot: FieldSlot): InputBlockElement {
  const { value } = slot;
  return {
    type: 'plain_text_input',
    action_id: EDIT_IDS.input,
    ...(typeof value === 'number' ? { initial_value: String(value) } : {}),
  };
}

/**
 * A text input, not a number_input: a number input drops what is not a number (letters, "$", a
 * decimal comma) before the app sees it, so "1.489,00" or "twelve" came back as an empty field and
 * "required". As text, whatever was typed reaches parseMoneyInput, which says what is wrong in the
 * currency ("1489,50" is not an amount…), and bounds are checked in the currency too (readField).
 */
function moneyInput(slot: FieldSlot): InputBlockElement {
  const { field, value } = slot;
  return {
    type: 'plain_text_input',
    action_id: EDIT_IDS.input,
    ...(typeof value === 'number' ? { initial_value: moneyToDecimal(value, field.currency ?? 'USD') } : {}),
  };
}

function selectInput(slot: FieldSlot): InputBlockElement {
  const text = textOf(slot);
  const options = (slot.field.options ?? []).map((choice) => option(choice, choice));
  const initial = options.find((o) => o.value === text);
  return {
    type: 'static_select',
    action_id: EDIT_IDS.input,
    placeholder: plain('Choose…', 150),
    options,
    ...(initial === undefined ? {} : { initial_option: initial }),
  };
}

function dateInput(slot: FieldSlot): InputBlockElement {
  const text = textOf(slot);
  return {
    type: 'datepicker',
    action_id: EDIT_IDS.input,
    ...(text === undefined ? {} : { initial_date: text }),
  };
}

function dateTimeInput(slot: FieldSlot): InputBlockElement {
  const text = textOf(slot);
  return {
    type: 'datetimepicker',
    action_id: EDIT_IDS.input,
    ...(text === undefined ? {} : { initial_date_time: Math.floor(Date.parse(text) / 1000) }),
  };
}

function checkboxInput(slot: FieldSlot): InputBlockElement {
  const yes = option('Yes', 'true');
  return {
    type: 'checkboxes',
    action_id: EDIT_IDS.input,
    options: [yes],
    ...(slot.value === true ? { initial_options: [yes] } : {}),
  };
}
