/** The four validation phases, in the order they run (docs/architecture.md §5). */
export const PHASES = ['parse', 'resolve', 'type', 'authorize'] as const;
export type Phase = (typeof PHASES)[number];

/**
 * Every diagnostic code, keyed by the phase that emits it. The union is closed: views, metrics and
 * agents switch on it.
 */
export const DIAGNOSTIC_CODES = {
  parse: [
    'invalid_json',
    'duplicate_key',
    'plan_too_large',
    'too_many_steps',
    'no_steps',
    'string_too_long',
    'too_deep',
    'non_integer_number',
    'negative_zero',
    'unsafe_integer',
    'unknown_key',
    'missing_field',
    'invalid_field',
    'invalid_step_id',
    'duplicate_step_id',
    'unknown_dependency',
    'self_dependency',
    'dependency_cycle',
  ],
  resolve: ['unknown_agent', 'unknown_tool', 'tool_not_allowed'],
  type: ['missing_argument', 'unknown_argument', 'invalid_argument'],
  authorize: [
    'check_failed',
    'may_author',
    'unapprovable',
    'immutable_field',
    'expiry_out_of_bounds',
    'blocked',
  ],
} as const satisfies Record<Phase, readonly string[]>;

export type DiagnosticCode = (typeof DIAGNOSTIC_CODES)[Phase][number];

/** One problem found by a phase; `message` is written for the person who must fix it. */
export interface Diagnostic {
  readonly phase: Phase;
  readonly code: DiagnosticCode;
  readonly stepId?: string;
  /** Path inside the step's args (or the envelope when there is no stepId), e.g. `['window']`. */
  readonly path?: readonly (string | number)[];
  readonly message: string;
}

/** The non-throwing result of one phase. */
export type PhaseResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

export function ok<T>(value: T): PhaseResult<T> {
  return { ok: true, value };
}

export function failed<T>(diagnostics: readonly Diagnostic[]): PhaseResult<T> {
  return { ok: false, diagnostics };
}

/** Builds a diagnostic, leaving out absent optional fields (exactOptionalPropertyTypes). */
export function diagnostic(
  phase: Phase,
  code: DiagnosticCode,
  message: string,
  where: { stepId?: string | undefined; path?: readonly (string | number)[] | undefined } = {},
): Diagnostic {
  return {
    phase,
    code,
    message,
    ...(where.stepId === undefined ? {} : { stepId: where.stepId }),
    ...(where.path === undefined || where.path.length === 0 ? {} : { path: where.path }),
  };
}

/** Renders a value for a message: strings quoted, objects by kind, never the whole payload. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
    return `the string ${JSON.stringify(shown)}`;
  }
  if (typeof value === 'number') {
    if (Object.is(value, -0)) return 'the number -0';
    return `the number ${String(value)}`;
  }
  if (typeof value === 'boolean') return `the boolean ${String(value)}`;
  if (Array.isArray(value)) return `a list of ${value.length}`;
  return 'an object';
}
