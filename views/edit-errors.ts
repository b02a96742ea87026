/**
 * Errors on the edit form, at the fields a person can fix them in: the dependencies the form would
 * save (before anything is sent), the pipeline's diagnostics mapped to block ids, and the answer to a
 * submission once `applyEdit` has spoken.
 */
import type { ModalView } from '@slack/types';
import type { UseCaseResult } from '../src/approvals/types.ts';
import type { EditedStep } from '../src/pipeline/index.ts';
import { type Diagnostic, dependencyProblems, describeFieldPath } from '../src/pipeline/index.ts';
import { argBlockId, dependencyBlockId, EDIT_IDS, type EditLayout } from './edit-layout.ts';
import { editRefusalModal } from './edit-modal.ts';
import { tooLongMessage } from './input-messages.ts';
import { listInWords, truncate } from './mrkdwn.ts';

/** Longest error shown under one field. */
const ERROR_MAX = 500;

/**
 * Puts pipeline diagnostics where the editor will see them: `arg:<stepId>:<path>` when that input is
 * shown (or the nearest shown parent path), else the step's first shown field (a plan-level problem
 * with a step, such as may_author on an added step), else `remove_steps`. Several messages for one
 * block are joined.
 */
export function diagnosticsToModalErrors(
  diagnostics: readonly Diagnostic[],
  inputBlockIds: readonly string[],
  stepIds: readonly string[] = [],
): Record<string, string> {
  const shown = new Set(inputBlockIds);
  const fallback = shown.has(EDIT_IDS.removeSteps) ? EDIT_IDS.removeSteps : inputBlockIds[0];
  const messages = new Map<string, string[]>();
  for (const raw of diagnostics) {
    const dependencies = atDependencies(raw, stepIds, shown);
    if (dependencies !== undefined) {
      messages.set(dependencies, [...(messages.get(dependencies) ?? []), dependencyMessage(raw)]);
      continue;
    }
    const diagnostic = atArgument(raw, stepIds);
    const field = targetBlock(diagnostic, shown, inputBlockIds);
    const target = field ?? fallback;
    if (target === undefined) continue;
    const message =
      field === argBlockId(diagnostic.stepId ?? '', diagnostic.path ?? [])
        ? atField(diagnostic)
        : raw.message;
    messages.set(target, [...(messages.get(target) ?? []), message]);
  }
  return Object.fromEntries(
    [...messages].map(([blockId, list]) => [blockId, truncate(list.join(' · '), ERROR_MAX)]),
  );
}

/** The dependency input a problem with `steps[i].dependsOn` belongs at, when the form shows it. */
function atDependencies(
  diagnostic: Diagnostic,
  stepIds: readonly string[],
  shown: ReadonlySet<string>,
): string | undefined {
  const { path } = diagnostic;
  if (path?.[0] !== 'steps' || typeof path[1] !== 'number' || path[2] !== 'dependsOn') return undefined;
  const stepId = stepIds[path[1]] ?? diagnostic.stepId;
  const blockId = stepId === undefined ? undefined : dependencyBlockId(stepId);
  return blockId !== undefined && shown.has(blockId) ? blockId : undefined;
}

/**
 * A parse-phase diagnostic about a whole plan's JSON (`steps[0].args.note`, step `#1`) as one about
 * the step and argument it is in, using the ids of the steps the form submitted, in order.
 */
function atArgument(diagnostic: Diagnostic, stepIds: readonly string[]): Diagnostic {
  const { path } = diagnostic;
  if (path === undefined || path[0] !== 'steps' || typeof path[1] !== 'number' || path[2] !== 'args')
    return diagnostic;
  const stepId = stepIds[path[1]];
  return stepId === undefined ? diagnostic : { ...diagnostic, stepId, path: path.slice(3) };
}

/**
 * A diagnostic shown under its own field, in the person's terms: what the field holds instead of
 * `step s1: note …` or `string at steps[0].args.note …` (the field's label already says which it is).
 */
function atField(diagnostic: Diagnostic): string {
  if (diagnostic.code === 'string_too_long') {
    const counts = /is (\d+) characters long; the limit is (\d+)/.exec(diagnostic.message);
    if (counts) return tooLongMessage(Number(counts[1]), Number(counts[2]));
    return 'This is longer than Countersign accepts; shorten it.';
  }
  if (diagnostic.phase === 'type' && diagnostic.stepId !== undefined && diagnostic.path !== undefined) {
    const prefix = `step ${diagnostic.stepId}: ${describeFieldPath(diagnostic.path)} `;
    if (diagnostic.message.startsWith(prefix)) {
      const rest = diagnostic.message.slice(prefix.length);
      const counts = /^must be at most (\d+) characters \(got (\d+)\)$/.exec(rest);
      if (counts) return tooLongMessage(Number(counts[2]), Number(counts[1]));
      return `${capitalize(rest.replace(/^is /, ''))}.`.replace(/\.\.$/, '.');
    }
  }
  return diagnostic.message;
}

