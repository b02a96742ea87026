/**
 * Text objects as DOM: `plain_text` as it is, `mrkdwn` through {@link parseMrkdwn}. Every string ends up
 * in a text node; formatting is `<b>`, `<i>`, `<s>`, `<code>`, `<pre>`, `<blockquote>`, `<br>` and
 * `<span>`s for mentions and links. Links are never followed: the label shows, the URL is its title.
 */
import { h, type PageDocument, type PageElement, type PageNode } from './dom.ts';
import { type MrkdwnNode, parseMrkdwn } from './mrkdwn.ts';

/** Display names for mentions. */
export interface Names {
  user(id: string): string | undefined;
  channel(id: string): string | undefined;
}

/** A Block Kit text object, read leniently. */
export interface TextObject {
  readonly type: 'plain_text' | 'mrkdwn';
  readonly text: string;
}

/** The text object in `value`, if it is one. */
export function textObject(value: unknown): TextObject | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { type, text } = value as { type?: unknown; text?: unknown };
  if ((type === 'plain_text' || type === 'mrkdwn') && typeof text === 'string') return { type, text };
  return undefined;
}

/** The plain words of a text object (for `<option>`, button labels, payloads): mrkdwn unformatted. */
export function plainWords(value: unknown): string {
  const text = textObject(value);
  if (text === undefined) return '';
  return text.type === 'plain_text' ? text.text : nodesToWords(parseMrkdwn(text.text));
}

/** A text object as a `<span>` (or `<div>` when `block`). Anything that is not a text object is empty. */
export function renderText(
  doc: PageDocument,
  value: unknown,
  names: Names,
  options: { readonly block?: boolean; readonly class?: string } = {},
): PageElement {
  const text = textObject(value);
  const element = h(doc, options.block === true ? 'div' : 'span', {
    class: [text?.type === 'mrkdwn' ? 'mrkdwn' : 'plain', options.class].filter(Boolean).join(' '),
  });
  if (text === undefined) return element;
  if (text.type === 'plain_text') element.append(doc.createTextNode(text.text));
  else element.append(...renderMrkdwnNodes(doc, parseMrkdwn(text.text), names));
  return element;
}

/** mrkdwn nodes as DOM nodes. */
export function renderMrkdwnNodes(doc: PageDocument, nodes: readonly MrkdwnNode[], names: Names): PageNode[] {
  return nodes.map((node) => renderNode(doc, node, names));
}

function renderNode(doc: PageDocument, node: MrkdwnNode, names: Names): PageNode {
  switch (node.kind) {
    case 'text':
      return doc.createTextNode(node.text);
    case 'bold':
      return h(doc, 'b', {}, ...renderMrkdwnNodes(doc, node.children, names));
    case 'italic':
      return h(doc, 'i', {}, ...renderMrkdwnNodes(doc, node.children, names));
    case 'strike':
      return h(doc, 's', {}, ...renderMrkdwnNodes(doc, node.children, names));
    case 'quote':
      return h(doc, 'blockquote', {}, ...renderMrkdwnNodes(doc, node.children, names));
    case 'code':
      return h(doc, 'code', {}, node.text);
    case 'pre':
      return h(doc, 'pre', {}, node.text);
    case 'break':
      return doc.createElement('br');
    case 'user':
      return h(
        doc,
        'span',
        { class: 'mention', title: node.userId },
        `@${node.label ?? names.user(node.userId) ?? node.userId}`,
      );
    case 'channel':
      return h(
        doc,
        'span',
        { class: 'mention', title: node.channelId },
        `#${node.label ?? names.channel(node.channelId) ?? node.channelId}`,
      );
    case 'broadcast':
      return h(doc, 'span', { class: 'mention broadcast' }, node.label);
    case 'link': {
      // A permalink (chat.getPermalink) opens its message here; other links are never followed.
      const permalink = /^https:\/\/[a-z0-9-]+\.slack\.com\/archives\/([A-Z0-9]+)\/p(\d{10})(\d{6})/.exec(
        node.url,
      );
      if (permalink === null) return h(doc, 'span', { class: 'link', title: node.url }, node.label);
      return h(
        doc,
        'span',
        {
          class: 'link permalink',
          title: node.url,
          attrs: {
            role: 'link',
            tabindex: '0',
            'data-permalink-channel': permalink[1] ?? '',
            'data-permalink-ts': `${permalink[2]}.${permalink[3]}`,
          },
        },
        node.label,
      );
    }
  }
}

function nodesToWords(nodes: readonly MrkdwnNode[]): string {
  return nodes
    .map((node) => {
      switch (node.kind) {
        case 'text':
        case 'code':
        case 'pre':
          return node.text;
        case 'break':
          return '\n';
        case 'user':
          return `@${node.label ?? node.userId}`;
        case 'channel':
          return `#${node.label ?? node.channelId}`;
        case 'broadcast':
        case 'link':
          return node.label;
        default:
          return nodesToWords(node.children);
      }
    })
    .join('');
}
