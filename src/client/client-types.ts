/** What the agent client takes and answers (agent-client.ts): its options and its answers' shapes. */
import type { PlanLimits } from '../pipeline/index.ts';
import type { RunStatusBody } from '../protocol/index.ts';
import type { CursorStore } from './decision-feed.ts';
import type { RetryPolicy } from './http.ts';
import type { PublicKeysInput } from './receipt-keys.ts';
import type { ReadVersion } from './world-check.ts';

export interface AgentClientOptions {
  /**
   * Countersign's base URL, e.g. `https://countersign.example.com`. A path prefix
   * (`https://example.com/countersign`) is part of every signed path, so a proxy in front must pass
   * paths on unchanged.
   */
  readonly url: string | URL;
  /** The agent's name in the Countersign config. */
  readonly agent: string;
  /** The agent's secret from the same config: it signs requests, and nothing else. */
  readonly secret: string;
  /**
   * Pin the keys that verify receipts (PEM public keys, `KeyObject`s, or a JWKS) instead of fetching
   * `/.well-known/jwks.json`. Pinned keys must be updated when Countersign rotates its key.
   */
  readonly publicKeys?: PublicKeysInput;
  /** The `fetch` to use (default: the global one). */
  readonly fetch?: typeof globalThis.fetch;
  /** Milliseconds since the epoch (default `Date.now`): request timestamps, run ids, `verifyStep`'s now. */
  readonly clock?: () => number;
  /** Limits for the local checks in `submit` (default: the server's defaults). */
  readonly limits?: Partial<PlanLimits>;
  /** Retries of requests that got no answer, a 429 or a 5xx (default 5 attempts, 250 ms … 10 s). */
  readonly retry?: Partial<RetryPolicy>;
  /** One request's timeout, beyond a long poll's wait (default 30 s). */
  readonly requestTimeoutMs?: number;
  /** Where background errors go: a failed feed poll, a handler that threw, a cursor not saved. */
  readonly onError?: (error: unknown) => void;
}

export interface WaitOptions {
  /** Give up after this long with a `DecisionTimeoutError` (default 10 minutes). */
  readonly timeoutMs?: number;
  /** Stop waiting when aborted: rejects with `WaitAbortedError` (`name: 'AbortError'`). */
  readonly signal?: AbortSignal;
}

export interface OnDecisionOptions {
  /** Keeps the feed's position across restarts of the agent (e.g. `fileCursor(path)`); default: none. */
  readonly cursor?: CursorStore;
}

/** What `submit` answers: `approved` at once when every step was auto-approved by policy. */
export interface Submitted {
  readonly runId: string;
  readonly status: 'pending' | 'approved';
}

export type RunStatus = RunStatusBody;

export interface VerifyStepOptions {
  /** Milliseconds since the epoch to check the expiry at (default: the client's clock). */
  readonly now?: number;
  /**
   * Reads a target's version now from your system. Given, a step approved with preconditions is
   * refused with `world_changed` when a target moved since approval, is gone, or cannot be read.
   * Without it, check `preconditions` yourself (`checkWorld`) before the effect.
   */
  readonly readVersion?: ReadVersion;
}
