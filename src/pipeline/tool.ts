import { z } from 'zod';
import type { ChangeSet } from './change-set.ts';
import { CountersignError } from './errors.ts';
import type { Annotation, PlanEnvelope } from './plan.ts';

/** What running a tool does to the world. */
export type Effect = 'read' | 'write' | 'irreversible';

/** A tool's argument schema: always a strict object, so unknown arguments are rejected. */
export type ToolArgsSchema = z.ZodObject<z.core.$ZodLooseShape, z.core.$strict>;

/** What a tool hook sees besides the step's own arguments. */
export interface ToolHookContext {
  readonly stepId: string;
  /** The whole plan being validated (its `context` often holds the ticket or account in question). */
  readonly plan: PlanEnvelope;
  /** Milliseconds since the epoch, read at the edge and passed in. */
  readonly now: number;
  /**
   * Aborted when the hook's time budget (`defaults.hookTimeout`) runs out: pass it to `fetch` and the
   * like, so a hook whose answer can no longer count stops its work.
   */
  readonly signal: AbortSignal;
}

/** A problem a tool's `checks` hook found; a plain string is a message about the whole step. */
export type CheckProblem =
  | string
  | { readonly message: string; readonly path?: readonly (string | number)[] };

/**
 * A registered action the agent may plan to call. `summarize` is synchronous; `checks`, `annotate` and
 * `preview` may be async (they may read your systems): they run in parallel for every step, each within
 * its time budget (`defaults.hookTimeout`). A hook that throws, rejects, answers something malformed or
 * runs out of time leaves its step unverified, routed to review (docs/tool-hooks.md).
 */
export interface ToolDefinition<S extends ToolArgsSchema = ToolArgsSchema> {
  readonly name: string;
  /** Human title shown on the card ("Issue refund"). */
  readonly title: string;
  readonly effect: Effect;
  readonly args: S;
  /** One line for the card, e.g. "Refund $1,489.00 on invoice in_74119". */
  summarize?(args: z.output<S>, ctx: ToolHookContext): string;
  /**
   * Argument-bound checks against your data (amount ≤ invoice balance); any problem rejects the plan.
   * Run at submission, for the steps an edit touches, and again when a run is about to be approved.
   */
  checks?(
    args: z.output<S>,
    ctx: ToolHookContext,
  ): readonly CheckProblem[] | Promise<readonly CheckProblem[]>;
  /** Notes for the approver, e.g. cross-references that look wrong; they never reject the plan. */
  annotate?(
    args: z.output<S>,
    ctx: ToolHookContext,
  ): readonly (string | Annotation)[] | Promise<readonly (string | Annotation)[]>;
  /**
   * What the step will change in the world, read from your system: the target entity at the version
   * it was read at, before → after per field, related entities and invariants (src/pipeline/change-set.ts).
   */
  preview?(args: z.output<S>, ctx: ToolHookContext): ChangeSet | Promise<ChangeSet>;
  /**
   * Arguments of other tools that refer to the same thing as one of this tool's (`'<tool>.<arg>'`,
   * nested paths joined with `.`). When an edit changes the argument, a step whose declared field still
   * holds the old value — or, for text, quotes it — is flagged on the diff message and the card. Every
   * other step's text is searched anyway; an empty list says nothing else refers to the argument, so
   * nothing is searched for it. The declaration counts both ways round.
   * @example sameThingAs: { window: ['send_reply.body', 'add_note.note'] }
   */
  readonly sameThingAs?: Readonly<Record<string, readonly string[]>>;
}

/** Raised by `defineTool` for a definition that can never work; names the tool and the fix. */
export class ToolDefinitionError extends CountersignError {
  override readonly name = 'ToolDefinitionError';
  declare readonly code: 'invalid_tool_definition';

  constructor(message: string) {
    super('invalid_tool_definition', message);
  }
}

const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;
const EFFECTS: readonly Effect[] = ['read', 'write', 'irreversible'];
/** `'send_reply.body'`, `'create_order.address.city'`. */
const SAME_THING_REF = /^[a-z][a-z0-9_]{0,63}\.[^.]+(\.[^.]+)*$/;

