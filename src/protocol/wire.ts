/**
 * The bodies of Countersign's HTTP API (docs/http-api.md), as zod schemas: the server answers with
 * them, the client reads with them, and `GET /v1/openapi.json` is generated from them.
 */
import { z } from 'zod';
import {
  DIAGNOSTIC_CODES,
  type Diagnostic,
  isJsonObject,
  type JsonObject,
  PHASES,
  RUN_ID_PATTERN,
} from '../pipeline/index.ts';

const jsonObject = z.custom<JsonObject>(isJsonObject, 'expected an object').meta({ type: 'object' });
const runId = z
  .string()
  .regex(RUN_ID_PATTERN)
  .meta({ description: 'The run id (letters, digits, - and _).' });
const isoTime = z.string().meta({ description: 'ISO 8601 UTC' });

export const diagnosticSchema = z
  .object({
    phase: z.enum(PHASES),
    code: z.enum(Object.values(DIAGNOSTIC_CODES).flat() as [string, ...string[]]),
    stepId: z.string().optional(),
    path: z.array(z.union([z.string(), z.number()])).optional(),
    message: z.string(),
  })
  .meta({ id: 'Diagnostic', description: 'One problem the validation pipeline found.' });

export const submitBodySchema = z
  .object({
    runId,
    agent: z.string(),
    summary: z.string().max(3000).optional(),
    context: jsonObject.optional(),
    expiresIn: z.string().optional().meta({ description: "A duration like '2h' (default: the server's)." }),
    expiresAt: isoTime.optional().meta({ description: 'An absolute expiry instead of expiresIn.' }),
    ifBlocked: z.enum(['review', 'refuse']).optional().meta({
      description:
        'When policy blocks a step: "review" (default) posts the plan, "refuse" answers 422 at authorize (blocked) and posts nothing.',
    }),
    steps: z.array(z.object({ id: z.string().optional(), tool: z.string(), args: jsonObject })),
  })
  .meta({
    id: 'PlanSubmission',
    description: 'A plan: an ordered list of tool calls the agent has not run yet.',
  });

export const submitAcceptedSchema = z
  .object({ runId, status: z.enum(['pending', 'approved']), version: z.literal(1) })
  .meta({ id: 'SubmissionAccepted' });

export const submitInvalidSchema = z
  .object({
    runId: runId.nullable().meta({ description: 'null when the body named no readable run id' }),
    status: z.literal('invalid'),
    phase: z.enum(PHASES),
    diagnostics: z.array(diagnosticSchema),
  })
  .meta({ id: 'SubmissionInvalid' });

const routeSchema = z.enum(['auto', 'review', 'block']);

export const runStatusSchema = z
  .object({
    runId,
    agent: z.string(),
    status: z.enum(['pending', 'approved', 'rejected', 'expired', 'invalid']),
    version: z.number().nullable(),
    planDigest: z.string().nullable(),
    expiresAt: isoTime.nullable(),
    steps: z.array(
      z.object({
        id: z.string(),
        tool: z.string(),
        digest: z.string(),
        route: routeSchema,
        approvals: z.object({ have: z.number(), need: z.number(), satisfied: z.boolean() }).nullable(),
      }),
    ),
    awaiting: z.array(
      z.object({ stepId: z.string(), group: z.string(), have: z.number(), need: z.number() }),
    ),
    decidedAt: isoTime.nullable(),
    decidedBy: z.string().nullable(),
  })
  .meta({ id: 'RunStatus' });

export const receiptSchema = z
  .object({ alg: z.literal('EdDSA'), kid: z.string(), signature: z.string() })
  .meta({ id: 'Receipt', description: "Countersign's Ed25519 signature (docs/receipts.md)." });

// Loose objects: fields a newer server adds are kept, so the receipt (over every field) still verifies.
export const decisionSchema = z
  .looseObject({
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
            route: routeSchema,
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
    diagnostics: z.array(diagnosticSchema.loose()),
    configDigest: z.string(),
    receipt: receiptSchema.loose(),
  })
  .meta({ id: 'Decision' });

export const pendingSchema = z
  .object({ runId, status: z.literal('pending') })
  .meta({ id: 'DecisionPending' });

export const outcomeBodySchema = z
  .strictObject({
    status: z.enum(['applying', 'applied', 'failed']),
    detail: z.string().max(2000).optional(),
  })
  .meta({ id: 'OutcomeReport' });

export const outcomeAnswerSchema = z
  .object({
    runId,
    stepId: z.string(),
    status: z.enum(['applying', 'applied', 'failed', 'uncertain']),
    detail: z.string().optional(),
    at: isoTime,
  })
  .meta({ id: 'StepOutcome' });

export const feedSchema = z
  .object({
    decisions: z.array(z.object({ cursor: z.string(), decision: decisionSchema })),
    cursor: z.string().meta({ description: 'Pass as `after` to read on from here.' }),
  })
  .meta({ id: 'DecisionFeed' });

export const jwksSchema = z
  .object({
    keys: z.array(
      z.looseObject({
        kty: z.literal('OKP'),
        crv: z.literal('Ed25519'),
        x: z.string(),
        kid: z.string(),
        alg: z.literal('EdDSA').optional(),
        use: z.literal('sig').optional(),
      }),
    ),
  })
  .meta({ id: 'JWKS' });

/** Every refusal's code. */
export const ERROR_CODES = [
  'invalid_request',
  'unauthorized',
  'not_found',
  'method_not_allowed',
  'run_exists',
  'already_claimed',
  'not_approved',
  'too_large',
  'rate_limited',
  'unavailable',
  'internal',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const errorSchema = z
  .object({ error: z.object({ code: z.enum(ERROR_CODES), message: z.string() }) })
  .meta({ id: 'Error' });

export type SubmitBody = z.input<typeof submitBodySchema>;
export type SubmitAccepted = z.output<typeof submitAcceptedSchema>;
export type SubmitInvalid = Omit<z.output<typeof submitInvalidSchema>, 'diagnostics'> & {
  readonly diagnostics: readonly Diagnostic[];
};
export type RunStatusBody = z.output<typeof runStatusSchema>;
export type OutcomeBody = z.output<typeof outcomeBodySchema>;
export type OutcomeAnswer = z.output<typeof outcomeAnswerSchema>;
export type ErrorBody = z.output<typeof errorSchema>;

/** The paths, one place (the client builds them, the server matches them). */
export const PATHS = {
  runs: '/v1/runs',
  run: (id: string) => `/v1/runs/${encodeURIComponent(id)}`,
  decision: (id: string, waitSeconds?: number) =>
    `/v1/runs/${encodeURIComponent(id)}/decision${waitSeconds === undefined ? '' : `?wait=${waitSeconds}`}`,
  outcome: (id: string, stepId: string) =>
    `/v1/runs/${encodeURIComponent(id)}/steps/${encodeURIComponent(stepId)}/outcome`,
  decisions: (after?: string, waitSeconds?: number) => {
    const query = new URLSearchParams();
    if (after !== undefined) query.set('after', after);
    if (waitSeconds !== undefined) query.set('wait', String(waitSeconds));
    const text = query.toString();
    return `/v1/decisions${text === '' ? '' : `?${text}`}`;
  },
  openapi: '/v1/openapi.json',
  jwks: '/.well-known/jwks.json',
} as const;

/** The longest a long poll may wait, in seconds. */
export const MAX_WAIT_SECONDS = 60;
