/**
 * What `AgentClient.submit` accepts, and the local checks that give an agent fast errors before
 * anything is signed or sent: the envelope's shape, step ids, and the JSON rules of docs/architecture.md §2
 * (safe integers only, no -0, no undefined, depth and length limits). Tools, arguments and policy are
 * the server's to judge: the client does not know the config.
 */
import {
  DEFAULT_LIMITS,
  type Diagnostic,
  diagnostic,
  type IfBlocked,
  type JsonObject,
  type PlanLimits,
  parseEnvelope,
} from '../pipeline/index.ts';

export interface PlanStepInput {
  /** Stable across edits; assigned `s1`, `s2`, … by the server when left out. */
  readonly id?: string;
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
  /**
   * Ids of the steps whose effects this one needs applied first (docs/agent-client.md, "Plans with
   * dependencies"). Order in the list implies no dependency.
   */
  readonly dependsOn?: readonly string[];
}

export interface SubmitInput {
  /** Your own run id; default: a fresh UUIDv7. */
  readonly runId?: string;
  /** One line for the people approving. */
  readonly summary?: string;
  /** Facts the tools' hooks may cross-reference (e.g. `{ ticket_id: '74991' }`). */
  readonly context?: Readonly<Record<string, unknown>>;
  readonly steps: readonly PlanStepInput[];
  /**
   * How long the plan stays open, e.g. `'2h'`, counted from when the server receives it. Default: the
   * agent's or the server's configured default (`agents.<name>.expiresIn`, `defaults.expiresIn`); the
   * server caps it at `defaults.maxExpiresIn`.
   */
  readonly expiresIn?: string;
  /** An absolute expiry instead of `expiresIn`. */
  readonly expiresAt?: string | Date;
  /**
   * When policy blocks a step: `'review'` (the server's default) posts the plan anyway, so people see
   * what was tried; `'refuse'` has the server refuse it (a SubmissionError, phase `authorize`, code
   * `blocked`) and post nothing.
   */
  readonly ifBlocked?: IfBlocked;
}

/** The plan envelope as sent (docs/architecture.md §1). */
export interface PlanEnvelopeInput {
  readonly runId: string;
  readonly agent: string;
  readonly summary?: string;
  readonly context?: JsonObject;
  /** Absent with `expiresIn` or when the server's default applies. */
  readonly expiresAt?: string;
  readonly expiresIn?: string;
  readonly ifBlocked?: IfBlocked;
  readonly steps: readonly {
    readonly id?: string;
    readonly tool: string;
    readonly args: JsonObject;
    readonly dependsOn?: readonly string[];
  }[];
}

export type PlanTextResult =
  | { readonly ok: true; readonly envelope: PlanEnvelopeInput; readonly text: string }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

/** Only for checking a plan locally: the server applies its own default to a plan that gives none. */
const CHECK_DEFAULT_MS = 24 * 3_600_000;

/**
 * Checks a submission locally and builds the envelope text that will be signed. Pure: the run id and
 * the time are passed in. The checks are the server's own parse phase (`parseEnvelope`), so an agent
 * gets the same codes and messages before anything is sent; tools, arguments and policy are the
 * server's to judge (the client does not know the config).
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
  const diagnostics: Diagnostic[] = [];
  const expiry = expiryOf(input, options.now, diagnostics);
  if (expiry === undefined) return { ok: false, diagnostics };
  const { runId: _runId, expiresIn: _expiresIn, expiresAt: _expiresAt, ...plan } = input;
  const envelope = { runId: options.runId, agent: options.agent, ...plan, ...expiry };
  const parsed = parseEnvelope(envelope, options.limits ?? DEFAULT_LIMITS, {
    now: options.now,
    defaultMs: () => CHECK_DEFAULT_MS,
  });
  if (!parsed.ok) return { ok: false, diagnostics: parsed.diagnostics };
  // Sent as given (ids the agent left out are assigned by the server, the same way).
  return { ok: true, envelope: envelope as PlanEnvelopeInput, text: JSON.stringify(envelope) };
}

/**
 * What the envelope says about expiry: `expiresIn` as given (the server counts it from when it
 * receives the plan), `expiresAt` as whole-second ISO UTC, or nothing (the server's default).
 * Undefined after recording why neither can be sent.
 */
function expiryOf(
  input: { expiresIn?: string | undefined; expiresAt?: string | Date | undefined },
  now: number,
  diagnostics: Diagnostic[],
): { expiresAt?: string; expiresIn?: string } | undefined {
  if (input.expiresAt === undefined) {
    return input.expiresIn === undefined ? {} : { expiresIn: input.expiresIn };
  }
  if (input.expiresIn !== undefined) {
    diagnostics.push(
      diagnostic('parse', 'invalid_field', 'give expiresIn or expiresAt, not both', { path: ['expiresAt'] }),
    );
    return undefined;
  }
  const at = typeof input.expiresAt === 'string' ? Date.parse(input.expiresAt) : input.expiresAt.getTime();
  if (!Number.isFinite(at) || at <= now) {
    diagnostics.push(
      diagnostic('parse', 'invalid_field', 'the plan would expire before it is sent', {
        path: ['expiresAt'],
      }),
    );
    return undefined;
  }
  // Whole seconds: the instant is shown on the card and is part of the plan digest.
  return { expiresAt: new Date(Math.ceil(at / 1000) * 1000).toISOString().replace('.000Z', 'Z') };
}
