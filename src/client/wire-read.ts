/** Reading the server's bodies with the protocol's schemas (src/protocol/wire.ts), typed as the pipeline's. */
import type { Decision } from '../pipeline/index.ts';
import { decisionSchema } from '../protocol/index.ts';

/**
 * Reads a decision as the server sends it. Shape only: whether to trust it is `verifyStep`'s question
 * (the receipt), asked right before each effect. Unknown fields are kept: the receipt covers them.
 * Throws a `ZodError` for anything else.
 */
export function parseDecision(value: unknown): Decision {
  // The schema's diagnostic codes are exactly DIAGNOSTIC_CODES, written as strings.
  return decisionSchema.parse(value) as Decision;
}
