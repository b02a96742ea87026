/**
 * What the emulator's page and its server say to each other (`/page/api/…`), as types only: the server
 * (page-routes.ts) and the browser code (client/) both import them, and nothing else crosses.
 */
import type { BlockActionInput } from '../interactions.ts';
import type { EmulatedEphemeral, EmulatedMessage, SlackView, ViewStateValues } from '../slack-objects.ts';

/** Someone the visitor can act as (the user switcher). */
export interface Persona {
  readonly id: string;
  /** e.g. "Dana (operator)" */
  readonly label: string;
}

/** A conversation as the page lists it. */
export interface PageChannel {
  readonly id: string;
  /** `ops-approvals` for channels; for DMs, the other members' names. */
  readonly label: string;
  readonly isIm: boolean;
}

/** A workspace member, for mentions. */
export interface PageUser {
  readonly id: string;
  readonly name: string;
  readonly realName: string;
}

/** The modal the viewer has open: the top of their stack. */
export interface PageModal {
  readonly view: SlackView;
  /** How many views are on the stack (2 or 3 after views.push). */
  readonly depth: number;
  /** `response_action: "errors"` from the app for this view, by block id (until the view changes). */
  readonly errors: Readonly<Record<string, string>>;
}

/** `GET /page/api/state?user=<id>`: the workspace as one person sees it. */
export interface PageSnapshot {
  /** Counts workspace changes; a page may use it to tell snapshots apart. */
  readonly seq: number;
  readonly teamName: string;
  readonly bot: { readonly userId: string; readonly name: string };
  /** Who the snapshot is for. */
  readonly viewer: string;
  readonly personas: readonly Persona[];
  readonly users: readonly PageUser[];
  /** False when the emulator has no app to send interactions to (clicks are refused). */
  readonly interactive: boolean;
  /** Public channels, then the viewer's DMs with the bot. */
  readonly channels: readonly PageChannel[];
  /** Every message in those conversations, thread replies included, oldest first per channel. */
  readonly messages: readonly EmulatedMessage[];
  /** Ephemeral messages for the viewer only. */
  readonly ephemerals: readonly EmulatedEphemeral[];
  readonly modal: PageModal | null;
  readonly home: SlackView | null;
}

/** `POST /page/api/action`: a click on a button, or a change of a select or picker that dispatches. */
export interface PageActionRequest {
  readonly user: string;
  readonly container:
    | {
        readonly type: 'message';
        readonly channel: string;
        readonly ts: string;
        readonly ephemeral?: boolean;
      }
    /** In a modal or Home tab; `values` is what every input of the view holds now. */
    | { readonly type: 'view'; readonly viewId: string; readonly values: ViewStateValues };
  readonly action: BlockActionInput;
}

/** `POST /page/api/submit`: the modal's submit button, with what its inputs hold. */
export interface PageSubmitRequest {
  readonly user: string;
  readonly viewId: string;
  readonly values: ViewStateValues;
}

/** `POST /page/api/close`: the modal's close button (back to the view below, if any). */
export interface PageCloseRequest {
  readonly user: string;
  readonly viewId: string;
}

/** Why the page's request did nothing, in words for the visitor. */
export interface PageFailure {
  readonly ok: false;
  /** e.g. `app_error`, `app_timeout`, `not_configured`, `view_not_found` */
  readonly error: string;
  readonly message: string;
}

/** The answer to an action: the app's HTTP status (Slack shows a warning when it is not 200). */
export type PageActionResult = { readonly ok: true; readonly status: number } | PageFailure;

/** What became of a submitted modal, from the app's `response_action`. */
export type SubmitOutcome = 'closed' | 'cleared' | 'updated' | 'pushed' | 'errors';

/** The answer to a submission. */
export type PageSubmitResult =
  | {
      readonly ok: true;
      readonly outcome: SubmitOutcome;
      /** For `errors`: messages by block id. */
      readonly errors?: Readonly<Record<string, string>>;
    }
  | PageFailure;

/** The answer to a close. */
export type PageCloseResult = { readonly ok: true } | PageFailure;
