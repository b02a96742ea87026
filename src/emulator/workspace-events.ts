/**
 * What changes in the emulated workspace, as a discriminated union on `type`. A page (or a test) can
 * subscribe and render the workspace live; every event is plain JSON, so it can go over SSE as is.
 */
import type { FaultKind } from './faults.ts';
import type { EmulatedEphemeral, EmulatedMessage, SlackView } from './slack-objects.ts';

/** One recorded Web API call. */
export interface EmulatorCall {
  /** e.g. `chat.postMessage` */
  readonly method: string;
  /** The arguments as the emulator understood them (JSON fields decoded, token removed). */
  readonly args: { readonly [key: string]: unknown };
  /** Epoch milliseconds. */
  readonly at: number;
  /** HTTP status answered (200; 429 when rate limited; 5xx from an injected fault). */
  readonly status: number;
  /** The JSON body answered. */
  readonly response: { readonly ok: boolean; readonly [key: string]: unknown };
  /** The injected fault that hit this call (`slack.faults`), if one did. */
  readonly fault?: FaultKind;
}

/** A change in the workspace. */
export type WorkspaceEvent =
  | { readonly type: 'message_posted'; readonly message: EmulatedMessage }
  | { readonly type: 'message_updated'; readonly message: EmulatedMessage }
  | { readonly type: 'message_deleted'; readonly channel: string; readonly ts: string }
  | { readonly type: 'ephemeral_posted'; readonly ephemeral: EmulatedEphemeral }
  /** A modal stack was opened, pushed onto or updated; `userId` is who sees it, when known. */
  | {
      readonly type: 'view_opened' | 'view_pushed' | 'view_updated';
      readonly view: SlackView;
      readonly userId: string | undefined;
    }
  /** A modal left its stack (replaced by a new views.open, or closed). */
  | { readonly type: 'view_closed'; readonly viewId: string; readonly userId: string | undefined }
  | { readonly type: 'home_published'; readonly view: SlackView; readonly userId: string }
  | { readonly type: 'api_call'; readonly call: EmulatorCall }
  | { readonly type: 'reset' };

/** Receives every {@link WorkspaceEvent}; it must not throw (errors are reported and ignored). */
export type WorkspaceListener = (event: WorkspaceEvent) => void;
