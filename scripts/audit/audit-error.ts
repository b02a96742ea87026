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

/**
 * Runs a CLI's `run` and sets the exit code: its answer, or for an AuditError one line on stderr
 * (`<name>: …`, then the usage for a usage error) and 2, or 3 for `io`. Anything else is a bug: thrown.
 */
export async function runCli(
  name: string,
  usage: string,
  run: (argv: readonly string[]) => Promise<number>,
): Promise<void> {
  try {
    process.exitCode = await run(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof AuditError)) throw error;
    process.stderr.write(`${name}: ${error.message}\n`);
    if (error.kind === 'usage') process.stderr.write(`${usage}\n`);
    process.exitCode = error.kind === 'io' ? 3 : 2;
  }
}

/** An error's message, or the thrown value as text. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