/** Where inside `schema` an object schema accepts keys it does not declare (`args.address`, `args.items[]`). */
function looseObjectPaths(schema: z.ZodType, path: string): string[] {
  if (schema instanceof z.ZodObject) {
    const own = schema.def.catchall instanceof z.ZodNever ? [] : [path];
    return [
      ...own,
      ...Object.entries(schema.shape).flatMap(([key, field]) =>
        looseObjectPaths(field as z.ZodType, `${path}.${key}`),
      ),
    ];
  }
  if (schema instanceof z.ZodArray) return looseObjectPaths(schema.element as z.ZodType, `${path}[]`);
  if (
    schema instanceof z.ZodOptional ||
    schema instanceof z.ZodNullable ||
    schema instanceof z.ZodDefault ||
    schema instanceof z.ZodReadonly
  ) {
    return looseObjectPaths(schema.def.innerType as z.ZodType, path);
  }
  if (schema instanceof z.ZodUnion) {
    return (schema.options as readonly z.ZodType[]).flatMap((option) => looseObjectPaths(option, path));
  }
  if (schema instanceof z.ZodRecord) return looseObjectPaths(schema.valueType as z.ZodType, `${path}.*`);
  if (schema instanceof z.ZodTuple) {
    return (schema.def.items as readonly z.ZodType[]).flatMap((item, index) =>
      looseObjectPaths(item, `${path}[${index}]`),
    );
  }
  return [];
}

/** Whether `path` names an argument inside `schema` (fields.ts's `fieldAt` would be a cycle here). */
function hasArgument(schema: z.ZodType, path: readonly (string | number)[]): boolean {
  let current: z.ZodType = schema;
  for (const key of path) {
    while (
      current instanceof z.ZodOptional ||
      current instanceof z.ZodNullable ||
      current instanceof z.ZodDefault
    ) {
      current = current.unwrap() as z.ZodType;
    }
    if (current instanceof z.ZodObject && typeof key === 'string' && Object.hasOwn(current.shape, key)) {
      current = current.shape[key] as z.ZodType;
    } else if (current instanceof z.ZodArray && typeof key === 'number') {
      current = current.element as z.ZodType;
    } else {
      return false;
    }
  }
  return true;
}

/**
 * Declares a tool.
 * @example
 * const addNote = defineTool({
 *   name: 'add_note', title: 'Add internal note', effect: 'write',
 *   args: z.strictObject({ ticket_id: text(), note: longText() }),
 * });
 */
export function defineTool<S extends ToolArgsSchema>(definition: ToolDefinition<S>): ToolDefinition<S> {
  if (!TOOL_NAME.test(definition.name)) {
    throw new ToolDefinitionError(
      `tool name ${JSON.stringify(definition.name)} must be snake_case letters, digits and _ (at most 64)`,
    );
  }
  if (!(definition.args instanceof z.ZodObject) || !(definition.args.def.catchall instanceof z.ZodNever)) {
    throw new ToolDefinitionError(
      `tool ${definition.name}: args must be z.strictObject({...}) so unknown arguments are rejected`,
    );
  }
  // `type` checks a step's args but keeps the agent's bytes, so a nested z.object would let unknown
  // keys through to the executor unseen instead of stripping them.
  const loose = looseObjectPaths(definition.args, 'args');
  if (loose.length > 0) {
    throw new ToolDefinitionError(
      `tool ${definition.name}: ${loose.join(', ')} must be z.strictObject({...}) too, so unknown arguments are rejected`,
    );
  }
  if (typeof definition.title !== 'string' || definition.title.trim() === '') {
    throw new ToolDefinitionError(`tool ${definition.name}: title must not be empty`);
  }
  if (!EFFECTS.includes(definition.effect)) {
    throw new ToolDefinitionError(
      `tool ${definition.name}: effect must be one of ${EFFECTS.join(', ')} (got ${JSON.stringify(definition.effect)})`,
    );
  }
  for (const [arg, refs] of Object.entries(definition.sameThingAs ?? {})) {
    const path = arg.split('.').map((part) => (/^\d+$/.test(part) ? Number(part) : part));
    if (!hasArgument(definition.args, path)) {
      throw new ToolDefinitionError(
        `tool ${definition.name}: sameThingAs names ${JSON.stringify(arg)}, which is not one of its arguments`,
      );
    }
    for (const ref of refs) {
      if (!SAME_THING_REF.test(ref)) {
        throw new ToolDefinitionError(
          `tool ${definition.name}: sameThingAs.${arg} entry ${JSON.stringify(ref)} must be written '<tool>.<argument>'`,
        );
      }
    }
  }
  return Object.freeze({ ...definition });
}
