import type { Diagnostic } from '../pipeline/index.ts';

/** The string codes of the client's errors: switch on `error.code`, not on the message. */
export type AgentClientErrorCode = 'invalid_submission' | 'decision_timeout' | 'client_closed';

/** An error with a string `code` (bolt-js style). */
export interface CodedError extends Error {
  readonly code: AgentClientErrorCode;
}

/**
 * `submit` found problems before anything was sent; `diagnostics` say what and where, in the same
 * shape (and with the same codes) as the server's parse phase.
 * @example
 * try { await client.submit(plan); } catch (error) {
 *   if (isSubmissionError(error)) for (const d of error.diagnostics) console.log(d.path, d.message);
 * }
 */
export class SubmissionError extends Error implements CodedError {
  override readonly name = 'SubmissionError';
  readonly code = 'invalid_submission';
  constructor(readonly diagnostics: readonly Diagnostic[]) {
    super(`the plan was not submitted:\n${diagnostics.map((d) => `  - ${d.message}`).join('\n')}`);
  }
}

export function isSubmissionError(error: unknown): error is SubmissionError {
  return error instanceof SubmissionError;
}

/** `waitForDecision` gave up: nobody decided within `timeoutMs`. The run is still open. */
export class DecisionTimeoutError extends Error implements CodedError {
  override readonly name = 'DecisionTimeoutError';
  readonly code = 'decision_timeout';
  constructor(
    readonly runId: string,
    readonly timeoutMs: number,
  ) {
    super(`no decision on run ${runId} within ${timeoutMs} ms (the run is still open)`);
  }
}

export function isDecisionTimeoutError(error: unknown): error is DecisionTimeoutError {
  return error instanceof DecisionTimeoutError;
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
