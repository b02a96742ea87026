/**
 * Block Kit interactive elements as form controls: buttons, selects, checkboxes, radio buttons, date,
 * time and datetime pickers, text, number, email and URL inputs. Each stateful control reads back what
 * it holds in the shape Slack puts in `view.state.values` (slack-protocol/state_values.json); elements
 * in actions blocks (and inputs with `dispatch_action`) report each change as a block action.
 */
import type { BlockActionInput } from '../../interactions.ts';
import type { Block } from '../../slack-objects.ts';
import type { OptionChoice, StateValue } from '../../state-values.ts';
import {
  decorate,
  h,
  type PageDocument,
  type PageElement,
  type PageInputElement,
  type PageSelectElement,
  type PageTextAreaElement,
} from './dom.ts';
import { type Names, plainWords, renderText } from './render-text.ts';

/** A button's `confirm` dialog, in words. */
export interface ConfirmDialog {
  readonly title: string;
  readonly text: string;
  readonly confirm: string;
  readonly deny: string;
  /** `danger`: the confirm button is red, as Slack draws it. */
  readonly style?: 'primary' | 'danger';
}

/** What every control needs from the page. */
export interface ControlEnvironment {
  readonly doc: PageDocument;
  readonly names: Names;
  /** An element was used: a click, or a change of an element that dispatches. */
  readonly onAction: (action: BlockActionInput) => void;
  /** Asks the visitor to confirm; resolves true to go ahead. */
  readonly confirm: (dialog: ConfirmDialog) => Promise<boolean>;
}

/** Where a control sits and what it starts with. */
export interface ControlPlace {
  readonly blockId: string;
  readonly actionId: string;
  /** Report changes as block actions (actions blocks, accessories, inputs with dispatch_action). */
  readonly dispatch: boolean;
  /** The value the view holds for it (`state.values[block][action]`), over the element's initial_*. */
  readonly state: Block | undefined;
  /** For `<label for>`. */
  readonly id: string;
}

/** A rendered element; `read` is there for elements that hold a value. */
export interface Control {
  readonly node: PageElement;
  read?(): StateValue;
  /** True when the visitor has given no value (for required inputs). */
  isEmpty?(): boolean;
}

type Json = { readonly [key: string]: unknown };

const isJson = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const list = (value: unknown): readonly unknown[] => (Array.isArray(value) ? value : []);

/** An option as the element defines it, and as a person picks it. */
interface ElementOption {
  readonly definition: Json;
  readonly choice: OptionChoice;
}

function optionsOf(element: Json): { readonly label?: string; readonly options: ElementOption[] }[] {
  const toOption = (raw: unknown): ElementOption[] => {
    if (!isJson(raw) || typeof raw.value !== 'string') return [];
    return [{ definition: raw, choice: { text: plainWords(raw.text), value: raw.value } }];
  };
  if (Array.isArray(element.option_groups)) {
    return element.option_groups.filter(isJson).map((group) => ({
      label: plainWords(group.label),
      options: list(group.options).flatMap(toOption),
    }));
  }
  return [{ options: list(element.options).flatMap(toOption) }];
}

/** The option as it goes into state values: Slack echoes the option object as defined. */
function echo(option: ElementOption): Json {
  const { text, value, description } = option.definition;
  return { text, value, ...(description === undefined ? {} : { description }) };
}

