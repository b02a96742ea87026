/**
 * Block Kit blocks as DOM, the way Slack lays them out: header, section (text, fields, accessory),
 * divider, context, actions, input (label, element, hint, the app's error under it), image (its alt
 * text: the page fetches nothing), rich_text and markdown as text. Text goes through render-text.ts, so
 * nothing the app sent is parsed as HTML.
 */
import type { Block, ViewStateValues } from '../../slack-objects.ts';
import type { StateValue } from '../../state-values.ts';
import { type Control, type ControlEnvironment, renderControl } from './controls.ts';
import { h, type PageElement } from './dom.ts';
import { plainWords, renderText } from './render-text.ts';

/** How to render one set of blocks (a message, a modal, a Home tab). */
export interface RenderOptions extends ControlEnvironment {
  /** The view's current values (`state.values`), over the elements' initial values. */
  readonly values?: ViewStateValues;
  /** The app's errors under input blocks, by block id. */
  readonly errors?: Readonly<Record<string, string>>;
  /** Makes element ids unique on the page (labels point at inputs by id). */
  readonly idPrefix: string;
}

/** Rendered blocks and what their controls hold. */
export interface RenderedBlocks {
  readonly element: PageElement;
  /** Every stateful element's value, as `view.state.values[block_id][action_id]`. */
  readState(): ViewStateValues;
  /** Required inputs left empty, by block id, with Slack's words for it. */
  missingRequired(): Record<string, string>;
  /** The first element marked `focus_on_load` (Slack puts the cursor there when the view opens). */
  readonly focusOnLoad: PageElement | undefined;
}

type Json = { readonly [key: string]: unknown };
const isJson = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

interface Registered {
  readonly blockId: string;
  readonly actionId: string;
  readonly control: Control;
  readonly required: boolean;
  readonly focusOnLoad: boolean;
}

/**
 * Renders `blocks` into a `<div class="blocks">`.
 * @example renderBlocks(message.blocks, { doc: document, names, onAction, confirm, idPrefix: 'm1' })
 */
export function renderBlocks(blocks: readonly Block[], options: RenderOptions): RenderedBlocks {
  const { doc } = options;
  const registered: Registered[] = [];
  const element = h(doc, 'div', { class: 'blocks' });
  blocks.forEach((block, index) => {
    element.append(renderBlock(block, index, options, registered));
  });
  return {
    element,
    focusOnLoad: registered.find((entry) => entry.focusOnLoad)?.control.node,
    readState() {
      const values: Record<string, Record<string, StateValue>> = {};
      for (const { blockId, actionId, control } of registered) {
        if (control.read === undefined) continue;
        values[blockId] = { ...values[blockId], [actionId]: control.read() };
      }
      return values;
    },
    missingRequired() {
      const missing: Record<string, string> = {};
      for (const { blockId, control, required } of registered) {
        if (required && control.isEmpty?.() === true)
          missing[blockId] = 'Please complete this required field.';
      }
      return missing;
    },
  };
}

