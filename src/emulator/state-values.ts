/**
 * `view.state.values` entries, one builder per input element type, shaped like
 * /work/shared/slack-protocol/state_values.json. An empty field gives `null` (or `[]` for multi-selects).
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
 * the convention of Countersign's edit modal, DESIGN.md §9).
 */
export function inputValues(
  byBlockId: { readonly [blockId: string]: StateValue },
  actionId = 'input',
): ViewStateValues {
  return Object.fromEntries(
    Object.entries(byBlockId).map(([blockId, value]) => [blockId, { [actionId]: value }]),
  );
}
