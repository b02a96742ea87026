import { z } from 'zod';
import { checkJsonValue } from '../check-json-value.ts';
import type { PlanLimits, ValidationContext } from '../context.ts';
import { dependencyProblems } from '../dependencies.ts';
import { type Diagnostic, describeValue, diagnostic, failed, ok, type PhaseResult } from '../diagnostics.ts';
import { digestedDependencies } from '../digest.ts';
import { parseDuration } from '../duration.ts';
import { isJsonObject, type JsonObject, type JsonValue, valueAt } from '../json.ts';
import type { IfBlocked, PlanEnvelope, Step } from '../plan.ts';
import { parseStrictJson } from '../strict-json.ts';
import type { JsonValueProblem, StrictJsonProblem } from '../strict-json-problems.ts';

/** Ids used in Slack block ids, job ids and Redis keys: no `:`, `|`, `{` or spaces. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** Run ids are longer so a UUID or an agent's own scheme fits. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

// Values were already proven to be JSON by the strict reader, so args and context are only checked to
// be objects here (re-walking them with z.json() would double the cost of parsing).
const jsonObject = z.custom<JsonObject>(isJsonObject, 'expected an object');

const IF_BLOCKED = ['review', 'refuse'] as const satisfies readonly IfBlocked[];

const stepSchema = z.strictObject({
  id: z.string().optional(),
  tool: z.string().min(1).max(64),
  args: jsonObject,
  dependsOn: z.array(z.string()).optional(),
});

const envelopeSchema = z.strictObject({
  runId: z.string().regex(RUN_ID_PATTERN),
  agent: z.string().regex(ID_PATTERN),
  summary: z.string().max(3000).optional(),
  context: jsonObject.optional(),
  expiresAt: z.iso.datetime().optional(),
  expiresIn: z.string().max(32).optional(),
  ifBlocked: z.enum(IF_BLOCKED).optional(),
  steps: z.array(stepSchema),
});

const FIELD_EXPECTATIONS: Record<string, string> = {
  runId: `letters, digits, "-" and "_" (at most 128, no ":" or spaces)`,
  agent: `letters, digits, "-" and "_" (at most 64)`,
  summary: 'text of at most 3000 characters',
  context: 'an object',
  expiresAt: 'an ISO 8601 UTC time like 2026-04-06T14:30:00Z',
  expiresIn: `a duration like '2h' or '30m'`,
  ifBlocked: `"review" or "refuse"`,
  steps: 'a list of steps',
  id: `letters, digits, "-" and "_" (at most 64, starting with a letter or digit)`,
  tool: 'a tool name',
  args: 'an object of arguments',
  dependsOn: 'a list of step ids, like ["s1", "s2"]',
};

/**
 * How a plan's expiry is settled when it gives `expiresIn` or nothing: relative to `now`, with the
 * agent's (or the config's) default when it gives nothing.
 */
export interface ExpiryRule {
  /** Milliseconds since the epoch. */
  readonly now: number;
  /** The default for `agent`'s plans, in milliseconds. */
  defaultMs(agent: string): number;
}

/**
 * Phase 1: bytes or an object → the plan envelope. Strict: duplicate keys, floats, NaN, ±Infinity,
 * -0, unknown keys and anything over the size limits are rejected here, before any step is read.
 * Steps without an id get the first free `s<n>`. A plan gives `expiresAt`, `expiresIn` or neither;
 * the envelope always has `expiresAt` (whole seconds).
 */
export function parse(raw: unknown, ctx: ValidationContext): PhaseResult<PlanEnvelope> {
  const { config } = ctx;
  return parseEnvelope(raw, config.limits, {
    now: ctx.now,
    defaultMs: (agent) =>
      Object.hasOwn(config.agentExpiresInMs, agent)
        ? (config.agentExpiresInMs[agent] ?? config.defaultExpiresInMs)
        : config.defaultExpiresInMs,
  });
}

/**
 * The parse phase with only its limits and expiry rule: what the agent client runs before signing,
 * so an agent gets the server's own parse diagnostics without the server's config.
 */
export function parseEnvelope(
  raw: unknown,
  limits: PlanLimits,
  expiry: ExpiryRule,
): PhaseResult<PlanEnvelope> {
  const value = readJson(raw, limits);
  if (!value.ok) return value;

  const steps = (value.value as { steps?: unknown } | null)?.steps;
  if (Array.isArray(steps) && steps.length === 0) {
    return failed([diagnostic('parse', 'no_steps', 'the plan has no steps', { path: ['steps'] })]);
  }
  if (Array.isArray(steps) && steps.length > limits.maxSteps) {
    return failed([
      diagnostic(
        'parse',
        'too_many_steps',
        `the plan has ${steps.length} steps; at most ${limits.maxSteps} are allowed`,
        {
          path: ['steps'],
        },
      ),
    ]);
  }
  const fast = wellFormedEnvelope(value.value);
  if (fast !== undefined) return assignStepIds(fast, expiry);
  // Something is off: let zod find every problem and say what it is.
  const result = envelopeSchema.safeParse(value.value);
  if (!result.success)
    return failed(result.error.issues.flatMap((issue) => envelopeDiagnostics(issue, value.value)));
  return assignStepIds(result.data, expiry);
}