function renderBlock(
  block: Block,
  index: number,
  options: RenderOptions,
  registered: Registered[],
): PageElement {
  const { doc, names } = options;
  const type = typeof block.type === 'string' ? block.type : '';
  // Slack gives blocks without a block_id a generated one; so does the page.
  const blockId = typeof block.block_id === 'string' ? block.block_id : `block-${index}`;
  const attrs = { 'data-block-id': blockId, 'data-block-type': type };
  const control = (raw: unknown, position: number, dispatch: boolean, required = false): PageElement => {
    if (!isJson(raw)) return h(doc, 'span');
    const actionId = typeof raw.action_id === 'string' ? raw.action_id : `action-${index}-${position}`;
    const rendered = renderControl(
      raw,
      {
        blockId,
        actionId,
        dispatch,
        state: options.values?.[blockId]?.[actionId],
        id: `${options.idPrefix}-${index}-${position}`,
      },
      options,
    );
    registered.push({
      blockId,
      actionId,
      control: rendered,
      required,
      focusOnLoad: raw.focus_on_load === true,
    });
    return rendered.node;
  };

  switch (type) {
    case 'header':
      return h(doc, 'div', { class: 'block header', attrs }, renderText(doc, block.text, names));
    case 'divider':
      return h(doc, 'hr', { class: 'block divider', attrs });
    case 'section': {
      const fields = Array.isArray(block.fields) ? block.fields : [];
      return h(
        doc,
        'div',
        { class: 'block section', attrs },
        h(
          doc,
          'div',
          { class: 'section-body' },
          block.text === undefined ? undefined : renderText(doc, block.text, names, { block: true }),
          fields.length === 0
            ? undefined
            : h(
                doc,
                'div',
                { class: 'fields' },
                ...fields.map((field) => renderText(doc, field, names, { block: true, class: 'field' })),
              ),
        ),
        block.accessory === undefined
          ? undefined
          : h(doc, 'div', { class: 'accessory' }, control(block.accessory, 0, true)),
      );
    }
    case 'context': {
      const elements = Array.isArray(block.elements) ? block.elements : [];
      return h(
        doc,
        'div',
        { class: 'block context', attrs },
        ...elements.map((item) =>
          isJson(item) && item.type === 'image'
            ? h(doc, 'span', { class: 'image-alt' }, `[image: ${String(item.alt_text ?? '')}]`)
            : renderText(doc, item, names),
        ),
      );
    }
    case 'actions': {
      const elements = Array.isArray(block.elements) ? block.elements : [];
      return h(
        doc,
        'div',
        { class: 'block actions', attrs },
        ...elements.map((item, position) => control(item, position, true)),
      );
    }
    case 'input': {
      const optional = block.optional === true;
      const id = `${options.idPrefix}-${index}-0`;
      const error = options.errors?.[blockId];
      return h(
        doc,
        'div',
        { class: `block input${error === undefined ? '' : ' has-error'}`, attrs },
        h(
          doc,
          'label',
          { class: 'input-label', attrs: { for: id } },
          plainWords(block.label),
          optional ? h(doc, 'span', { class: 'optional' }, ' (optional)') : undefined,
        ),
        control(block.element, 0, block.dispatch_action === true, !optional),
        block.hint === undefined
          ? undefined
          : renderText(doc, block.hint, names, { block: true, class: 'hint' }),
        error === undefined
          ? undefined
          : h(doc, 'div', { class: 'field-error', attrs: { role: 'alert' } }, error),
      );
    }
    case 'image':
      return h(
        doc,
        'div',
        {
          class: 'block image',
          attrs,
          ...(typeof block.image_url === 'string' ? { title: block.image_url } : {}),
        },
        block.title === undefined ? undefined : renderText(doc, block.title, names, { block: true }),
        `[image: ${String(block.alt_text ?? '')}]`,
      );
    case 'markdown':
      return h(doc, 'div', { class: 'block markdown', attrs }, String(block.text ?? ''));
    case 'rich_text':
      return h(doc, 'div', { class: 'block rich-text', attrs }, richText(block.elements));
    default:
      return h(
        doc,
        'div',
        { class: 'block unsupported', attrs },
        `[unsupported block: ${type || 'no type'}]`,
      );
  }
}

/** The words of a rich_text tree (sections, lists, quotes, preformatted, text, links, mentions). */
function richText(elements: unknown): string {
  if (!Array.isArray(elements)) return '';
  return elements
    .map((element) => {
      if (!isJson(element)) return '';
      switch (element.type) {
        case 'text':
          return String(element.text ?? '');
        case 'link':
          return String(element.text ?? element.url ?? '');
        case 'user':
          return `@${String(element.user_id ?? '')}`;
        case 'channel':
          return `#${String(element.channel_id ?? '')}`;
        case 'emoji':
          return `:${String(element.name ?? '')}:`;
        case 'rich_text_list':
          return `${richText(element.elements)}\n`;
        default:
          return `${richText(element.elements)}${element.type === 'rich_text_section' ? '' : '\n'}`;
      }
    })
    .join('');
}
