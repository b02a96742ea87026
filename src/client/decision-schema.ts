import { z } from 'zod';
import { type Decision, type Diagnostic, isJsonObject, type JsonObject, PHASES } from '../pipeline/index.ts';

const jsonObject = z.custom<JsonObject>(isJsonObject, 'expected an object');

// Loose objects: fields a newer server adds are kept, so the receipt (over every field) still verifies.
const decisionSchema = z.looseObject({
  runId: z.string(),
  agent: z.string(),
  status: z.enum(['approved', 'rejected', 'expired', 'invalid']),
  version: z.number().nullable(),
  plan: z
    .looseObject({
      runId: z.string(),
      agent: z.string(),
      expiresAt: z.string(),
      digest: z.string(),
      steps: z.array(
        z.looseObject({
          id: z.string(),
          tool: z.string(),
          args: jsonObject,
          digest: z.string(),
          route: z.enum(['auto', 'review', 'block']),
          approvals: z.array(z.looseObject({ userId: z.string(), at: z.string() })),
          provenance: z.looseObject({
            by: z.enum(['agent', 'user']),
            userId: z.string().nullable(),
            version: z.number(),
            change: z.enum(['added', 'changed']).nullable(),
          }),
        }),
      ),
    })
    .nullable(),
  decidedAt: z.string(),
  decidedBy: z.string().nullable(),
  reason: z.string().nullable(),
  phase: z.enum(PHASES).nullable(),
  diagnostics: z.array(z.custom<Diagnostic>(isJsonObject, 'expected a diagnostic')),
  configDigest: z.string(),
  receipt: z.string(),
});

/**
 * Reads a decision as stored or delivered. Shape only: whether to trust it is `verifyStep`'s
 * question (the receipt), asked right before each effect.
 */
export function parseDecision(value: unknown): Decision {
  return decisionSchema.parse(typeof value === 'string' ? JSON.parse(value) : value) satisfies Decision;
}