/** One element as a control. Unknown types show as a note, not as nothing. */
export function renderControl(element: Block, place: ControlPlace, env: ControlEnvironment): Control {
  const type = str(element.type) ?? '';
  const node = (() => {
    switch (type) {
      case 'button':
        return button(element, place, env);
      case 'static_select':
      case 'multi_static_select':
        return select(element, place, env, type === 'multi_static_select');
      case 'overflow':
        return overflow(element, place, env);
      case 'checkboxes':
      case 'radio_buttons':
        return choices(element, place, env, type);
      case 'datepicker':
      case 'timepicker':
      case 'datetimepicker':
        return picker(element, place, env, type);
      case 'plain_text_input':
      case 'number_input':
      case 'email_text_input':
      case 'url_text_input':
        return textInput(element, place, env, type);
      case 'image':
        return {
          node: h(env.doc, 'span', { class: 'image-alt' }, `[image: ${str(element.alt_text) ?? ''}]`),
        };
      default:
        return { node: h(env.doc, 'span', { class: 'unsupported' }, `[unsupported element: ${type}]`) };
    }
  })();
  decorate(node.node, { attrs: { 'data-action-id': place.actionId } });
  return node;
}

function button(element: Json, place: ControlPlace, env: ControlEnvironment): Control {
  const { doc } = env;
  const text = plainWords(element.text);
  const style = element.style === 'primary' || element.style === 'danger' ? element.style : undefined;
  const url = str(element.url);
  const node = decorate(doc.createElement('button'), {
    class: ['btn', style].filter(Boolean).join(' '),
    ...(url === undefined ? {} : { title: url }),
  });
  node.type = 'button';
  node.append(doc.createTextNode(text));
  const value = str(element.value);
  const confirm = confirmOf(element.confirm);
  node.addEventListener('click', () => {
    const act = () =>
      env.onAction({
        type: 'button',
        actionId: place.actionId,
        blockId: place.blockId,
        text,
        ...(value === undefined ? {} : { value }),
        ...(style === undefined ? {} : { style }),
      });
    if (confirm === undefined) act();
    else void env.confirm(confirm).then((yes) => yes && act());
  });
  return { node };
}

function confirmOf(value: unknown): ConfirmDialog | undefined {
  if (!isJson(value)) return undefined;
  return {
    title: plainWords(value.title) || 'Are you sure?',
    text: plainWords(value.text),
    confirm: plainWords(value.confirm) || 'Yes',
    deny: plainWords(value.deny) || 'Cancel',
    ...(value.style === 'danger' || value.style === 'primary' ? { style: value.style } : {}),
  };
}

function select(element: Json, place: ControlPlace, env: ControlEnvironment, multiple: boolean): Control {
  const { doc } = env;
  const node: PageSelectElement = doc.createElement('select');
  node.id = place.id;
  node.multiple = multiple;
  const placeholder = plainWords(element.placeholder);
  const groups = optionsOf(element);
  const all = groups.flatMap((group) => group.options);
  const selected = new Set(
    initialValues(place.state, multiple ? 'selected_options' : 'selected_option') ??
      initialValues(element, multiple ? 'initial_options' : 'initial_option') ??
      [],
  );
  if (!multiple) {
    const none = doc.createElement('option');
    none.value = '';
    none.append(doc.createTextNode(placeholder || 'Choose…'));
    none.selected = selected.size === 0;
    node.append(none);
  } else {
    node.setAttribute('size', String(Math.min(Math.max(all.length, 2), 6)));
  }
  for (const group of groups) {
    const parent = group.label === undefined ? node : h(doc, 'optgroup', { attrs: { label: group.label } });
    for (const option of group.options) {
      const item = doc.createElement('option');
      item.value = option.choice.value;
      item.append(doc.createTextNode(option.choice.text));
      item.selected = selected.has(option.choice.value);
      parent.append(item);
    }
    if (parent !== node) node.append(parent);
  }
  const picked = () => {
    const values = new Set(
      Array.from(node.options)
        .filter((item) => item.selected && item.value !== '')
        .map((item) => item.value),
    );
    return all.filter((option) => values.has(option.choice.value));
  };
  if (place.dispatch) {
    node.addEventListener('change', () => {
      const chosen = picked();
      const hint = placeholder === '' ? {} : { placeholder };
      if (multiple) {
        env.onAction({
          type: 'multi_static_select',
          actionId: place.actionId,
          blockId: place.blockId,
          selectedOptions: chosen.map((option) => option.choice),
          ...hint,
        });
      } else if (chosen[0] !== undefined) {
        env.onAction({
          type: 'static_select',
          actionId: place.actionId,
          blockId: place.blockId,
          selectedOption: chosen[0].choice,
          ...hint,
        });
      }
    });
  }
  return {
    node,
    read: () =>
      multiple
        ? { type: 'multi_static_select', selected_options: picked().map(echo) }
        : { type: 'static_select', selected_option: picked()[0] === undefined ? null : echo(picked()[0]!) },
    isEmpty: () => picked().length === 0,
  };
}

