/**
 * What `AgentClient.submit` accepts, and the local checks that give an agent fast errors before
 * anything is signed or sent: the envelope's shape, step ids, and the JSON rules of DESIGN.md §2
 * (safe integers only, no -0, no undefined, depth and length limits). Tools, arguments and policy are
 * the server's to judge: the client does not know the config.
 */
import { z } from 'zod';
import { parseDuration } from '../config/duration.ts';
import {
  DEFAULT_LIMITS,
  type Diagnostic,
  describeValue,
  diagnostic,
  ID_PATTERN,
  isJsonObject,
  type JsonObject,
  type PlanLimits,
  RUN_ID_PATTERN,
} from '../pipeline/index.ts';
// Not re-exported by the pipeline's index (yet): the strict JSON value check the parse phase uses.
import { checkJsonValue, type JsonValueProblem } from '../pipeline/strict-json.ts';

export interface PlanStepInput {
  /** Stable across edits; assigned `s1`, `s2`, … by the server when left out. */
  readonly id?: string;
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
}

export interface SubmitInput {
  /** Your own run id; default: a fresh UUIDv7. */
  readonly runId?: string;
  /** One line for the people approving. */
  readonly summary?: string;
  /** Facts the tools' hooks may cross-reference (e.g. `{ ticket_id: '74991' }`). */
  readonly context?: Readonly<Record<string, unknown>>;
  readonly steps: readonly PlanStepInput[];
  /** How long the plan stays open, e.g. `'2h'` (default `'24h'`; the server caps it). */
  readonly expiresIn?: string;
  /** An absolute expiry instead of `expiresIn`. */
  readonly expiresAt?: string | Date;
}

/** The plan envelope as sent (DESIGN.md §1). */
export interface PlanEnvelopeInput {
  readonly runId: string;
  readonly agent: string;
  readonly summary?: string;
  readonly context?: JsonObject;
  readonly expiresAt: string;
  readonly steps: readonly { readonly id?: string; readonly tool: string; readonly args: JsonObject }[];
}

export type PlanTextResult =
  | { readonly ok: true; readonly envelope: PlanEnvelopeInput; readonly text: string }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

export const DEFAULT_EXPIRES_IN = '24h';

const jsonObject = z.custom<JsonObject>(isJsonObject, 'expected an object');
const inputSchema = z.strictObject({
  runId: z.string().regex(RUN_ID_PATTERN).optional(),
  summary: z.string().max(3000).optional(),
  context: jsonObject.optional(),
  steps: z.array(
    z.strictObject({
      id: z.string().regex(ID_PATTERN).optional(),
      tool: z.string().min(1).max(64),
      args: jsonObject,
    }),
  ),
  expiresIn: z.string().optional(),
  expiresAt: z.union([z.iso.datetime(), z.date()]).optional(),
});

const EXPECTED: Record<string, string> = {
  runId: `letters, digits, "-" and "_" (at most 128)`,
  summary: 'text of at most 3000 characters',
  context: 'an object',
  steps: 'a list of steps',
  id: `letters, digits, "-" and "_" (at most 64, starting with a letter or digit)`,
  tool: 'a tool name (1 to 64 characters)',
  args: 'an object of arguments',
  expiresIn: `a duration like '2h' or '30m'`,
  expiresAt: 'an ISO 8601 UTC time like 2026-04-06T14:30:00Z, or a Date',
};

/**
 * Checks a submission locally and builds the envelope text that will be signed. Pure: the run id and
 * the time are passed in.
 * @example
 * const built = buildPlanText(input, { agent: 'freight-ops', runId, now: Date.now() });
 * if (!built.ok) throw new SubmissionError(built.diagnostics);
 */
