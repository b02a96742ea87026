/**
 * A tiny DOM for testing the emulator page's renderers in Node: elements, text nodes, attributes,
 * listeners and the form properties the page reads. It has no HTML parser at all — no `innerHTML` — so
 * a renderer can only ever have produced text. `html()` serialises with escaping, for assertions.
 */
import type {
  PageButtonElement,
  PageDocument,
  PageEvent,
  PageInputElement,
  PageNode,
  PageOptionElement,
  PageSelectElement,
  PageTextAreaElement,
} from '../../src/emulator/page/client/dom.ts';

export class FakeText implements PageNode {
  readonly nodeType = 3;
  parent: FakeElement | undefined;
  constructor(public data: string) {}
}

type Child = FakeElement | FakeText;

/** One element; form properties exist on all of them, as the page only reads them on form controls. */
export class FakeElement
  implements PageInputElement, PageTextAreaElement, PageSelectElement, PageOptionElement, PageButtonElement
{
  readonly nodeType = 1;
  readonly children: Child[] = [];
  readonly attributes = new Map<string, string>();
  readonly listeners = new Map<string, ((event: PageEvent) => void)[]>();
  parent: FakeElement | undefined;
  className = '';
  title = '';
  hidden = false;
  type = '';
  name = '';
  id = '';
  checked = false;
  disabled = false;
  selected = false;
  multiple = false;
  rows = 2;
  scrollTop = 0;
  readonly scrollHeight = 0;
  readonly clientHeight = 0;
  #value = '';

  constructor(readonly tagName: string) {}

  get isConnected(): boolean {
    return false;
  }

  /** A select's value is its first selected option's; other elements keep their own. */
  get value(): string {
    if (this.tagName === 'select')
      return this.options[0] === undefined
        ? ''
        : (Array.from(this.options).find((o) => o.selected)?.value ?? '');
    return this.#value;
  }

  set value(value: string) {
    if (this.tagName === 'select')
      for (const option of Array.from(this.options)) option.selected = option.value === value;
    else this.#value = value;
  }

  get options(): FakeElement[] {
    return this.descendants().filter((element) => element.tagName === 'option');
  }

  get textContent(): string {
    return this.children
      .map((child) => (child instanceof FakeText ? child.data : child.textContent))
      .join('');
  }

  set textContent(text: string | null) {
    this.replaceChildren(text ?? '');
  }

  setAttribute(name: string, value: string): void {
    this.attributes.set(name, value);
  }

  getAttribute(name: string): string | null {
    return this.attributes.get(name) ?? null;
  }

  removeAttribute(name: string): void {
    this.attributes.delete(name);
  }

  append(...nodes: (PageNode | string)[]): void {
    for (const node of nodes) {
      const child = typeof node === 'string' ? new FakeText(node) : node;
      if (!(child instanceof FakeElement || child instanceof FakeText)) throw new Error('foreign node');
      child.parent = this;
      this.children.push(child);
    }
  }

  replaceChildren(...nodes: (PageNode | string)[]): void {
    this.children.length = 0;
    this.append(...nodes);
  }

  remove(): void {
    if (this.parent === undefined) return;
    const siblings = this.parent.children;
    siblings.splice(siblings.indexOf(this), 1);
    this.parent = undefined;
  }

  addEventListener(type: string, listener: (event: PageEvent) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }

  focus(): void {}

  /** Fires `type` at this element's listeners. */
  dispatch(type: string): void {
    for (const listener of this.listeners.get(type) ?? []) listener({ preventDefault() {} });
  }

  descendants(): FakeElement[] {
    return this.children.flatMap((child) =>
      child instanceof FakeElement ? [child, ...child.descendants()] : [],
    );
  }

  /** Descendants matching a tag, a `.class` or an `[attr=value]`. */
  findAll(selector: string): FakeElement[] {
    return this.descendants().filter((element) => element.matches(selector));
  }

  find(selector: string): FakeElement {
    const found = this.findAll(selector)[0];
    if (found === undefined) throw new Error(`no ${selector} in ${this.html()}`);
    return found;
  }

  matches(selector: string): boolean {
    if (selector.startsWith('.')) return this.className.split(' ').includes(selector.slice(1));
    const attribute = /^\[([^=\]]+)(?:="([^"]*)")?\]$/.exec(selector);
    if (attribute) {
      const [, name = '', value] = attribute;
      return value === undefined ? this.attributes.has(name) : this.attributes.get(name) === value;
    }
    return this.tagName === selector;
  }

  /** Markup with every text escaped: what a browser would show, as HTML. */
  html(): string {
    const attributes = [
      ...(this.className === '' ? [] : [['class', this.className]]),
      ...(this.title === '' ? [] : [['title', this.title]]),
      ...this.attributes,
    ]
      .map(([name, value]) => ` ${name}="${escapeText(value ?? '')}"`)
      .join('');
    const inner = this.children
      .map((child) => (child instanceof FakeText ? escapeText(child.data) : child.html()))
      .join('');
    return `<${this.tagName}${attributes}>${inner}</${this.tagName}>`;
  }
}

/** The fake document. */
export const fakeDocument = {
  createElement: (tag: string) => new FakeElement(tag),
  createTextNode: (text: string) => new FakeText(text),
} satisfies PageDocument;

function escapeText(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');
}
