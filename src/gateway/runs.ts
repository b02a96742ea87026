/**
 * `POST /v1/runs` and `GET /v1/runs/{runId}`: a plan is validated before the answer and stored as v1
 * (idempotent on runId); a run's status — with each step's dependencies, release and reported outcome,
 * and the steps applied — is readable by its own agent only.
 */
import { isJsonObject, parseStrictJson, RUN_ID_PATTERN, validate } from '../pipeline/index.ts';
import type { RunStatusBody, SubmitAccepted, SubmitInvalid } from '../protocol/index.ts';
import type { AgentRequest, GatewayDeps } from './context.ts';
import { sendError, sendJson } from './http.ts';

export async function submitRun(deps: GatewayDeps, request: AgentRequest): Promise<void> {
  const { res, body, agent } = request;
  const runId = readableRunId(deps, body);
  if (runId === undefined) {
    // Nothing to keep the refusal under: answered, not stored.
    const result = await validate(body, { config: deps.config.pipeline, now: deps.clock() });
    if (result.ok) return sendError(res, 'invalid_request', 'the plan needs a runId');
    const answer: SubmitInvalid = {
      runId: null,
      status: 'invalid',
      phase: result.phase,
      diagnostics: result.diagnostics,
    };
    return sendJson(res, 422, answer);
  }
  const result = await deps.approvals.submitPlan({ runId, agent, raw: body });
  switch (result.kind) {
    case 'pending':
    case 'approved':
      return sendJson(res, 202, { runId, status: result.kind, version: 1 } satisfies SubmitAccepted);
    case 'duplicate': {
      if (result.run.status === 'pending') await deps.recover(result.run);
      // The same body again: the answer the first one got.
      const status = result.run.decidedBy === 'policy' ? 'approved' : 'pending';
      return sendJson(res, 202, { runId, status, version: 1 } satisfies SubmitAccepted);
    }
    case 'invalid': {
      const answer: SubmitInvalid = {
        runId,
        status: 'invalid',
        phase: result.phase,
        diagnostics: result.diagnostics,
      };
      return sendJson(res, 422, answer);
    }
    case 'run_exists':
      return sendError(res, 'run_exists', `run ${runId} exists with another plan; use a new run id`);
    default:
      throw new Error(`submitPlan answered ${result.kind}`);
  }
}

/** The run id of a body that is strict JSON naming one, else undefined. */
function readableRunId(deps: GatewayDeps, body: string): string | undefined {
  const parsed = parseStrictJson(body, deps.config.pipeline.limits);
  if (!parsed.ok || !isJsonObject(parsed.value)) return undefined;
  const { runId } = parsed.value;
  return typeof runId === 'string' && RUN_ID_PATTERN.test(runId) ? runId : undefined;
}

export async function runStatus(deps: GatewayDeps, request: AgentRequest): Promise<void> {
  const { res, agent } = request;
  const runId = request.params.runId ?? '';
  if ((await deps.approvals.agentOf(runId)) !== agent) return notFound(request, runId);
  const run = await deps.approvals.getRun(runId);
  if (run === undefined) {
    // Refused as invalid at submission: no version, only its decision.
    const decision = await deps.approvals.getDecision(runId);
    const answer: RunStatusBody = {
      runId,
      agent,
      status: 'invalid',
      version: null,
      planDigest: null,
      expiresAt: null,
      steps: [],
      applied: [],
      awaiting: [],
      decidedAt: decision?.decidedAt ?? null,
      decidedBy: null,
    };
    return sendJson(res, 200, answer);
  }
  // When each step was released is in the run itself; the signed releases are not read for it.
  const outcomes = await deps.approvals.getOutcomes(runId);
  const outcomeOf = new Map(outcomes.map((outcome) => [outcome.stepId, outcome.status]));
  const releasedAt = (stepId: string) => {
    const entry = run.released[stepId];
    return entry === undefined ? null : new Date(entry.at).toISOString();
  };
  const answer: RunStatusBody = {
    runId,
    agent,
    status: run.status,
    version: run.version,
    planDigest: run.current.plan.digest,
    expiresAt: run.current.plan.expiresAt,
    steps: run.current.plan.steps.map((step) => {
      const standing = run.standing[step.id];
      return {
        id: step.id,
        tool: step.tool,
        digest: step.digest,
        route: step.route.kind,
        approvals:
          standing === undefined
            ? null
            : { have: standing.have, need: standing.need, satisfied: standing.satisfied },
        dependsOn: [...(step.dependsOn ?? [])],
        released: releasedAt(step.id),
        outcome: outcomeOf.get(step.id) ?? null,
      };
    }),
    applied: outcomes
      .filter((outcome) => outcome.status === 'applied')
      .map((outcome) => outcome.stepId)
      .sort(),
    awaiting: run.awaiting.map(({ stepId, group, have, need }) => ({ stepId, group, have, need })),
    decidedAt: run.decidedAt === undefined ? null : new Date(run.decidedAt).toISOString(),
    decidedBy: run.decidedBy ?? null,
  };
  return sendJson(res, 200, answer);
}

/** The same answer for an unknown run and another agent's: nothing is learnt about other agents' runs. */
export function notFound(request: AgentRequest, runId: string): void {
  sendError(
    request.res,
    'not_found',
    `no run ${JSON.stringify(runId.slice(0, 140))} for agent ${request.agent}`,
  );
}
