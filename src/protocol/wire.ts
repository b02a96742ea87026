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
  type Release,
  RUN_ID_PATTERN,
} from '../pipeline/index.ts';

const jsonObject = z.custom<JsonObject>(isJsonObject, 'expected an object').meta({ type: 'object' });
const runId = z
  .string()
  .regex(RUN_ID_PATTERN)
  .meta({ description: 'The run id (letters, digits, - and _).' });
const isoTime = z.string().meta({ description: 'ISO 8601 UTC' });
const stepIds = z.array(z.string());

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
    steps: z.array(
      z.object({
        id: z.string().optional(),
        tool: z.string(),
        args: jsonObject,
        dependsOn: stepIds.optional().meta({
          description:
            'Ids of the steps whose effects this one needs applied first (no cycles; order in the list implies none).',
        }),
      }),
    ),
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
        dependsOn: stepIds.meta({ description: 'The steps it depends on, sorted (empty when none).' }),
        released: isoTime
          .nullable()
          .meta({ description: 'When it was released before the plan was decided; null when it was not.' }),
        outcome: z
          .enum(['applying', 'applied', 'failed', 'uncertain'])
          .nullable()
          .meta({ description: 'What the agent reported of it; null when nothing yet.' }),
      }),
    ),
    applied: stepIds.meta({
      description: 'The steps reported applied, sorted: what a step that depends on others waits for.',
    }),
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

/** The plan version a decision or a release is about, exactly as approved (pipeline/decision.ts). */
const decisionPlanSchema = z.looseObject({
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
      dependsOn: stepIds
        .optional()
        .meta({ description: 'The steps it depends on, sorted; absent when none.' }),
      preconditions: z
        .array(z.looseObject({ type: z.string(), id: z.string(), version: z.string() }))
        .optional()
        .meta({
          description:
            'The target as its tool previewed it when approved (docs/receipts.md): check each version right before the effect; absent when none.',
        }),
    }),
  ),
});

const reportedStatus = z.enum(['applying', 'applied', 'failed']);

// Loose objects: fields a newer server adds are kept, so the receipt (over every field) still verifies.
export const decisionSchema = z
  .looseObject({
    runId: z.string(),
    agent: z.string(),
    status: z.enum(['approved', 'rejected', 'expired', 'invalid']),
    version: z.number().nullable(),
    plan: decisionPlanSchema.nullable(),
    decidedAt: z.string(),
    decidedBy: z.string().nullable(),
    reason: z.string().nullable(),
    phase: z.enum(PHASES).nullable(),
    diagnostics: z.array(diagnosticSchema.loose()),
    configDigest: z.string(),
    released: z
      .array(
        z.looseObject({
          stepId: z.string(),
          releasedAt: isoTime,
          outcome: reportedStatus.nullable().meta({
            description:
              'What the agent had reported of the step when the run was decided; null when nothing.',
          }),
        }),
      )
      .optional()
      .meta({ description: 'Steps released before the run was decided; absent when none were.' }),
    receipt: receiptSchema.loose(),
  })
  .meta({ id: 'Decision' });

export const releaseSchema = z
  .looseObject({
    kind: z.literal('release'),
    runId: z.string(),
    agent: z.string(),
    version: z.number(),
    plan: decisionPlanSchema,
    stepId: z.string().meta({ description: 'The one step this release lets run.' }),
    releasedAt: isoTime,
    configDigest: z.string(),
    receipt: receiptSchema.loose(),
  })
  .meta({
    id: 'Release',
    description:
      'One step released before the plan is decided (a `continue` step whose approvals are complete and whose dependencies are applied), signed like a decision (docs/receipts.md).',
  });

export const releasesSchema = z
  .object({
    runId,
    status: z.enum(['pending', 'approved', 'rejected', 'expired', 'invalid']).meta({
      description: 'The run now: once it is not pending no more releases come, and its decision is there.',
    }),
    releases: z.array(releaseSchema).meta({ description: 'Every release of the run so far, oldest first.' }),
  })
  .meta({ id: 'Releases' });

export const pendingSchema = z
  .object({ runId, status: z.literal('pending') })
  .meta({ id: 'DecisionPending' });

/** A named number reported with an outcome: a safe integer (money in minor units), named like `refund_cents`. */
export const OUTCOME_METRIC_NAME = /^[a-z][a-z0-9_]{0,63}$/;
/** How many named numbers one outcome report may carry. */
export const OUTCOME_METRICS_MAX = 20;

export const outcomeMetricsSchema = z
  .record(
    z.string(),
    z.int({ error: 'a metric is a whole number (money in minor units: cents), not a fraction' }),
  )
  .superRefine((metrics, ctx) => {
    const names = Object.keys(metrics);
    if (names.length > OUTCOME_METRICS_MAX)
      ctx.addIssue({
        code: 'custom',
        message: `at most ${OUTCOME_METRICS_MAX} metrics per report, not ${names.length}`,
      });
    for (const name of names.filter((name) => !OUTCOME_METRIC_NAME.test(name)))
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `${JSON.stringify(name.slice(0, 64))} is not a metric name: lower-case letters, digits and _, starting with a letter (refund_cents)`,
      });
  })
  .meta({
    description:
      'Named numbers about what the step did (`{"refund_cents": 148900}`), compared by `npm run insights` across steps the agent wrote and steps people edited or added.',
  });

export const outcomeBodySchema = z
  .strictObject({
    status: reportedStatus,
    detail: z.string().max(2000).optional(),
    metrics: outcomeMetricsSchema.optional(),
  })
  .meta({ id: 'OutcomeReport' });

export const outcomeAnswerSchema = z
  .object({
    runId,
    stepId: z.string(),
    status: z.enum(['applying', 'applied', 'failed', 'uncertain']),
    detail: z.string().optional(),
    metrics: z.record(z.string(), z.int()).optional(),
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
export type ReleasesBody = Omit<z.output<typeof releasesSchema>, 'releases'> & {
  readonly releases: readonly Release[];
};
export type OutcomeBody = z.output<typeof outcomeBodySchema>;
export type OutcomeAnswer = z.output<typeof outcomeAnswerSchema>;
export type ErrorBody = z.output<typeof errorSchema>;

/** The paths, one place (the client builds them, the server matches them). */
export const PATHS = {
  runs: '/v1/runs',
  run: (id: string) => `/v1/runs/${encodeURIComponent(id)}`,
  decision: (id: string, waitSeconds?: number) =>
    `/v1/runs/${encodeURIComponent(id)}/decision${waitSeconds === undefined ? '' : `?wait=${waitSeconds}`}`,
  releases: (id: string, after?: number, waitSeconds?: number) => {
    const query = new URLSearchParams();
    if (after !== undefined) query.set('after', String(after));
    if (waitSeconds !== undefined) query.set('wait', String(waitSeconds));
    const text = query.toString();
    return `/v1/runs/${encodeURIComponent(id)}/releases${text === '' ? '' : `?${text}`}`;
  },
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