function targetBlock(
  diagnostic: Diagnostic,
  shown: ReadonlySet<string>,
  inputBlockIds: readonly string[],
): string | undefined {
  const { stepId, path } = diagnostic;
  if (stepId === undefined) return undefined;
  for (let length = path?.length ?? 0; length > 0; length--) {
    const blockId = argBlockId(stepId, path!.slice(0, length));
    if (shown.has(blockId)) return blockId;
  }
  const prefix = argBlockId(stepId, []);
  return inputBlockIds.find((blockId) => blockId.startsWith(prefix));
}

/** What to answer a view_submission with: field errors, a replacement view, or close the modal. */
export type EditSubmissionAck =
  | { readonly response_action: 'errors'; readonly errors: Readonly<Record<string, string>> }
  | { readonly response_action: 'update'; readonly view: ModalView }
  | { readonly response_action: 'clear' };

/**
 * The answer to an edit modal's submission, from what `applyEdit` gave: the pipeline's diagnostics
 * stay in the modal next to their fields (`shown`: the read's input block ids); a new version (or no
 * change) closes the modal; anything else — the plan changed meanwhile, a decision, no rights —
 * replaces the form with the reason (`editRefusalModal`).
 * @example await ack(editResultAck(await service.applyEdit(edit), { inputBlockIds: read.inputBlockIds, baseVersion, now }));
 */
export function editResultAck(
  result: UseCaseResult,
  context: {
    readonly inputBlockIds: readonly string[];
    /** Ids of the submitted steps, in order: a problem found at `steps[i]` belongs to the i-th. */
    readonly stepIds?: readonly string[];
    readonly baseVersion: number;
    readonly now: number;
    readonly tz?: string;
  },
): EditSubmissionAck {
  switch (result.kind) {
    case 'invalid':
      return {
        response_action: 'errors',
        errors: diagnosticsToModalErrors(result.diagnostics, context.inputBlockIds, context.stepIds),
      };
    case 'edited':
    case 'unchanged':
      return { response_action: 'clear' };
    default:
      return { response_action: 'update', view: editRefusalModal(result, context) };
  }
}

/**
 * What is wrong with the dependencies the form would save, at the fields a person can fix it in: a
 * removed step others still depend on (at that step's dependency input, else at `remove_steps`: "s3
 * depends on this step; remove that dependency first"); a step picked that is not in the plan, the
 * step itself, or steps depending on each other in a circle (at the dependency input).
 */
export function dependencyErrors(
  steps: readonly EditedStep[],
  removed: ReadonlySet<string>,
  layout: EditLayout,
): Record<string, string> {
  const errors = new Map<string, string[]>();
  const add = (blockId: string, message: string) =>
    errors.set(blockId, [...(errors.get(blockId) ?? []), message]);
  const inputOf = (stepId: string | undefined) =>
    layout.shown.find((slot) => slot.id === stepId)?.dependencyBlockId;
  for (const id of removed) {
    const dependents = steps
      .filter((step) => step.dependsOn?.includes(id) === true)
      .map((step) => step.id ?? '');
    if (dependents.length === 0) continue;
    const verb = dependents.length === 1 ? 'depends' : 'depend';
    const input = inputOf(id);
    if (input !== undefined)
      add(input, `${listInWords(dependents)} ${verb} on this step; remove that dependency first.`);
    else
      add(
        EDIT_IDS.removeSteps,
        `${listInWords(dependents)} ${verb} on ${id}; remove that dependency first, or keep ${id}.`,
      );
  }
  if (errors.size > 0) return joinErrors(errors);
  const nodes = steps.map((step) => ({
    id: step.id ?? '',
    ...(step.dependsOn ? { dependsOn: step.dependsOn } : {}),
  }));
  for (const problem of dependencyProblems(nodes)) {
    const input = inputOf(problem.stepId) ?? EDIT_IDS.removeSteps;
    add(input, dependencyMessage(problem));
  }
  return joinErrors(errors);
}

function joinErrors(errors: ReadonlyMap<string, readonly string[]>): Record<string, string> {
  return Object.fromEntries(
    [...errors].map(([blockId, list]) => [blockId, truncate(list.join(' '), ERROR_MAX)]),
  );
}

/** A dependency problem of the pipeline in the words of the form. */
function dependencyMessage(problem: Diagnostic): string {
  const cycle = /in a circle: (.+)$/.exec(problem.message);
  switch (problem.code) {
    case 'dependency_cycle':
      return `These steps would wait for each other forever: ${cycle?.[1] ?? problem.message}. Remove one of these dependencies.`;
    case 'self_dependency':
      return 'A step cannot depend on itself.';
    case 'unknown_dependency': {
      const unknown = /depends on (.+), which is not a step/.exec(problem.message)?.[1];
      return `${unknown ?? 'A step picked here'} is not a step of this plan any more; pick again.`;
    }
    default:
      return problem.message;
  }
}

export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Sets (or, for OMIT, deletes) the value at `path`, creating objects on the way for new steps. */