export function buildPlanText(
  input: SubmitInput,
  options: {
    readonly agent: string;
    readonly runId: string;
    readonly now: number;
    readonly limits?: PlanLimits;
  },
): PlanTextResult {
  const limits = options.limits ?? DEFAULT_LIMITS;
  const checked = checkJsonValue(withoutDates(input), limits);
  if (!checked.ok) return { ok: false, diagnostics: checked.problems.map(problemDiagnostic) };

  const shape = inputSchema.safeParse(input);
  if (!shape.success)
    return { ok: false, diagnostics: shape.error.issues.flatMap((issue) => issueDiagnostics(issue, input)) };
  const parsed = shape.data;

  const diagnostics: Diagnostic[] = [];
  if (parsed.steps.length === 0)
    diagnostics.push(diagnostic('parse', 'no_steps', 'the plan has no steps', { path: ['steps'] }));
  if (parsed.steps.length > limits.maxSteps) {
    diagnostics.push(
      diagnostic(
        'parse',
        'too_many_steps',
        `the plan has ${parsed.steps.length} steps; at most ${limits.maxSteps} are allowed`,
        {
          path: ['steps'],
        },
      ),
    );
  }
  const seen = new Set<string>();
  parsed.steps.forEach((step, index) => {
    if (step.id === undefined) return;
    if (seen.has(step.id)) {
      diagnostics.push(
        diagnostic(
          'parse',
          'duplicate_step_id',
          `step ${index + 1}: id ${step.id} is already used by an earlier step`,
          {
            stepId: step.id,
            path: ['steps', index, 'id'],
          },
        ),
      );
    }
    seen.add(step.id);
  });
  const expiresAt = expiryOf(parsed, options.now, diagnostics);
  if (diagnostics.length > 0 || expiresAt === undefined) return { ok: false, diagnostics };

  const envelope: PlanEnvelopeInput = {
    runId: options.runId,
    agent: options.agent,
    ...(parsed.summary === undefined ? {} : { summary: parsed.summary }),
    ...(parsed.context === undefined ? {} : { context: parsed.context }),
    expiresAt,
    steps: parsed.steps.map((step) => ({
      ...(step.id === undefined ? {} : { id: step.id }),
      tool: step.tool,
      args: step.args,
    })),
  };
  const text = JSON.stringify(envelope);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limits.maxPlanBytes) {
    return {
      ok: false,
      diagnostics: [
        diagnostic(
          'parse',
          'plan_too_large',
          `the plan is ${bytes} bytes; at most ${limits.maxPlanBytes} are allowed`,
        ),
      ],
    };
  }
  return { ok: true, envelope, text };
}

/** `expiresAt` as whole-second ISO UTC, or undefined after recording why not. */
function expiryOf(
  input: { expiresIn?: string | undefined; expiresAt?: string | Date | undefined },
  now: number,
  diagnostics: Diagnostic[],
): string | undefined {
  if (input.expiresIn !== undefined && input.expiresAt !== undefined) {
    diagnostics.push(
      diagnostic('parse', 'invalid_field', 'give expiresIn or expiresAt, not both', { path: ['expiresAt'] }),
    );
    return undefined;
  }
  let at: number;
  if (input.expiresAt !== undefined) {
    at = typeof input.expiresAt === 'string' ? Date.parse(input.expiresAt) : input.expiresAt.getTime();
  } else {
    const ms = parseDuration(input.expiresIn ?? DEFAULT_EXPIRES_IN);
    if (ms === undefined || ms === 0) {
      diagnostics.push(
        diagnostic(
          'parse',
          'invalid_field',
          `expiresIn must be ${EXPECTED.expiresIn}, got ${describeValue(input.expiresIn)}`,
          { path: ['expiresIn'] },
        ),
      );
      return undefined;
    }
    at = now + ms;
  }
  if (!Number.isFinite(at) || at <= now) {
    diagnostics.push(
      diagnostic('parse', 'invalid_field', 'the plan would expire before it is sent', {
        path: ['expiresAt'],
      }),
    );
    return undefined;
  }
  // Whole seconds: the instant is shown on the card and is part of the plan digest.
  return new Date(Math.ceil(at / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** A Date is not JSON, but `expiresAt` may be one: the JSON rules apply to everything else. */
function withoutDates(input: SubmitInput): unknown {
  if (typeof input !== 'object' || input === null || !(input.expiresAt instanceof Date)) return input;
  const { expiresAt: _date, ...rest } = input;
  return rest;
}

function problemDiagnostic(problem: JsonValueProblem): Diagnostic {
  const code = problem.code === 'not_json' ? 'invalid_json' : problem.code;
  return diagnostic('parse', code, problem.message, { stepId: stepIdOf(problem.path), path: problem.path });
}

function stepIdOf(path: readonly (string | number)[]): string | undefined {
  return path[0] === 'steps' && typeof path[1] === 'number' ? `#${path[1] + 1}` : undefined;
}

/** Worded and coded like the server's parse phase, so an agent sees the same message either way. */
function issueDiagnostics(issue: z.core.$ZodIssue, input: unknown): Diagnostic[] {
  const path = issue.path.filter((key): key is string | number => typeof key !== 'symbol');
  const where = { stepId: stepIdOf(path), path };
  const inStep = path[0] === 'steps' && typeof path[1] === 'number' ? ` in step ${path[1] + 1}` : '';
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) =>
      diagnostic('parse', 'unknown_key', `unknown field ${JSON.stringify(key)}${inStep}`, {
        ...where,
        path: [...path, key],
      }),
    );
  }
  const field = String(path.at(-1) ?? 'plan');
  const expected = EXPECTED[field] ?? issue.message.toLowerCase();
  const received = valueAt(input, path);
  if (received === undefined)
    return [diagnostic('parse', 'missing_field', `${field} is required${inStep} (${expected})`, where)];
  return [
    diagnostic(
      'parse',
      'invalid_field',
      `${field}${inStep} must be ${expected}, got ${describeValue(received)}`,
      where,
    ),
  ];
}

function valueAt(value: unknown, path: readonly (string | number)[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}
