/**
 * The client's long-poll loop (`waitForDecision`, `waitForRelease`): one read after another, each held
 * by the server for up to `MAX_WAIT_SECONDS`, until the read answers, the timeout passes or the caller
 * aborts; a server that cannot be reached is tried again with backoff, and one that answers pending
 * without waiting is not polled in a tight loop.
 */
import { MAX_WAIT_SECONDS } from '../protocol/index.ts';
import type { WaitOptions } from './client-types.ts';
import { DecisionTimeoutError, isRequestError, WaitAbortedError } from './errors.ts';
import { backoffMs, type RetryPolicy, sleep } from './http.ts';

const DEFAULT_TIMEOUT_MS = 10 * 60_000;
/** A long poll answered sooner than this was not held by the server. */
export const EARLY_ANSWER_MS = 500;

export interface LongPoll<T> {
  readonly runId: string;
  readonly options: WaitOptions;
  /** What is awaited, named in a timeout: a release of this step, or (undefined) the decision. */
  readonly stepId: string | undefined;
  /** One read: the answer, or undefined while there is none after waiting `waitSeconds`. */
  readonly read: (waitSeconds: number, signal: AbortSignal) => Promise<T | undefined>;
  readonly retry: RetryPolicy;
  /** The client's `close()`: ends the loop with the error it was aborted with. */
  readonly closing: AbortSignal;
  /** Each failure that is tried again. */
  readonly onError: (error: unknown) => void;
}

/**
 * Long polls `read` until it answers. Rejects with `DecisionTimeoutError` after `options.timeoutMs`,
 * with `WaitAbortedError` as soon as `options.signal` is aborted, and with a request error that
 * cannot be retried.
 */
export async function longPoll<T>(poll: LongPoll<T>): Promise<T> {
  const { runId, options, read, retry, closing } = poll;
  const { signal } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = performance.now() + timeoutMs;
  const aborted = () => new WaitAbortedError(runId, signal?.reason);
  const timedOut = (cause: unknown) => new DecisionTimeoutError(runId, timeoutMs, cause, poll.stepId);
  // A pause ended by the caller's signal is the caller's abort, not a failure.
  const pause = (ms: number) =>
    sleep(ms, closing, signal).catch((error: unknown) => {
      throw signal?.aborted && !closing.aborted ? aborted() : error;
    });
  let lastError: unknown;
  for (let failures = 0, early = 0; ; ) {
    if (signal?.aborted) throw aborted();
    const remaining = deadline - performance.now();
    if (remaining <= 0) throw timedOut(lastError);
    // The poll is cut at the deadline: its wait is whole seconds, the timeout need not be.
    const deadlineSignal = AbortSignal.timeout(Math.ceil(remaining));
    const started = performance.now();
    try {
      const answer = await read(
        Math.min(MAX_WAIT_SECONDS, Math.ceil(remaining / 1000)),
        signal === undefined ? deadlineSignal : AbortSignal.any([deadlineSignal, signal]),
      );
      if (answer !== undefined) return answer;
      failures = 0;
      // A server (or a proxy) that answers pending without waiting must not be polled in a tight loop.
      early = performance.now() - started < EARLY_ANSWER_MS ? early + 1 : 0;
      if (early > 0) await pause(Math.min(backoffMs(early, retry), remaining));
    } catch (error) {
      if (signal?.aborted && !closing.aborted) throw aborted();
      if (deadlineSignal.aborted && !closing.aborted) throw timedOut(lastError);
      if (!isRequestError(error) || !error.retriable) throw error;
      lastError = error;
      poll.onError(error);
      failures++;
      await pause(Math.min(backoffMs(failures, retry), Math.max(0, deadline - performance.now())));
    }
  }
}
