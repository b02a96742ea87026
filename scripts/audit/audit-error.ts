/** The audit CLI's expected failures, and how any error reads in one line. */

/**
 * An expected failure: printed as one line (no stack trace). `usage` and `not_found` exit 2 (usage
 * also prints the usage text); `io` (Redis or the output failing) exits 3.
 */
export class AuditError extends Error {
  override readonly name = 'AuditError';
  constructor(
    message: string,
    readonly kind: 'usage' | 'not_found' | 'io',
  ) {
    super(message);
  }
}

/** An error's message, or the thrown value as text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
