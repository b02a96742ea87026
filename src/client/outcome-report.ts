/** `AgentClient.reportOutcome` (agent-client.ts): a step's outcome reported, and every refusal read. */
import { CountersignError, ID_PATTERN } from '../pipeline/index.ts';
import { errorSchema, type OutcomeAnswer, outcomeAnswerSchema, PATHS } from '../protocol/index.ts';
import { isRequestError } from './errors.ts';
import type { HttpAnswer, HttpRequest, HttpTransport } from './http.ts';

/** A step's outcome as the server recorded it. */
export type StepOutcome = OutcomeAnswer;

/**
 * What `reportOutcome` answers.
 * - `already_claimed`: the step was claimed (`applying`) or finished before: do not run it.
 *   `afterLostAnswer` says an earlier attempt of this same call got no answer and may have been
 *   recorded, so the claim may be this call's own — still do not run the step: it stays `applying`,
 *   turns `uncertain` and a person resolves it. Never both runs.
 * - `not_approved`: the run is not approved (it was rejected, expired, or is still pending).
 * - `not_found` / `unknown_step`: no such run for this agent / no such step in the approved plan.
 */
export type OutcomeReport =
  | { readonly ok: true; readonly outcome: StepOutcome }
  | {
      readonly ok: false;
      readonly reason: 'already_claimed';
      readonly message: string;
      readonly afterLostAnswer: boolean;
      /** The recorded outcome, when the server says which. */
      readonly outcome?: StepOutcome;
    }
  | {
      readonly ok: false;
      readonly reason: 'not_approved' | 'not_found' | 'unknown_step';
      readonly message: string;
    };

/** What the executor reports of a step. */
export interface OutcomeInput {
  readonly status: 'applying' | 'applied' | 'failed';
  /** Why it failed, or what it did (cut to 2,000 characters). */
  readonly detail?: string;
  /**
   * Named whole numbers about what the step did, e.g. `{ refund_cents: 148900 }` (at most 20; names
   * lower-case with `_`): `npm run insights` compares them across agent-written and edited steps.
   */
  readonly metrics?: Readonly<Record<string, number>>;
}

/** What the server keeps of `detail`. */
const DETAIL_MAX = 2000;
/** The 409 body, read with what a server may add about the outcome already recorded. */
const claimRefusalSchema = errorSchema.extend({
  error: errorSchema.shape.error.extend({ outcome: outcomeAnswerSchema.optional().catch(undefined) }),
});

/** What reporting needs of the client. */
export interface OutcomeReporting {
  readonly http: HttpTransport;
  readonly agent: string;
  read<T>(request: HttpRequest, answer: HttpAnswer, schema: { parse(value: unknown): T }): T;
  getRun(runId: string): Promise<unknown>;
}

/** Reports one step's outcome (see `AgentClient.reportOutcome`); the run id is already checked. */
export async function reportStepOutcome(
  client: OutcomeReporting,
  runId: string,
  stepId: string,
  report: OutcomeInput,
): Promise<OutcomeReport> {
  if (!ID_PATTERN.test(stepId)) {
    throw new CountersignError('invalid_argument', `not a step id: ${JSON.stringify(stepId)}`);
  }
  const body = {
    status: report.status,
    ...(report.detail === undefined ? {} : { detail: report.detail.slice(0, DETAIL_MAX) }),
    ...(report.metrics === undefined ? {} : { metrics: report.metrics }),
  };
  const request: HttpRequest = {
    method: 'POST',
    path: PATHS.outcome(runId, stepId),
    body: JSON.stringify(body),
  };
  const answer = await client.http.request(request);
  if (answer.status >= 200 && answer.status < 300)
    return { ok: true, outcome: client.read(request, answer, outcomeAnswerSchema) };
  const refusal = claimRefusalSchema.safeParse(answer.body);
  const code = refusal.success ? refusal.data.error.code : undefined;
  if (answer.status === 409 && refusal.success && code === 'already_claimed') {
    const { message, outcome } = refusal.data.error;
    return {
      ok: false,
      reason: 'already_claimed',
      message: answer.afterLostAnswer
        ? `${message} (an earlier attempt of this report got no answer: the claim may be its own; the step is left for a person, as uncertain)`
        : message,
      afterLostAnswer: answer.afterLostAnswer,
      ...(outcome === undefined ? {} : { outcome }),
    };
  }
  if (answer.status === 409 && refusal.success && code === 'not_approved') {
    return { ok: false, reason: 'not_approved', message: refusal.data.error.message };
  }
  if (answer.status === 404) return notFound(client, runId, stepId);
  throw client.http.refusal(request, answer);
}

/** A 404 on an outcome: the run is unknown, or only the step is (the run answers). */
async function notFound(client: OutcomeReporting, runId: string, stepId: string): Promise<OutcomeReport> {
  const run = await client.getRun(runId).catch((error: unknown) => {
    if (isRequestError(error) && error.code === 'not_found') return undefined;
    throw error;
  });
  return run === undefined
    ? { ok: false, reason: 'not_found', message: `there is no run ${runId} for agent ${client.agent}` }
    : { ok: false, reason: 'unknown_step', message: `run ${runId} has no step ${stepId}` };
}
