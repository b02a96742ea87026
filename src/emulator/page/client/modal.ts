/**
 * The viewer's modal (the top of their stack) and buttons' confirm dialogs. The modal is drawn again
 * only when the view, its errors or the viewer change, so what the visitor types survives unrelated
 * updates; submitting checks required inputs first (as Slack does, without asking the app), then sends
 * the values and shows the app's answer.
 */
import type { BlockActionInput } from '../../interactions.ts';
import type { ViewStateValues } from '../../slack-objects.ts';
import type {
  PageActionRequest,
  PageCloseResult,
  PageFailure,
  PageModal,
  PageSubmitResult,
} from '../page-protocol.ts';
import type { ConfirmDialog } from './controls.ts';
import { h, type PageDocument, type PageElement } from './dom.ts';
import { type RenderedBlocks, renderBlocks } from './render-blocks.ts';
import type { Names } from './render-text.ts';

/** What the modal needs from the page. */
export interface ModalEnvironment {
  readonly doc: PageDocument;
  /** Where the modal is drawn. */
  readonly root: PageElement;
  readonly names: Names;
  readonly viewer: string;
  readonly confirm: (dialog: ConfirmDialog) => Promise<boolean>;
  readonly act: (container: PageActionRequest['container'], action: BlockActionInput) => void;
  readonly post: <T>(path: 'submit' | 'close', body: unknown) => Promise<T | PageFailure>;
  /** Re-reads the workspace (after a submission: errors come back without a workspace change). */
  readonly refresh: () => void;
  readonly toast: (text: string) => void;
}

/** Draws the viewer's modal; one per page. */
export class ModalView {
  /** `viewer:viewId:hash` of the view on screen, and the errors it shows. */
  #view: string | undefined;
  #key: string | undefined;
  #blocks: RenderedBlocks | undefined;
  /** Required inputs left empty at the last submit. */
  #missing: Readonly<Record<string, string>> = {};

  /** Shows `modal` (or nothing). */
  show(env: ModalEnvironment, modal: PageModal | null): void {
    if (modal === null) {
      this.#view = undefined;
      this.#key = undefined;
      this.#blocks = undefined;
      this.#missing = {};
      env.root.replaceChildren();
      return;
    }
    const { doc } = env;
    const { view } = modal;
    const viewKey = `${env.viewer}:${view.id}:${view.hash}`;
    if (viewKey !== this.#view) this.#missing = {};
    const errors = { ...modal.errors, ...this.#missing };
    const key = `${viewKey}:${JSON.stringify(errors)}`;
    if (key === this.#key) return;
    // The same view with new errors keeps what the visitor typed; a new version has what Slack kept.
    const values: ViewStateValues =
      viewKey === this.#view && this.#blocks !== undefined ? this.#blocks.readState() : view.state.values;
    const opened = viewKey !== this.#view;
    this.#view = viewKey;
    this.#key = key;
    const blocks = renderBlocks(view.blocks, {
      doc,
      names: env.names,
      confirm: env.confirm,
      values,
      errors,
      idPrefix: `v-${view.id}`,
      onAction: (action) => env.act({ type: 'view', viewId: view.id, values: blocks.readState() }, action),
    });
    this.#blocks = blocks;

    const title = view.title?.text ?? '';
    const banner = h(doc, 'div', { class: 'modal-error', attrs: { role: 'alert' } });
    banner.hidden = true;
    const close = async () => {
      const result = await env.post<PageCloseResult>('close', { user: env.viewer, viewId: view.id });
      if (!result.ok) env.toast(result.message);
      env.refresh();
    };
    const closeX = h(
      doc,
      'button',
      { class: 'close', attrs: { type: 'button', 'aria-label': 'Close' } },
      '✕',
    );
    closeX.addEventListener('click', () => void close());
    const back = modal.depth > 1 ? `‹ ${view.close?.text ?? 'Back'}` : (view.close?.text ?? 'Cancel');
    const cancel = h(doc, 'button', { class: 'btn', attrs: { type: 'button' } }, back);
    cancel.addEventListener('click', () => void close());
    const submit =
      view.submit === undefined
        ? undefined
        : h(doc, 'button', { class: 'btn primary', attrs: { type: 'button' } }, view.submit.text);
    submit?.addEventListener('click', () => void this.#submit(env, modal, blocks, banner, submit));

    env.root.replaceChildren(
      h(
        doc,
        'div',
        { class: 'overlay' },
        h(
          doc,
          'div',
          {
            class: 'modal',
            attrs: {
              role: 'dialog',
              'aria-modal': 'true',
              'aria-label': title,
              'data-view-id': view.id,
              'data-callback-id': view.callback_id,
            },
          },
          h(doc, 'div', { class: 'modal-header' }, h(doc, 'h2', {}, title), closeX),
          h(doc, 'div', { class: 'modal-body' }, blocks.element),
          banner,
          h(doc, 'div', { class: 'modal-footer' }, cancel, submit),
        ),
      ),
    );
    // As Slack does: a view that just opened puts the cursor in its `focus_on_load` element.
    if (opened) blocks.focusOnLoad?.focus();
  }

  async #submit(
    env: ModalEnvironment,
    modal: PageModal,
    blocks: RenderedBlocks,
    banner: PageElement,
    button: PageElement,
  ): Promise<void> {
    this.#missing = blocks.missingRequired();
    if (Object.keys(this.#missing).length > 0) {
      this.show(env, modal);
      return;
    }
    button.setAttribute('disabled', '');
    const result = await env.post<PageSubmitResult>('submit', {
      user: env.viewer,
      viewId: modal.view.id,
      values: blocks.readState(),
    });
    button.removeAttribute('disabled');
    if (!result.ok) {
      banner.textContent = `We had some trouble connecting. Try again? (${result.message})`;
      banner.hidden = false;
      return;
    }
    env.refresh();
  }
}

/** A button's confirm dialog, drawn in `layer` over everything; resolves true for its confirm button. */
export function askToConfirm(doc: PageDocument, layer: PageElement, dialog: ConfirmDialog): Promise<boolean> {
  return new Promise((resolve) => {
    const deny = h(doc, 'button', { class: 'btn', attrs: { type: 'button' } }, dialog.deny);
    const style = dialog.style === 'danger' ? 'danger' : 'primary';
    const confirm = h(doc, 'button', { class: `btn ${style}`, attrs: { type: 'button' } }, dialog.confirm);
    const overlay = h(
      doc,
      'div',
      { class: 'overlay confirm' },
      h(
        doc,
        'div',
        { class: 'modal', attrs: { role: 'alertdialog', 'aria-modal': 'true', 'aria-label': dialog.title } },
        h(doc, 'div', { class: 'modal-header' }, h(doc, 'h2', {}, dialog.title)),
        h(doc, 'div', { class: 'modal-body' }, h(doc, 'p', {}, dialog.text)),
        h(doc, 'div', { class: 'modal-footer' }, deny, confirm),
      ),
    );
    const finish = (answer: boolean) => {
      overlay.remove();
      resolve(answer);
    };
    deny.addEventListener('click', () => finish(false));
    confirm.addEventListener('click', () => finish(true));
    layer.append(overlay);
  });
}