function overflow(element: Json, place: ControlPlace, env: ControlEnvironment): Control {
  const { doc } = env;
  const node = doc.createElement('select');
  node.className = 'overflow';
  node.setAttribute('aria-label', 'More actions');
  const none = doc.createElement('option');
  none.value = '';
  none.append(doc.createTextNode('⋯'));
  node.append(none);
  const options = optionsOf(element).flatMap((group) => group.options);
  for (const option of options) {
    const item = doc.createElement('option');
    item.value = option.choice.value;
    item.append(doc.createTextNode(option.choice.text));
    node.append(item);
  }
  node.addEventListener('change', () => {
    const chosen = options.find((option) => option.choice.value === node.value);
    node.value = '';
    if (chosen !== undefined) {
      env.onAction({
        type: 'overflow',
        actionId: place.actionId,
        blockId: place.blockId,
        selectedOption: chosen.choice,
      });
    }
  });
  return { node };
}

function choices(
  element: Json,
  place: ControlPlace,
  env: ControlEnvironment,
  type: 'checkboxes' | 'radio_buttons',
): Control {
  const { doc } = env;
  const multiple = type === 'checkboxes';
  const node = h(doc, 'div', {
    class: 'choices',
    attrs: { role: multiple ? 'group' : 'radiogroup', id: place.id },
  });
  const options = optionsOf(element).flatMap((group) => group.options);
  const selected = new Set(
    initialValues(place.state, multiple ? 'selected_options' : 'selected_option') ??
      initialValues(element, multiple ? 'initial_options' : 'initial_option') ??
      [],
  );
  const boxes = options.map((option, index) => {
    const box: PageInputElement = doc.createElement('input');
    box.type = multiple ? 'checkbox' : 'radio';
    box.name = place.id;
    box.id = `${place.id}-${index}`;
    box.value = option.choice.value;
    box.checked = selected.has(option.choice.value);
    const description = option.definition.description;
    node.append(
      h(
        doc,
        'label',
        { class: 'choice', attrs: { for: box.id } },
        box,
        renderText(doc, option.definition.text, env.names),
        description === undefined
          ? undefined
          : renderText(doc, description, env.names, { class: 'description' }),
      ),
    );
    return { box, option };
  });
  const picked = () => boxes.filter(({ box }) => box.checked).map(({ option }) => option);
  if (place.dispatch) {
    for (const { box } of boxes) {
      box.addEventListener('change', () => {
        if (multiple) {
          env.onAction({
            type: 'checkboxes',
            actionId: place.actionId,
            blockId: place.blockId,
            selectedOptions: picked().map((option) => option.choice),
          });
        } else if (picked()[0] !== undefined) {
          env.onAction({
            type: 'radio_buttons',
            actionId: place.actionId,
            blockId: place.blockId,
            selectedOption: picked()[0]!.choice,
          });
        }
      });
    }
  }
  return {
    node,
    read: () =>
      multiple
        ? { type: 'checkboxes', selected_options: picked().map(echo) }
        : { type: 'radio_buttons', selected_option: picked()[0] === undefined ? null : echo(picked()[0]!) },
    isEmpty: () => picked().length === 0,
  };
}

