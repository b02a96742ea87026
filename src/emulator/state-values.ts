/**
 * `view.state.values` entries, one builder per input element type, shaped like
 * test/fixtures/slack-protocol/state_values.json. An empty field gives `null` (or `[]` for multi-selects).
 *
 * @example
 * inputValues({ 'arg:s4:amount': stateValue.number('1489.00'), remove_steps: stateValue.checkboxes([]) })
 * // { 'arg:s4:amount': { input: { type: 'number_input', value: '1489.00' } }, remove_steps: { input: … } }
 */
import type { ViewStateValues } from './slack-objects.ts';

/** An option as a person picks it: what they saw and the value it carries. */
export interface OptionChoice {
  readonly text: string;
  readonly value: string;
}

/** One element's value in `view.state.values[block_id][action_id]`. */
export type StateValue = { readonly type: string; readonly [field: string]: unknown };

const selectOption = (option: OptionChoice) => ({
  text: { type: 'plain_text', text: option.text, emoji: true },
  value: option.value,
});
const checkOption = (option: OptionChoice) => ({
  text: { type: 'plain_text', text: option.text },
  value: option.value,
});

/** Builders for each input element's state value. */
export const stateValue = {
  plainText: (value: string | null): StateValue => ({ type: 'plain_text_input', value }),
  /** Slack sends number_input values as strings ("1489.00"). */
  number: (value: string | null): StateValue => ({ type: 'number_input', value }),
  email: (value: string | null): StateValue => ({ type: 'email_text_input', value }),
  url: (value: string | null): StateValue => ({ type: 'url_text_input', value }),
  /** `YYYY-MM-DD` */
  date: (date: string | null): StateValue => ({ type: 'datepicker', selected_date: date }),
  /** `HH:mm` */
  time: (time: string | null): StateValue => ({ type: 'timepicker', selected_time: time }),
  /** Unix seconds. */
  dateTime: (unixSeconds: number | null): StateValue => ({
    type: 'datetimepicker',
    selected_date_time: unixSeconds,
  }),
  staticSelect: (option: OptionChoice | null): StateValue => ({
    type: 'static_select',
    selected_option: option ? selectOption(option) : null,
  }),
  radioButtons: (option: OptionChoice | null): StateValue => ({
    type: 'radio_buttons',
    selected_option: option ? checkOption(option) : null,
  }),
  checkboxes: (options: readonly OptionChoice[]): StateValue => ({
    type: 'checkboxes',
    selected_options: options.map(checkOption),
  }),
  multiStaticSelect: (options: readonly OptionChoice[]): StateValue => ({
    type: 'multi_static_select',
    selected_options: options.map(selectOption),
  }),
} as const;

/**
 * `view.state.values` for blocks that each hold one element with the same action_id (`input` by default,
 * the convention of Countersign's edit modal, docs/architecture.md §9).
 */
export function inputValues(
  byBlockId: { readonly [blockId: string]: StateValue },
  actionId = 'input',
): ViewStateValues {
  return Object.fromEntries(
    Object.entries(byBlockId).map(([blockId, value]) => [blockId, { [actionId]: value }]),
  );
}

type ElementLike = {
  readonly type?: unknown;
  readonly action_id?: unknown;
  readonly [field: string]: unknown;
};

/**
 * What Slack puts in `view.state.values` before anyone types: every input block's element with its
 * initial value, or empty (`null`, `[]` for multi-selections) when it has none. Slack sends these for
 * untouched inputs in `view_submission` and in `block_actions` from a modal; an input block without a
 * `block_id` gets one from Slack, which this stand-in cannot know, so it is left out.
 */
export function initialStateValues(blocks: readonly unknown[]): ViewStateValues {
  const values: Record<string, Record<string, StateValue>> = {};
  for (const block of blocks) {
    if (typeof block !== 'object' || block === null) continue;
    const {
      type,
      block_id: blockId,
      element,
    } = block as { type?: unknown; block_id?: unknown; element?: unknown };
    if (type !== 'input' || typeof blockId !== 'string' || typeof element !== 'object' || element === null)
      continue;
    const el = element as ElementLike;
    if (typeof el.action_id !== 'string') continue;
    const value = initialValueOf(el);
    if (value !== undefined) values[blockId] = { [el.action_id]: value };
  }
  return values;
}

function initialValueOf(element: ElementLike): StateValue | undefined {
  const option = (field: string) => (element[field] as OptionChoiceJson | undefined) ?? null;
  const options = (field: string) => (element[field] as OptionChoiceJson[] | undefined) ?? [];
  const text = (field: string) => (typeof element[field] === 'string' ? (element[field] as string) : null);
  switch (element.type) {
    case 'plain_text_input':
    case 'number_input':
    case 'email_text_input':
    case 'url_text_input':
      return { type: element.type, value: text('initial_value') };
    case 'datepicker':
      return { type: element.type, selected_date: text('initial_date') };
    case 'timepicker':
      return { type: element.type, selected_time: text('initial_time') };
    case 'datetimepicker':
      return {
        type: element.type,
        selected_date_time: typeof element.initial_date_time === 'number' ? element.initial_date_time : null,
      };
    case 'static_select':
    case 'radio_buttons':
      return { type: element.type, selected_option: option('initial_option') };
    case 'checkboxes':
    case 'multi_static_select':
      return { type: element.type, selected_options: options('initial_options') };
    default:
      return undefined;
  }
}

/** An option as it appears in a view's JSON (`{ text: { type, text }, value }`). */
type OptionChoiceJson = { readonly text: unknown; readonly value: string };

/**
 * `base` with `over` laid on top, action by action within each block (the later value of an element
 * wins; elements the later one does not name keep theirs).
 */
export function mergeStateValues(base: ViewStateValues, over: ViewStateValues): ViewStateValues {
  const merged: Record<string, ViewStateValues[string]> = { ...base };
  for (const [blockId, actions] of Object.entries(over)) merged[blockId] = { ...merged[blockId], ...actions };
  return merged;
}
