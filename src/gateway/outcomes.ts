/** `POST /v1/runs/{runId}/steps/{stepId}/outcome`: the agent says what happened when it ran a step. */
import { z } from 'zod';
import type { StepOutcome } from '../approvals/index.ts';
import { type OutcomeAnswer, outcomeBodySchema } from '../protocol/index.ts';
import type { AgentRequest, GatewayDeps } from './context.ts';
import { sendError, sendJson } from './http.ts';
import { notFound } from './runs.ts';

export async function reportOutcome(deps: GatewayDeps, request: AgentRequest): Promise<void> {
  const { res, agent } = request;
  const runId = request.params.runId ?? '';
  const stepId = request.params.stepId ?? '';
  let json: unknown;
  try {
    json = JSON.parse(request.body);
  } catch {
    return sendError(
      res,
      'invalid_request',
      'the body must be JSON: {"status": "applying" | "applied" | "failed", "detail"?: "…", "metrics"?: {"name": 123}}',
    );
  }
  const parsed = outcomeBodySchema.safeParse(json);
  if (!parsed.success) return sendError(res, 'invalid_request', z.prettifyError(parsed.error));
  if ((await deps.approvals.agentOf(runId)) !== agent) return notFound(request, runId);
  const result = await deps.approvals.recordOutcome({
    runId,
    stepId,
    status: parsed.data.status,
    ...(parsed.data.detail === undefined ? {} : { detail: parsed.data.detail }),
    ...(parsed.data.metrics === undefined ? {} : { metrics: parsed.data.metrics }),
  });
  switch (result.kind) {
    case 'recorded':
      return sendJson(res, 200, answer(runId, result.outcome));
    case 'already_claimed':
      return sendJson(res, 409, {
        error: {
          code: 'already_claimed',
          message: `step ${stepId} was already reported ${result.outcome.status} at ${new Date(result.outcome.at).toISOString()}: do not run it again`,
          outcome: answer(runId, result.outcome),
        },
      });
    case 'not_approved':
      return sendError(
        res,
        'not_approved',
        result.status === 'pending'
          ? `run ${runId} is pending and step ${stepId.slice(0, 64)} was not released: it may not run yet`
          : `run ${runId} is ${result.status}, not approved: nothing may run`,
      );
    case 'unknown_step':
      return sendError(
        res,
        'not_found',
        `run ${runId} has no step ${JSON.stringify(stepId.slice(0, 64))} in the version approved`,
      );
    case 'not_found':
      return notFound(request, runId);
  }
}

function answer(runId: string, outcome: StepOutcome): OutcomeAnswer {
  return {
    runId,
    stepId: outcome.stepId,
    status: outcome.status,
    ...(outcome.detail === undefined ? {} : { detail: outcome.detail }),
    ...(outcome.metrics === undefined ? {} : { metrics: { ...outcome.metrics } }),
    at: new Date(outcome.at).toISOString(),
  };
}
