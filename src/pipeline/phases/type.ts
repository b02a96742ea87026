import type { z } from 'zod';
import type { ValidationContext } from '../context.ts';
import { type Diagnostic, describeValue, diagnostic, failed, ok, type PhaseResult } from '../diagnostics.ts';
import { describeExpected, fieldAt, minorUnitsName, moneyCurrency } from '../fields.ts';
import { type JsonValue, valueAt } from '../json.ts';
import { describeFieldPath } from '../json-path.ts';
import { formatMoney } from '../money.ts';
import type { PlanEnvelope, Step } from '../plan.ts';
import type { ToolArgsSchema } from '../tool.ts';

/**
 * Phase 3: each step's args against its tool's strict schema. No coercion: `"20"` is not `20`.
 * Runs after `resolve`, so every tool exists.
 */
export function type(plan: PlanEnvelope, ctx: ValidationContext): PhaseResult<PlanEnvelope> {
  const diagnostics: Diagnostic[] = [];
  for (const step of plan.steps) {
    const tool = ctx.config.tools.get(step.tool);
    if (tool === undefined) continue;
    const result = tool.args.safeParse(step.args);
    if (!result.success)
      diagnostics.push(...result.error.issues.flatMap((issue) => toDiagnostics(issue, step, tool.args)));
  }
  return diagnostics.length > 0 ? failed(diagnostics) : ok(plan);
}

function toDiagnostics(issue: z.core.$ZodIssue, step: Step, schema: ToolArgsSchema): Diagnostic[] {
  const path = issue.path.filter((key): key is string | number => typeof key !== 'symbol');
  const where = (p: readonly (string | number)[]) => ({ stepId: step.id, path: p });
  if (issue.code === 'unrecognized_keys') {
    const known = Object.keys(shapeKeys(schema, path));
    return issue.keys.map((key) =>
      diagnostic(
        'type',
        'unknown_argument',
        `step ${step.id}: ${step.tool} has no argument ${JSON.stringify(describeFieldPath([...path, key]))}${
          known.length > 0 ? ` (it takes ${known.join(', ')})` : ''
        }`,
        where([...path, key]),
      ),
    );
  }
  const field = fieldAt(schema, path);
  const received = valueAt(step.args, path);
  const expected = describeExpected(field);
  const name = describeFieldPath(path);
  const currency = moneyCurrency(field);
  if (received === undefined) {
    return [
      diagnostic(
        'type',
        'missing_argument',
        `step ${step.id}: ${name} is required${expected ? ` (${expected})` : ''}`,
        where(path),
      ),
    ];
  }
  return [
    diagnostic(
      'type',
      'invalid_argument',
      `step ${step.id}: ${name} ${
        currency === undefined
          ? explain(issue, expected, received)
          : explainMoney(issue, currency, expected, received)
      }`,
      where(path),
    ),
  ];
}

/** The part of the message after the argument name, chosen by what went wrong. */
function explain(issue: z.core.$ZodIssue, expected: string | undefined, received: JsonValue): string {
  switch (issue.code) {
    case 'too_big':
    case 'too_small': {
      const bound = String(issue.code === 'too_big' ? issue.maximum : issue.minimum);
      const relation = issue.code === 'too_big' ? 'at most' : 'at least';
      if (issue.origin === 'string') {
        if (issue.code === 'too_small' && bound === '1') return 'must not be empty';
        return `must be ${relation} ${bound} characters (got ${(received as string).length})`;
      }
      if (issue.origin === 'array') return `must have ${relation} ${bound} items`;
      return `must be ${relation} ${bound}, got ${describeValue(received)}`;
    }
    default:
      return `expected ${expected ?? issue.message.toLowerCase()}, got ${describeValue(received)}`;
  }
}

/**
 * Like `explain`, for a money field: bounds and amounts in the currency ("must be at least $0.01, got
 * -$5.00"), never a count of cents that a person would read as dollars.
 */
function explainMoney(
  issue: z.core.$ZodIssue,
  currency: string,
  expected: string | undefined,
  received: JsonValue,
): string {
  // Not a number at all ("twenty"): what the wire format wants is what the author needs to know.
  if (typeof received !== 'number') return explain(issue, expected, received);
  const units = minorUnitsName(currency);
  // Plans carry safe integers only (the parse phase refuses the rest); this keeps the wording right anyway.
  if (!Number.isSafeInteger(received)) {
    return Number.isInteger(received)
      ? `is outside the range of amounts (got ${String(received)} ${units})`
      : `must be a whole number of ${units}, got ${String(received)} ${units}`;
  }
  const got = formatMoney(received, currency);
  const amount = (bound: unknown) =>
    typeof bound === 'number' && Number.isSafeInteger(bound) ? formatMoney(bound, currency) : undefined;
  if (issue.code === 'too_small' || issue.code === 'too_big') {
    const small = issue.code === 'too_small';
    const bound = amount(small ? issue.minimum : issue.maximum);
    const inclusive = issue.inclusive !== false;
    const relation = small ? (inclusive ? 'at least' : 'more than') : inclusive ? 'at most' : 'less than';
    if (bound !== undefined) return `must be ${relation} ${bound}, got ${got}`;
  }
  if (issue.code === 'not_multiple_of') {
    const step = amount(issue.divisor);
    if (step !== undefined) return `must be a multiple of ${step}, got ${got}`;
  }
  return `is not accepted: ${issue.message} (got ${got})`;
}

function shapeKeys(schema: ToolArgsSchema, path: readonly (string | number)[]): Record<string, unknown> {
  const field = fieldAt(schema, path);
  return field !== undefined && 'shape' in field ? (field.shape as Record<string, unknown>) : {};
}