function picker(
  element: Json,
  place: ControlPlace,
  env: ControlEnvironment,
  type: 'datepicker' | 'timepicker' | 'datetimepicker',
): Control {
  const node: PageInputElement = env.doc.createElement('input');
  node.id = place.id;
  const state = place.state;
  switch (type) {
    case 'datepicker':
      node.type = 'date';
      node.value = str(state?.selected_date) ?? str(element.initial_date) ?? '';
      break;
    case 'timepicker':
      node.type = 'time';
      node.value = str(state?.selected_time) ?? str(element.initial_time) ?? '';
      break;
    case 'datetimepicker': {
      node.type = 'datetime-local';
      const seconds = state?.selected_date_time ?? element.initial_date_time;
      node.value = typeof seconds === 'number' ? toLocalDateTime(seconds) : '';
      break;
    }
  }
  const read = (): StateValue => {
    const value = node.value === '' ? null : node.value;
    if (type === 'datepicker') return { type, selected_date: value };
    if (type === 'timepicker') return { type, selected_time: value };
    return { type, selected_date_time: value === null ? null : fromLocalDateTime(value) };
  };
  if (place.dispatch) {
    node.addEventListener('change', () => {
      if (node.value === '') return;
      const { actionId, blockId } = place;
      if (type === 'datepicker') env.onAction({ type, actionId, blockId, selectedDate: node.value });
      else if (type === 'timepicker') env.onAction({ type, actionId, blockId, selectedTime: node.value });
      else env.onAction({ type, actionId, blockId, selectedDateTime: fromLocalDateTime(node.value) });
    });
  }
  return { node, read, isEmpty: () => node.value === '' };
}

const INPUT_TYPES = {
  plain_text_input: 'text',
  number_input: 'number',
  email_text_input: 'email',
  url_text_input: 'url',
} as const;

function textInput(
  element: Json,
  place: ControlPlace,
  env: ControlEnvironment,
  type: keyof typeof INPUT_TYPES,
): Control {
  const { doc } = env;
  const initial = place.state === undefined ? str(element.initial_value) : str(place.state.value);
  const placeholder = plainWords(element.placeholder);
  const multiline = type === 'plain_text_input' && element.multiline === true;
  let field: PageInputElement | PageTextAreaElement;
  if (multiline) {
    const area = doc.createElement('textarea');
    area.rows = 4;
    field = area;
  } else {
    const input = doc.createElement('input');
    input.type = INPUT_TYPES[type];
    field = input;
  }
  field.id = place.id;
  field.value = initial ?? '';
  if (placeholder !== '') field.setAttribute('placeholder', placeholder);
  if (typeof element.max_length === 'number') field.setAttribute('maxlength', String(element.max_length));
  if (type === 'number_input') {
    field.setAttribute('step', element.is_decimal_allowed === true ? 'any' : '1');
    if (typeof element.min_value === 'string') field.setAttribute('min', element.min_value);
    if (typeof element.max_value === 'string') field.setAttribute('max', element.max_value);
  }
  return {
    node: field,
    read: () => ({ type, value: field.value === '' ? null : field.value }),
    isEmpty: () => field.value.trim() === '',
  };
}

/** The option values a state value or an element's initial_* names. */
function initialValues(source: Json | undefined, key: string): string[] | undefined {
  const value = source?.[key];
  if (value === undefined) return undefined;
  if (value === null) return [];
  const options = Array.isArray(value) ? value : [value];
  return options.flatMap((option) =>
    isJson(option) && typeof option.value === 'string' ? [option.value] : [],
  );
}

/** Unix seconds → `YYYY-MM-DDTHH:mm` in the browser's time zone. */
export function toLocalDateTime(seconds: number): string {
  const date = new Date(seconds * 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** `YYYY-MM-DDTHH:mm` in the browser's time zone → Unix seconds. */
export function fromLocalDateTime(value: string): number {
  return Math.floor(new Date(value).getTime() / 1000);
}