/** The envelope's `expiresAt`: as given, or `now` + `expiresIn` (or the default), in whole seconds. */
function settleExpiry(envelope: ParsedEnvelope, expiry: ExpiryRule): PhaseResult<string> {
  if (envelope.expiresAt !== undefined && envelope.expiresIn !== undefined) {
    return failed([
      diagnostic('parse', 'invalid_field', 'give expiresIn or expiresAt, not both', { path: ['expiresIn'] }),
    ]);
  }
  if (envelope.expiresAt !== undefined) return ok(envelope.expiresAt);
  let ms = expiry.defaultMs(envelope.agent);
  if (envelope.expiresIn !== undefined) {
    const given = parseDuration(envelope.expiresIn);
    if (given === undefined || given === 0) {
      return failed([
        diagnostic(
          'parse',
          'invalid_field',
          `expiresIn must be ${FIELD_EXPECTATIONS.expiresIn}, got ${describeValue(envelope.expiresIn)}`,
          { path: ['expiresIn'] },
        ),
      ]);
    }
    ms = given;
  }
  // Whole seconds: the instant is shown on the card and is part of the plan digest.
  const at = Math.ceil((expiry.now + ms) / 1000) * 1000;
  return ok(new Date(at).toISOString().replace('.000Z', 'Z'));
}

const ENVELOPE_KEYS = new Set([
  'runId',
  'agent',
  'summary',
  'context',
  'expiresAt',
  'expiresIn',
  'ifBlocked',
  'steps',
]);
const STEP_KEYS = new Set(['id', 'tool', 'args', 'dependsOn']);
const isoDateTime = z.iso.datetime();

/**
 * The common case, checked by hand: exactly what `envelopeSchema` accepts, or undefined. A plan is
 * validated on every submission and edit, and zod's object machinery was a tenth of `validate`'s time.
 * Anything this refuses goes through the schema, which produces the diagnostics.
 */
function wellFormedEnvelope(value: JsonValue): ParsedEnvelope | undefined {
  if (!isJsonObject(value)) return undefined;
  for (const key in value) if (!ENVELOPE_KEYS.has(key)) return undefined;
  const { runId, agent, summary, context, expiresAt, expiresIn, ifBlocked, steps } = value;
  if (typeof runId !== 'string' || !RUN_ID_PATTERN.test(runId)) return undefined;
  if (typeof agent !== 'string' || !ID_PATTERN.test(agent)) return undefined;
  if (summary !== undefined && (typeof summary !== 'string' || summary.length > 3000)) return undefined;
  if (context !== undefined && !isJsonObject(context)) return undefined;
  if (expiresAt !== undefined && (typeof expiresAt !== 'string' || !isoDateTime.safeParse(expiresAt).success))
    return undefined;
  if (expiresIn !== undefined && (typeof expiresIn !== 'string' || expiresIn.length > 32)) return undefined;
  if (ifBlocked !== undefined && !(IF_BLOCKED as readonly unknown[]).includes(ifBlocked)) return undefined;
  if (!Array.isArray(steps)) return undefined;
  for (const step of steps) {
    if (!isJsonObject(step)) return undefined;
    for (const key in step) if (!STEP_KEYS.has(key)) return undefined;
    if (step.id !== undefined && typeof step.id !== 'string') return undefined;
    if (typeof step.tool !== 'string' || step.tool.length === 0 || step.tool.length > 64) return undefined;
    if (!isJsonObject(step.args)) return undefined;
    const { dependsOn } = step;
    if (
      dependsOn !== undefined &&
      !(Array.isArray(dependsOn) && dependsOn.every((id) => typeof id === 'string'))
    )
      return undefined;
  }
  return value as ParsedEnvelope;
}

function readJson(raw: unknown, limits: PlanLimits): PhaseResult<JsonValue> {
  if (typeof raw === 'string') {
    const bytes = utf8Length(raw);
    if (bytes > limits.maxPlanBytes) return failed([tooLarge(bytes, limits)]);
    const parsed = parseStrictJson(raw, limits);
    return parsed.ok ? ok(parsed.value) : failed(parsed.problems.map(problemDiagnostic));
  }
  const checked = checkJsonValue(raw, limits);
  if (!checked.ok) return failed(checked.problems.map(problemDiagnostic));
  // Own copy: the caller's object is never frozen or aliased by the validated plan.
  const text = JSON.stringify(raw);
  const bytes = utf8Length(text);
  if (bytes > limits.maxPlanBytes) return failed([tooLarge(bytes, limits)]);
  return ok(JSON.parse(text) as JsonValue);
}

function tooLarge(bytes: number, limits: PlanLimits): Diagnostic {
  return diagnostic(
    'parse',
    'plan_too_large',
    `the plan is ${bytes} bytes; at most ${limits.maxPlanBytes} are allowed`,
  );
}

