import type { ValidationContext } from '../context.ts';
import { type Diagnostic, diagnostic, failed, ok, type PhaseResult } from '../diagnostics.ts';
import type { PlanEnvelope } from '../plan.ts';

/** Phase 2: the agent is known and every step's tool exists and is on that agent's allowlist. */
export function resolve(plan: PlanEnvelope, ctx: ValidationContext): PhaseResult<PlanEnvelope> {
  const agent = ctx.config.agents[plan.agent];
  if (agent === undefined) {
    return failed([
      diagnostic('resolve', 'unknown_agent', `agent ${JSON.stringify(plan.agent)} is not configured`, {
        path: ['agent'],
      }),
    ]);
  }
  const diagnostics: Diagnostic[] = [];
  for (const step of plan.steps) {
    if (!ctx.config.tools.has(step.tool)) {
      const hint = closest(step.tool, [...ctx.config.tools.keys()]);
      diagnostics.push(
        diagnostic(
          'resolve',
          'unknown_tool',
          `step ${step.id}: there is no tool named ${JSON.stringify(step.tool)}${hint ? ` (did you mean ${hint}?)` : ''}`,
          { stepId: step.id },
        ),
      );
    } else if (!agent.tools.includes(step.tool)) {
      diagnostics.push(
        diagnostic(
          'resolve',
          'tool_not_allowed',
          `step ${step.id}: agent ${plan.agent} may not call ${step.tool} (its tools: ${agent.tools.join(', ')})`,
          { stepId: step.id },
        ),
      );
    }
  }
  return diagnostics.length > 0 ? failed(diagnostics) : ok(plan);
}

/** The known name nearest to `name` by edit distance, if it is plausibly a typo. */
function closest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of known) {
    const distance = editDistance(name, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3) return Number.POSITIVE_INFINITY;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? Number.POSITIVE_INFINITY;
}
