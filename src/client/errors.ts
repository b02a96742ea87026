import type { Diagnostic, Phase } from '../pipeline/index.ts';
import type { ErrorCode } from '../protocol/index.ts';

/**
 * What a `RequestError` can say: one of the server's refusal codes (docs/http-api.md), or
 * `network_error` (no answer: the connection failed or timed out) or `bad_response` (an answer that
 * is not the protocol, e.g. a proxy's HTML page).
 */
export type RequestErrorCode = ErrorCode | 'network_error' | 'bad_response';

/** The string codes of the client's errors: switch on `error.code`, not on the message. */
export type AgentClientErrorCode =
  | 'invalid_submission'
  | 'decision_timeout'
  | 'aborted'
  | 'client_closed'
  | RequestErrorCode;

/** An error with a string `code` (bolt-js style). */
export interface CodedError extends Error {
  readonly code: AgentClientErrorCode;
}

/**
 * The plan was refused: by the local checks in `submit` before anything was sent (`checkedBy:
 * 'client'`, always the parse phase), or by the server's validation (`checkedBy: 'server'`, answered
 * `422`: the phase that refused it and its diagnostics). Same diagnostic shape and codes either way.
 * @example
 * try { await client.submit(plan); } catch (error) {
 *   if (isSubmissionError(error)) for (const d of error.diagnostics) console.log(d.phase, d.code, d.path, d.message);
 * }
 */
export class SubmissionError extends Error implements CodedError {
  override readonly name = 'SubmissionError';
  readonly code = 'invalid_submission';
  readonly phase: Phase;
  readonly checkedBy: 'client' | 'server';
  /** The run id the plan was submitted under (null when the server could read none). */
  readonly runId: string | null;

  constructor(
    readonly diagnostics: readonly Diagnostic[],
    options: {
      readonly phase?: Phase;
      readonly checkedBy?: 'client' | 'server';
      readonly runId?: string | null;
    } = {},
  ) {
    const checkedBy = options.checkedBy ?? 'client';
    const phase = options.phase ?? diagnostics[0]?.phase ?? 'parse';
    const lead =
      checkedBy === 'client' ? 'the plan was not submitted' : `Countersign refused the plan (${phase} phase)`;
    super(`${lead}:\n${diagnostics.map((d) => `  - ${d.message}`).join('\n')}`);
    this.phase = phase;
    this.checkedBy = checkedBy;
    this.runId = options.runId ?? null;
  }
}

export function isSubmissionError(error: unknown): error is SubmissionError {
  return error instanceof SubmissionError;
}

/**
 * `waitForDecision` (or `waitForRelease`) gave up: nobody decided (nor released the step) within
 * `timeoutMs`. The run is still open.
 */
export class DecisionTimeoutError extends Error implements CodedError {
  override readonly name = 'DecisionTimeoutError';
  readonly code = 'decision_timeout';
  constructor(
    readonly runId: string,
    readonly timeoutMs: number,
    /** The last failed request, when the server could not be reached at the end. */
    cause?: unknown,
    /** The step `waitForRelease` waited for. */
    readonly stepId?: string,
  ) {
    super(
      `no ${stepId === undefined ? '' : `release of step ${stepId} nor `}decision on run ${runId} within ${timeoutMs} ms (the run is still open)`,
      cause === undefined ? undefined : { cause },
    );
  }
}

export function isDecisionTimeoutError(error: unknown): error is DecisionTimeoutError {
  return error instanceof DecisionTimeoutError;
}

/**
 * `waitForDecision` stopped because its `signal` was aborted (named `AbortError`, as fetch's is). The
 * run is still open; nothing was decided by stopping.
 */
export class WaitAbortedError extends Error implements CodedError {
  override readonly name = 'AbortError';
  readonly code = 'aborted';
  constructor(
    readonly runId: string,
    /** The signal's reason. */
    cause?: unknown,
  ) {
    super(
      `stopped waiting for the decision on run ${runId}: the wait was aborted (the run is still open)`,
      cause === undefined ? undefined : { cause },
    );
  }
}

export function isWaitAbortedError(error: unknown): error is WaitAbortedError {
  return error instanceof WaitAbortedError;
}

/** The client was closed while a call was waiting, or a call came after `close()`. */
export class ClientClosedError extends Error implements CodedError {
  override readonly name = 'ClientClosedError';
  readonly code = 'client_closed';
  constructor() {
    super('the AgentClient is closed');
  }
}

export function isClientClosedError(error: unknown): error is ClientClosedError {
  return error instanceof ClientClosedError;
}

/**
 * A request Countersign refused, or that got no usable answer after the client's retries: `status`
 * (null when there was no answer), the server's `code` and `message`. Answers that are outcomes —
 * a pending run, a step already claimed, an invalid plan (`SubmissionError`) — are not thrown as this.
 * @example
 * try { await client.submit({ ...plan, runId }); } catch (error) {
 *   if (isRequestError(error) && error.code === 'run_exists') console.log('that run id holds another plan');
 * }
 */
export class RequestError extends Error implements CodedError {
  override readonly name = 'RequestError';
  readonly code: RequestErrorCode;
  /** The HTTP status, or null when no answer came. */
  readonly status: number | null;
  /** `METHOD /path`, for logs. */
  readonly request: string;
  /** For `rate_limited`/`unavailable`: how long the server asked to wait (`Retry-After`), if it said. */
  readonly retryAfterMs: number | undefined;

  constructor(input: {
    readonly code: RequestErrorCode;
    readonly status: number | null;
    readonly message: string;
    readonly request: string;
    readonly retryAfterMs?: number | undefined;
    readonly cause?: unknown;
  }) {
    super(
      `${input.request}: ${input.status === null ? '' : `${input.status} `}${input.code}: ${input.message}`,
      input.cause === undefined ? undefined : { cause: input.cause },
    );
    this.code = input.code;
    this.status = input.status;
    this.request = input.request;
    this.retryAfterMs = input.retryAfterMs;
  }

  /** Whether trying again later may succeed (no answer, 429 or 5xx); every call of the API is safe to repeat. */
  get retriable(): boolean {
    return this.status === null ? this.code === 'network_error' : this.status === 429 || this.status >= 500;
  }
}

export function isRequestError(error: unknown): error is RequestError {
  return error instanceof RequestError;
}
