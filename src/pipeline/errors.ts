/**
 * The one error class Countersign throws on purpose, with a string `code` (as bolt-js's `CodedError`):
 * logs, metrics and `onError` handlers switch on the code, never on the message. Expected outcomes —
 * an invalid plan, a stale click, no rights — are values, not errors; these are for bugs,
 * misconfiguration and infrastructure faults.
 */

export type CountersignErrorCode =
  /** A public function was called with something it cannot take (a bad key prefix, run id, key). */
  | 'invalid_argument'
  /** The configuration cannot work (thrown at start, listing every problem). */
  | 'invalid_config'
  /** A tool definition can never work (thrown by `defineTool` / the field helpers). */
  | 'invalid_tool_definition'
  /** Something a run needs is not configured now (its agent's channel, a key to sign with). */
  | 'not_configured'
  /** What is stored contradicts itself (a run naming a version that is missing, an unreadable journal). */
  | 'state_corrupt'
  /** A transition lost its compare-and-set race too many times in a row. */
  | 'write_conflict'
  /** Redis aborted a transaction. */
  | 'redis_aborted'
  /** Slack answered something its documentation says it does not. */
  | 'slack_unexpected'
  /** The machine cannot do what a tool needs (no free port). */
  | 'environment'
  /** A rule the code itself guarantees was broken: a bug. */
  | 'internal_invariant';

export class CountersignError extends Error {
  override readonly name: string = 'CountersignError';

  constructor(
    readonly code: CountersignErrorCode,
    message: string,
    options?: { readonly cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Whether `error` is one of Countersign's, optionally with a given code.
 * @example if (isCountersignError(error, 'write_conflict')) retryLater();
 */
export function isCountersignError(error: unknown, code?: CountersignErrorCode): error is CountersignError {
  return error instanceof CountersignError && (code === undefined || error.code === code);
}
