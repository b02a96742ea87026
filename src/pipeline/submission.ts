import type { JsonObject } from './json.ts';
import { hexEquals, hmacHex } from './signing.ts';

/**
 * What an agent sends: the raw plan text (the full envelope, as the agent wrote it) with who sent it,
 * a nonce and the time it was signed. Identity is never self-declared: `signature` is the HMAC of the
 * canonical body with the agent's secret.
 */
export interface SubmissionBody {
  readonly agent: string;
  readonly runId: string;
  /** Unique per submission (UUID). */
  readonly nonce: string;
  /** Milliseconds since the epoch when the agent signed it. */
  readonly issuedAt: number;
  /** The plan envelope as JSON text, kept verbatim for the journal. */
  readonly plan: string;
}

export interface SignedSubmission {
  readonly body: SubmissionBody;
  readonly signature: string;
}

export function signSubmission(body: SubmissionBody, secret: string): SignedSubmission {
  return { body, signature: hmacHex(secret, body as unknown as JsonObject) };
}

export function verifySubmission(submission: SignedSubmission, secret: string): boolean {
  try {
    return hexEquals(submission.signature, hmacHex(secret, submission.body as unknown as JsonObject));
  } catch {
    return false;
  }
}
