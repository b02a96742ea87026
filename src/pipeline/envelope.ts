import type { PlanEnvelope, ValidatedPlan } from './plan.ts';

/** The plan envelope of a validated plan: what `validate` accepts back (no digests, routes or notes). */
export function envelopeOf(plan: ValidatedPlan): PlanEnvelope {
  return {
    runId: plan.runId,
    agent: plan.agent,
    ...(plan.summary === undefined ? {} : { summary: plan.summary }),
    ...(plan.context === undefined ? {} : { context: plan.context }),
    expiresAt: plan.expiresAt,
    steps: plan.steps.map((step) =>
      step.dependsOn === undefined
        ? { id: step.id, tool: step.tool, args: step.args }
        : { id: step.id, tool: step.tool, args: step.args, dependsOn: step.dependsOn },
    ),
  };
}
