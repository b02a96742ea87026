/** Reading the server's bodies with the protocol's schemas (src/protocol/wire.ts), typed as the pipeline's. */
import type { Decision, Release } from '../pipeline/index.ts';
import { decisionSchema, releasesSchema } from '../protocol/index.ts';

/**
 * Reads a decision as the server sends it. Shape only: whether to trust it is `verifyStep`'s question
 * (the receipt), asked right before each effect. Unknown fields are kept: the receipt covers them.
 * Throws a `ZodError` for anything else.
 */
export function parseDecision(value: unknown): Decision {
  // The schema's diagnostic codes are exactly DIAGNOSTIC_CODES, written as strings.
  return decisionSchema.parse(value) as Decision;
}

/** The run's releases as the server sends them (shape only, as {@link parseDecision}). */
export interface ReleasesRead {
  readonly runId: string;
  /** Once it is not `pending`, no more releases come: the run's decision is there. */
  readonly status: 'pending' | 'approved' | 'rejected' | 'expired' | 'invalid';
  /** Oldest first. */
  readonly releases: readonly Release[];
}

/** Reads `GET /v1/runs/{id}/releases`; throws a `ZodError` for anything else. */
export function parseReleases(value: unknown): ReleasesRead {
  return releasesSchema.parse(value) as unknown as ReleasesRead;
}
