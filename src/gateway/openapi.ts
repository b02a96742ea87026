/**
 * `GET /v1/openapi.json`: OpenAPI 3.1, generated from the zod schemas the server answers with and the
 * client reads with (src/protocol/wire.ts) — there is no hand-kept copy to drift.
 */
import { z } from 'zod';
import {
  decisionSchema,
  errorSchema,
  feedSchema,
  jwksSchema,
  outcomeAnswerSchema,
  outcomeBodySchema,
  pendingSchema,
  releasesSchema,
  runStatusSchema,
  submitAcceptedSchema,
  submitBodySchema,
  submitInvalidSchema,
} from '../protocol/index.ts';

const SCHEMAS = {
  PlanSubmission: submitBodySchema,
  SubmissionAccepted: submitAcceptedSchema,
  SubmissionInvalid: submitInvalidSchema,
  RunStatus: runStatusSchema,
  Decision: decisionSchema,
  DecisionPending: pendingSchema,
  Releases: releasesSchema,
  OutcomeReport: outcomeBodySchema,
  StepOutcome: outcomeAnswerSchema,
  DecisionFeed: feedSchema,
  JWKS: jwksSchema,
  Error: errorSchema,
} as const;

type SchemaName = keyof typeof SCHEMAS;

const ref = (name: SchemaName) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: SchemaName, description: string) => ({
  description,
  content: { 'application/json': { schema: ref(name) } },
});
const refusals = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => [String(status), json('Error', REFUSAL_TEXT[status] ?? 'refused')]),
  );
const REFUSAL_TEXT: Record<number, string> = {
  400: 'a parameter or body that cannot be read',
  401: 'missing or bad signature, unknown agent, or a timestamp more than 5 minutes off',
  404: 'no such run for this agent (another agent’s run answers the same)',
  409: 'conflict (see the error code)',
  413: 'the body is over the size limit',
  429: 'over the agent’s request rate; see Retry-After',
};
const runId = { name: 'runId', in: 'path', required: true, schema: { type: 'string' } };
const wait = {
  name: 'wait',
  in: 'query',
  required: false,
  description: 'Seconds to hold the request open for an answer (0 to 60, default 0)',
  schema: { type: 'number', minimum: 0, maximum: 60 },
};

/** The document, built once. */
export function openApiDocument(serverUrl?: string): Record<string, unknown> {
  const generated = z.toJSONSchema(z.globalRegistry, {
    uri: (id) => `#/components/schemas/${id}`,
    unrepresentable: 'any',
  }).schemas as Record<string, Record<string, unknown>>;
  const schemas = Object.fromEntries(
    (Object.keys(SCHEMAS) as SchemaName[]).map((name) => {
      const { $schema: _schema, $id: _id, ...schema } = generated[name] ?? {};
      return [name, schema];
    }),
  );
  // Schemas the listed ones refer to (a Diagnostic, a Receipt) come along.
  for (const [name, schema] of Object.entries(generated)) {
    if (!(name in schemas)) {
      const { $schema: _schema, $id: _id, ...rest } = schema;
      schemas[name] = rest;
    }
  }
  const signed = [{ countersignSignature: [] }];
  return {
    openapi: '3.1.0',
    info: {
      title: 'Countersign agent API',
      version: '1',
      description:
        'Agents submit plans, read decisions and report outcomes. Every request is signed (see docs/http-api.md); decisions carry Ed25519 receipts verifiable with /.well-known/jwks.json.',
    },
    ...(serverUrl === undefined ? {} : { servers: [{ url: serverUrl }] }),
    components: {
      schemas,
      securitySchemes: {
        countersignSignature: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Countersign-Signature',
          description:
            'v1=<hex HMAC-SHA256(agent secret, "v1:" + X-Countersign-Timestamp + ":" + METHOD + ":" + path-with-query + ":" + raw body)>, with X-Countersign-Agent and X-Countersign-Timestamp (unix seconds).',
        },
      },
    },
    paths: {
      '/v1/runs': {
        post: {
          summary: 'Submit a plan; validated before the answer. Idempotent on runId.',
          security: signed,
          requestBody: { required: true, content: { 'application/json': { schema: ref('PlanSubmission') } } },
          responses: {
            '202': json(
              'SubmissionAccepted',
              'stored as version 1: pending, or approved when every step is automatic',
            ),
            '422': json('SubmissionInvalid', 'refused by the validation pipeline'),
            ...refusals(400, 401, 409, 413, 429),
          },
        },
      },
      '/v1/runs/{runId}': {
        get: {
          summary:
            'A run: status, current version, digests, steps still awaiting approval; each step’s dependencies, release and outcome; the steps applied.',
          security: signed,
          parameters: [runId],
          responses: { '200': json('RunStatus', 'the run'), ...refusals(401, 404, 429) },
        },
      },
      '/v1/runs/{runId}/decision': {
        get: {
          summary: 'The run’s decision, long-polled.',
          security: signed,
          parameters: [runId, wait],
          responses: {
            '200': json('Decision', 'decided'),
            '202': json('DecisionPending', 'not decided when the wait ended'),
            ...refusals(400, 401, 404, 429),
          },
        },
      },
      '/v1/runs/{runId}/releases': {
        get: {
          summary:
            'The steps released before the run is decided, each as its signed release, oldest first; long-polled until there are more than `after` or the run is decided.',
          security: signed,
          parameters: [
            runId,
            {
              name: 'after',
              in: 'query',
              required: false,
              description: 'How many releases the caller holds already (default 0)',
              schema: { type: 'integer', minimum: 0 },
            },
            wait,
          ],
          responses: {
            '200': json('Releases', 'the run’s status and its releases (possibly none)'),
            ...refusals(400, 401, 404, 429),
          },
        },
      },
      '/v1/runs/{runId}/steps/{stepId}/outcome': {
        post: {
          summary:
            'Report a step’s outcome; `applying` claims the step. Allowed once the run is approved, or for a step released before.',
          security: signed,
          parameters: [runId, { name: 'stepId', in: 'path', required: true, schema: { type: 'string' } }],
          requestBody: { required: true, content: { 'application/json': { schema: ref('OutcomeReport') } } },
          responses: { '200': json('StepOutcome', 'recorded'), ...refusals(400, 401, 404, 409, 429) },
        },
      },
      '/v1/decisions': {
        get: {
          summary:
            'The agent’s decisions, oldest first, at least once, long-polled; pass `cursor` back as `after`.',
          security: signed,
          parameters: [{ name: 'after', in: 'query', required: false, schema: { type: 'string' } }, wait],
          responses: {
            '200': json('DecisionFeed', 'the next decisions (possibly none)'),
            ...refusals(400, 401, 429),
          },
        },
      },
      '/v1/openapi.json': {
        get: { summary: 'This document.', responses: { '200': { description: 'OpenAPI 3.1' } } },
      },
      '/.well-known/jwks.json': {
        get: {
          summary: 'The public keys that verify decision and release receipts (current and previous).',
          responses: { '200': json('JWKS', 'RFC 8037 OKP/Ed25519 keys with kid') },
        },
      },
    },
  };
}
