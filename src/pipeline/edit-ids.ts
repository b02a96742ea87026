import { stepDigest } from './digest.ts';
import type { JsonObject } from './json.ts';
import type { Step } from './plan.ts';

/** A step as an edit submits it: existing steps keep their id, new steps may leave it out. */
export interface EditedStep {
  readonly id?: string;
  readonly tool: string;
  readonly args: JsonObject;
  readonly dependsOn?: readonly string[];
}

/**
 * The ids of an edited plan's steps. A step keeps its id when the base plan has it, when the run never
 * used it, or when it comes back with exactly the bytes it last had under that id (a discarded or
 * reverted edit). Any other step — one without an id, or one claiming an id the run used for
 * something else — gets an id the run has never used, so an approval given to another step (bound to
 * its id and digest) can never count for it. `history` is every id the run used → its last digest.
 * @example assignEditStepIds(new Set(['s1', 's2']), { s1: d1, s2: d2, s3: d3 }, [{ tool, args }]) // → id 's4'
 */
export function assignEditStepIds(
  baseIds: ReadonlySet<string>,
  history: Readonly<Record<string, string>>,
  steps: readonly EditedStep[],
): Step[] {
  const keeps = (step: EditedStep): step is EditedStep & { id: string } =>
    step.id !== undefined &&
    (baseIds.has(step.id) || !Object.hasOwn(history, step.id) || history[step.id] === digestOrNull(step));
  const used = new Set([...Object.keys(history), ...steps.flatMap((step) => (keeps(step) ? [step.id] : []))]);
  let next = Math.max(0, ...[...used].map((id) => Number(/^s(\d+)$/.exec(id)?.[1] ?? 0))) + 1;
  return steps.map((step) => {
    let id: string;
    if (keeps(step)) id = step.id;
    else {
      while (used.has(`s${next}`)) next++;
      id = `s${next}`;
      used.add(id);
    }
    return step.dependsOn === undefined || step.dependsOn.length === 0
      ? { id, tool: step.tool, args: step.args }
      : { id, tool: step.tool, args: step.args, dependsOn: step.dependsOn };
  });
}

/** The step's digest, or null when its arguments are not canonical JSON (validation will say why). */
function digestOrNull(step: EditedStep): string | null {
  try {
    return stepDigest(step);
  } catch {
    return null;
  }
}
