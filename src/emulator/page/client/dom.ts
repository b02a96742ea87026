/**
 * The part of the browser's DOM the page uses, declared here because the project compiles without
 * `lib.dom` — and deliberately without `innerHTML`, `outerHTML`, `insertAdjacentHTML` or
 * `document.write`: the page creates every node with `createElement` and sets text with `textContent`
 * or text nodes, so no text the app sent (a plan, a reason) is ever parsed as HTML. The browser's real
 * objects satisfy these interfaces; tests pass a small fake.
 */

/** Any node. */
export interface PageNode {
  readonly nodeType: number;
}

/** What a listener receives. */
export interface PageEvent {
  preventDefault(): void;
  readonly key?: string;
  /** Where the event happened (an element, for clicks). */
  readonly target?: { closest?(selector: string): PageElement | null } | null;
}

/** An element. */
export interface PageElement extends PageNode {
  className: string;
  textContent: string | null;
  title: string;
  hidden: boolean;
  readonly isConnected: boolean;
  setAttribute(name: string, value: string): void;
  getAttribute(name: string): string | null;
  removeAttribute(name: string): void;
  append(...nodes: (PageNode | string)[]): void;
  replaceChildren(...nodes: (PageNode | string)[]): void;
  remove(): void;
  addEventListener(type: string, listener: (event: PageEvent) => void): void;
  focus(): void;
  scrollTop: number;
  readonly scrollHeight: number;
  readonly clientHeight: number;
}

/** `<input>` */
export interface PageInputElement extends PageElement {
  type: string;
  name: string;
  value: string;
  checked: boolean;
  disabled: boolean;
  id: string;
}

/** `<textarea>` */
export interface PageTextAreaElement extends PageElement {
  value: string;
  rows: number;
  id: string;
}

/** `<option>` */
export interface PageOptionElement extends PageElement {
  value: string;
  selected: boolean;
  disabled: boolean;
}

/** `<select>` */
export interface PageSelectElement extends PageElement {
  value: string;
  multiple: boolean;
  id: string;
  readonly options: ArrayLike<PageOptionElement>;
}

/** `<button>` */
export interface PageButtonElement extends PageElement {
  type: string;
  disabled: boolean;
}

/** The document: only node creation. */
export interface PageDocument {
  createElement(tag: 'input'): PageInputElement;
  createElement(tag: 'textarea'): PageTextAreaElement;
  createElement(tag: 'select'): PageSelectElement;
  createElement(tag: 'option'): PageOptionElement;
  createElement(tag: 'button'): PageButtonElement;
  createElement(tag: string): PageElement;
  createTextNode(text: string): PageNode;
}

/** Attributes and text for {@link h}. */
export interface ElementSpec {
  readonly class?: string;
  readonly title?: string;
  /** Plain attributes (`data-*`, `aria-*`, `role`, `for`…); never event handlers. */
  readonly attrs?: { readonly [name: string]: string };
}

/**
 * An element with attributes and children; strings become text nodes (never markup).
 * @example h(doc, 'b', {}, '<script>') // <b>&lt;script&gt;</b>
 */
export function h(
  doc: PageDocument,
  tag: string,
  spec: ElementSpec = {},
  ...children: readonly (PageNode | string | undefined)[]
): PageElement {
  const element = doc.createElement(tag);
  decorate(element, spec);
  for (const child of children) {
    if (child !== undefined) element.append(typeof child === 'string' ? doc.createTextNode(child) : child);
  }
  return element;
}

/** Sets class, title and attributes on an element; refuses `on…` attributes. */
export function decorate<E extends PageElement>(element: E, spec: ElementSpec): E {
  if (spec.class !== undefined) element.className = spec.class;
  if (spec.title !== undefined) element.title = spec.title;
  for (const [name, value] of Object.entries(spec.attrs ?? {})) {
    if (/^on/i.test(name)) throw new Error(`refusing to set the event-handler attribute ${name}`);
    element.setAttribute(name, value);
  }
  return element;
}