function problemDiagnostic(problem: StrictJsonProblem | JsonValueProblem): Diagnostic {
  const code = problem.code === 'not_json' ? 'invalid_json' : problem.code;
  return diagnostic('parse', code, problem.message, { stepId: stepIdOf(problem.path), path: problem.path });
}

/** `['steps', 1, 'args', 'amount']` in a raw plan names step 2 until ids are known. */
function stepIdOf(path: readonly (string | number)[]): string | undefined {
  return path[0] === 'steps' && typeof path[1] === 'number' ? `#${path[1] + 1}` : undefined;
}

function envelopeDiagnostics(issue: z.core.$ZodIssue, input: JsonValue): Diagnostic[] {
  const path = issue.path.filter((key): key is string | number => typeof key !== 'symbol');
  const where = { stepId: stepIdOf(path), path };
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) =>
      diagnostic('parse', 'unknown_key', `unknown field ${JSON.stringify(key)}${at(path)}`, {
        ...where,
        path: [...path, key],
      }),
    );
  }
  const received = valueAt(input, path);
  const field = String(path.at(-1) ?? 'plan');
  const expected = FIELD_EXPECTATIONS[field] ?? issue.message.toLowerCase();
  if (received === undefined) {
    return [
      diagnostic(
        'parse',
        'missing_field',
        `${field} is required${at(path.slice(0, -1))} (${expected})`,
        where,
      ),
    ];
  }
  return [
    diagnostic(
      'parse',
      'invalid_field',
      `${field}${at(path.slice(0, -1))} must be ${expected}, got ${describeValue(received)}`,
      where,
    ),
  ];
}

/** " in step 2" / " in the plan" suffix for envelope messages. */
function at(path: readonly (string | number)[]): string {
  if (path[0] === 'steps' && typeof path[1] === 'number') return ` in step ${path[1] + 1}`;
  return '';
}

type ParsedEnvelope = z.output<typeof envelopeSchema>;

function assignStepIds(envelope: ParsedEnvelope, expiry: ExpiryRule): PhaseResult<PlanEnvelope> {
  const expiresAt = settleExpiry(envelope, expiry);
  if (!expiresAt.ok) return expiresAt;
  const diagnostics: Diagnostic[] = [];
  const given = new Set<string>();
  envelope.steps.forEach((step, index) => {
    if (step.id === undefined) return;
    if (!ID_PATTERN.test(step.id)) {
      diagnostics.push(
        diagnostic(
          'parse',
          'invalid_step_id',
          `step ${index + 1}: id ${JSON.stringify(step.id)} must be ${FIELD_EXPECTATIONS.id}`,
          {
            stepId: `#${index + 1}`,
            path: ['steps', index, 'id'],
          },
        ),
      );
    } else if (given.has(step.id)) {
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
    given.add(step.id);
  });
  if (diagnostics.length > 0) return failed(diagnostics);

  let next = 1;
  const steps: Step[] = envelope.steps.map((step) => {
    let { id } = step;
    if (id === undefined) {
      while (given.has(`s${next}`)) next++;
      id = `s${next}`;
      given.add(id);
    }
    const dependsOn = digestedDependencies(step.dependsOn);
    return dependsOn === undefined
      ? { id, tool: step.tool, args: step.args }
      : { id, tool: step.tool, args: step.args, dependsOn };
  });
  const duplicates = duplicateDependencies(envelope.steps, steps);
  const graph = duplicates.length > 0 ? duplicates : dependencyProblems(steps);
  if (graph.length > 0) return failed(graph);
  const plan: { -readonly [K in keyof PlanEnvelope]: PlanEnvelope[K] } = {
    runId: envelope.runId,
    agent: envelope.agent,
    expiresAt: expiresAt.value,
    steps,
  };
  if (envelope.summary !== undefined) plan.summary = envelope.summary;
  if (envelope.context !== undefined) plan.context = envelope.context;
  if (envelope.ifBlocked !== undefined) plan.ifBlocked = envelope.ifBlocked;
  return ok(plan);
}

/** A step naming the same dependency twice: refused, so what the agent sent is what is approved. */
function duplicateDependencies(raw: ParsedEnvelope['steps'], steps: readonly Step[]): Diagnostic[] {
  const problems: Diagnostic[] = [];
  raw.forEach((step, index) => {
    const seen = new Set<string>();
    for (const [at, id] of (step.dependsOn ?? []).entries()) {
      if (seen.has(id)) {
        problems.push(
          diagnostic('parse', 'invalid_field', `step ${steps[index]?.id}: dependsOn names ${id} twice`, {
            stepId: steps[index]?.id,
            path: ['steps', index, 'dependsOn', at],
          }),
        );
      }
      seen.add(id);
    }
  });
  return problems;
}

/** UTF-8 byte length without encoding the text (it runs on every submission); lone surrogates count 3, as U+FFFD. */
export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
