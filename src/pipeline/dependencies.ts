/**
 * Steps' dependencies as a graph (issue "Plans with dependencies"): what parse refuses (unknown ids,
 * a step depending on itself, cycles, named as `s2 → s4 → s2`) and the questions the rest of the system
 * asks of it — who depends on a step, what a step still waits for. Order in the plan's list carries no
 * dependency; only `dependsOn` does.
 */
import { type Diagnostic, diagnostic } from './diagnostics.ts';
import type { Step } from './plan.ts';

type Node = Pick<Step, 'id' | 'dependsOn'>;

/** Unknown, self and circular dependencies, each as a parse diagnostic at the step's `dependsOn`. */
export function dependencyProblems(steps: readonly Node[]): Diagnostic[] {
  const ids = new Set(steps.map((step) => step.id));
  const problems: Diagnostic[] = [];
  steps.forEach((step, index) => {
    for (const [at, dependency] of (step.dependsOn ?? []).entries()) {
      const where = { stepId: step.id, path: ['steps', index, 'dependsOn', at] };
      if (dependency === step.id) {
        problems.push(diagnostic('parse', 'self_dependency', `step ${step.id} depends on itself`, where));
      } else if (!ids.has(dependency)) {
        problems.push(
          diagnostic(
            'parse',
            'unknown_dependency',
            `step ${step.id} depends on ${dependency}, which is not a step of this plan`,
            where,
          ),
        );
      }
    }
  });
  if (problems.length > 0) return problems;
  for (const cycle of dependencyCycles(steps)) {
    const index = steps.findIndex((step) => step.id === cycle[0]);
    problems.push(
      diagnostic(
        'parse',
        'dependency_cycle',
        `the steps depend on each other in a circle: ${cycle.join(' → ')}`,
        {
          stepId: cycle[0],
          path: ['steps', index, 'dependsOn'],
        },
      ),
    );
  }
  return problems;
}

/**
 * Each cycle found once, as the ids along it with the first repeated at the end (`['s2', 's4', 's2']`),
 * starting from the step that comes first in the plan.
 */
export function dependencyCycles(steps: readonly Node[]): string[][] {
  const byId = new Map(steps.map((step) => [step.id, step]));
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[][] = [];
  const path: string[] = [];
  const visit = (id: string): void => {
    state.set(id, 'open');
    path.push(id);
    for (const next of byId.get(id)?.dependsOn ?? []) {
      if (!byId.has(next)) continue;
      const seen = state.get(next);
      if (seen === 'open') cycles.push([...path.slice(path.indexOf(next)), next]);
      else if (seen === undefined) visit(next);
    }
    path.pop();
    state.set(id, 'done');
  };
  for (const step of steps) if (!state.has(step.id)) visit(step.id);
  return cycles;
}

/** The steps that name `id` in their `dependsOn`, in plan order. */
export function dependentsOf(steps: readonly Node[], id: string): string[] {
  return steps.filter((step) => step.dependsOn?.includes(id) === true).map((step) => step.id);
}

/** The dependencies of `step` not in `applied`, in the order the step names them. */
export function unmetDependencies(step: Node, applied: ReadonlySet<string>): string[] {
  return (step.dependsOn ?? []).filter((id) => !applied.has(id));
}
