import type { Precondition } from './change-set.ts';
import { unmetDependencies } from './dependencies.ts';
import type { Diagnostic, Phase } from './diagnostics.ts';
import { planDigest, stepDigest } from './digest.ts';
import type { JsonObject } from './json.ts';
import {
  type Receipt,
  type ReceiptKeys,
  type ReceiptSigner,
  type ReceiptVerification,
  signReceipt,
  verifyReceiptWith,
} from './receipt.ts';

/** The terminal outcome sent to the agent (docs/architecture.md §1). */
export type DecisionStatus = 'approved' | 'rejected' | 'expired' | 'invalid';

/** Who approved a step, bound to the digest they approved. */
export interface StepApproval {
  readonly userId: string;
  /** ISO 8601 UTC. */
  readonly at: string;
}

/** Who wrote a step as decided: the agent, or a person who added or changed it in an edit. */
export interface DecisionProvenance {
  readonly by: 'agent' | 'user';
  /** The Slack user who added or changed the step; null for the agent's own steps. */
  readonly userId: string | null;
  /** The version in which the step took the form decided on. */
  readonly version: number;
  /** For a person's step: whether they added it or changed one of the agent's (null when not known). */
  readonly change: 'added' | 'changed' | null;
}

export interface DecisionStep {
  readonly id: string;
  readonly tool: string;
  readonly args: JsonObject;
  /** The step digest that was approved; the executor recomputes it before the effect. */
  readonly digest: string;
  readonly route: 'auto' | 'review' | 'block';
  /** The approvals that counted for this step: given to its id at this digest, oldest first. */
  readonly approvals: readonly StepApproval[];
  readonly provenance: DecisionProvenance;
  /** The steps it depends on, sorted; present only when it has any (docs/receipts.md). */
  readonly dependsOn?: readonly string[];
  /**
   * The target as it was read when the step was previewed (what the approvers saw); the executor
   * checks it still holds right before the effect. Present only for a step with a change set.
   */
  readonly preconditions?: readonly Precondition[];
}

/** The plan version a decision is about, exactly as it was approved. */
export interface DecisionPlan {
  readonly runId: string;
  readonly agent: string;
  readonly expiresAt: string;
  readonly digest: string;
  readonly steps: readonly DecisionStep[];
}

/**
 * What the agent receives. Every field is JSON (null, never undefined) so the receipt — Countersign's
 * Ed25519 signature over the canonical JSON of everything but `receipt` (docs/receipts.md) — can be
 * verified in any language.
 */
export interface Decision {
  readonly runId: string;
  readonly agent: string;
  readonly status: DecisionStatus;
  /** The plan version decided on; null for `invalid`. */
  readonly version: number | null;
  readonly plan: DecisionPlan | null;
  /** ISO 8601 UTC. */
  readonly decidedAt: string;
  /** A Slack user id, `'timer'` for expiry, `'policy'` when every step was auto-approved, null for invalid. */
  readonly decidedBy: string | null;
  /** The rejecter's reason, or why the run expired or was refused. */
  readonly reason: string | null;
  /** For `invalid`: the phase that rejected the plan and its diagnostics. */
  readonly phase: Phase | null;
  readonly diagnostics: readonly Diagnostic[];
  /** Digest of the policy/config the decision was made under. */
  readonly configDigest: string;
  /**
   * Steps released before the decision, with what the agent reported of each when it was decided;
   * present only when some were (docs/receipts.md).
   */
  readonly released?: readonly ReleasedStep[];
  readonly receipt: Receipt;
}

/** A step released before the plan was decided, as the final decision lists it. */
export interface ReleasedStep {
  readonly stepId: string;
  /** ISO 8601 UTC. */
  readonly releasedAt: string;
  /** The agent's last report on it when the run was decided, null when none. */
  readonly outcome: 'applying' | 'applied' | 'failed' | null;
}

export type UnsignedDecision = Omit<Decision, 'receipt'>;

/** Signs a decision with Countersign's key. */
export function signDecision(decision: UnsignedDecision, signer: ReceiptSigner): Decision {
  return { ...decision, receipt: signReceipt(decision as unknown as JsonObject, signer) };
}

/** Whether the receipt was made by one of `keys` (by its kid) over exactly these contents. */
export function verifyReceipt(decision: Decision, keys: ReceiptKeys): ReceiptVerification {
  const { receipt, ...unsigned } = decision as Decision & Record<string, unknown>;
  return verifyReceiptWith(unsigned as unknown as JsonObject, receipt, keys);
}

/**
 * One step released to the agent before its plan is decided (a `continue` step whose approvals are
 * complete and whose dependencies are applied). Signed like a decision (docs/receipts.md); the final
 * decision follows as usual. `plan` is the version as it stood at the release.
 */
export interface Release {
  readonly kind: 'release';
  readonly runId: string;
  readonly agent: string;
  readonly version: number;
  readonly plan: DecisionPlan;
  /** The released step's id. */
  readonly stepId: string;
  /** ISO 8601 UTC. */
  readonly releasedAt: string;
  readonly configDigest: string;
  readonly receipt: Receipt;
}

export type UnsignedRelease = Omit<Release, 'receipt'>;

/** Signs a release with Countersign's key. */
export function signRelease(release: UnsignedRelease, signer: ReceiptSigner): Release {
  return { ...release, receipt: signReceipt(release as unknown as JsonObject, signer) };
}

/** A decision or a release: what an executor may hold for a step. */
export type Grant = Decision | Release;

export function isRelease(grant: Grant): grant is Release {
  return (grant as { kind?: unknown }).kind === 'release';
}

export type StepVerification =
  | {
      readonly ok: true;
      /** The step as approved. */
      readonly step: DecisionStep;
      /** Who wrote it: an executor can tell a person's step from the model's before running it. */
      readonly provenance: DecisionProvenance;
      /**
       * The target versions the approvers saw (empty when the step has none): check them against the
       * versions read now, right before the effect (`checkPreconditions`), and apply only if they hold.
       */
      readonly preconditions: readonly Precondition[];
    }
  | WorldChanged
  | {
      readonly ok: false;
      readonly reason:
        | 'bad_receipt'
        | 'not_approved'
        | 'not_released'
        | 'expired'
        | 'unknown_step'
        | 'digest_mismatch'
        | 'plan_mismatch'
        | 'dependency_not_applied';
      readonly message: string;
    };

/** The step about to run: its dependencies, when not given, are taken from the approved step. */
export interface StepToRun {
  readonly id: string;
  readonly tool: string;
  readonly args: JsonObject;
  readonly dependsOn?: readonly string[];
}

/**
 * The gate in front of an effect: call it immediately before executing `step`. Checks the receipt;
 * that the grant covers the step (a final decision that approved the plan, or a release of this very
 * step); the expiry; that the plan digest matches the plan carried; that the step's digest recomputed
 * from the tool and args about to run equals the approved digest; and that every step it depends on
 * is in `applied` (the steps the agent has reported applied: the client asks Countersign).
 * @example
 * const check = verifyDecisionStep(decision, step, keysFromJwks(jwks), Date.now(), applied);
 * if (!check.ok) throw new Error(`not executing ${step.id}: ${check.message}`);
 */
export function verifyDecisionStep(
  grant: Grant,
  step: StepToRun,
  keys: ReceiptKeys,
  now: number,
  applied: ReadonlySet<string> = new Set(),
): StepVerification {
  const receipt = verifyGrantReceipt(grant, keys);
  if (!receipt.ok) {
    return {
      ok: false,
      reason: 'bad_receipt',
      message: `the ${isRelease(grant) ? 'release' : 'decision'} receipt does not verify with Countersign's keys: ${receipt.message}`,
    };
  }
  const covered = coverage(grant, step);
  if (!covered.ok) return covered;
  const { plan } = covered;
  const expiresAt = Date.parse(plan.expiresAt);
  // An expiry that is not a date fails closed: nobody can say the approval still holds.
  if (Number.isNaN(expiresAt) || now >= expiresAt) {
    return {
      ok: false,
      reason: 'expired',
      message: Number.isNaN(expiresAt)
        ? `the approval's expiry ${JSON.stringify(plan.expiresAt)} is not a date`
        : `the approval expired at ${plan.expiresAt}`,
    };
  }
  if (planDigest(plan) !== plan.digest) {
    return {
      ok: false,
      reason: 'plan_mismatch',
      message: `the plan in the ${isRelease(grant) ? 'release' : 'decision'} does not match its digest`,
    };
  }
  const approved = plan.steps.find((candidate) => candidate.id === step.id);
  if (approved === undefined) {
    return {
      ok: false,
      reason: 'unknown_step',
      message: `step ${step.id} is not in the approved plan (version ${grant.version})`,
    };
  }
  const digest = stepDigest({
    tool: step.tool,
    args: step.args,
    dependsOn: step.dependsOn ?? approved.dependsOn,
  });
  if (digest !== approved.digest || stepDigest(approved) !== approved.digest) {
    return {
      ok: false,
      reason: 'digest_mismatch',
      message: `step ${step.id} is not what was approved (digest ${digest.slice(0, 12)}… ≠ ${approved.digest.slice(0, 12)}…)`,
    };
  }
  const unmet = unmetDependencies(approved, applied);
  if (unmet.length > 0) {
    return {
      ok: false,
      reason: 'dependency_not_applied',
      message: `step ${step.id} depends on ${unmet.join(', ')}, not reported applied yet`,
    };
  }
  return {
    ok: true,
    step: approved,
    provenance: approved.provenance,
    preconditions: approved.preconditions ?? [],
  };
}

/**
 * A target moved since the step was approved (or its version could not be read now): the approvers
 * saw another world. Preview again and ask for approval again; never apply.
 */
export interface WorldChanged {
  readonly ok: false;
  readonly reason: 'world_changed';
  /** The entity whose version no longer matches. */
  readonly entity: { readonly type: string; readonly id: string };
  /** The version it was read at when the step was previewed and approved. */
  readonly approvedVersion: string;
  /** The version read now; null when it could not be read (gone, or the read failed). */
  readonly currentVersion: string | null;
  readonly message: string;
}

/**
 * The version of an entity as read right before the effect; null or undefined when it cannot be
 * read (no such entity any more, or not read at all), which fails closed.
 */
export type CurrentVersion = (entity: {
  readonly type: string;
  readonly id: string;
}) => string | null | undefined;

/**
 * Whether the world still looks as the approvers saw it: each precondition's version equals the
 * version `current` reads now (compared as opaque strings). Pure; the first precondition that does
 * not hold is named. No preconditions always hold.
 * @example
 * const check = checkPreconditions(verified.preconditions, (entity) => versions.get(`${entity.type}:${entity.id}`));
 * if (!check.ok) throw new Error(check.message); // "delivery dl_55120 changed since it was approved (version 7 → 9): …"
 */
export function checkPreconditions(
  preconditions: readonly Precondition[],
  current: CurrentVersion,
): { readonly ok: true } | WorldChanged {
  for (const precondition of preconditions) {
    const entity = { type: precondition.type, id: precondition.id };
    const now = current(entity);
    if (now === precondition.version) continue;
    const name = `${precondition.type} ${precondition.id}`;
    const currentVersion = typeof now === 'string' ? now : null;
    return {
      ok: false,
      reason: 'world_changed',
      entity,
      approvedVersion: precondition.version,
      currentVersion,
      message:
        currentVersion === null
          ? `${name} could not be read now (it was at version ${precondition.version} when approved): preview again and ask for approval again; do not apply`
          : `${name} changed since it was approved (version ${precondition.version} → ${currentVersion}): preview again and ask for approval again; do not apply`,
    };
  }
  return { ok: true };
}

function verifyGrantReceipt(grant: Grant, keys: ReceiptKeys): ReceiptVerification {
  const { receipt, ...unsigned } = grant as Grant & Record<string, unknown>;
  return verifyReceiptWith(unsigned as unknown as JsonObject, receipt, keys);
}

/** Whether the grant lets `step` run at all: an approved final decision, or this step's release. */
function coverage(
  grant: Grant,
  step: StepToRun,
): { readonly ok: true; readonly plan: DecisionPlan } | (StepVerification & { ok: false }) {
  if (isRelease(grant)) {
    if (grant.stepId !== step.id) {
      return {
        ok: false,
        reason: 'not_released',
        message: `step ${step.id} was not released: this release is for ${grant.stepId}`,
      };
    }
    return { ok: true, plan: grant.plan };
  }
  if (grant.status !== 'approved' || grant.plan === null) {
    const released = grant.released?.some((entry) => entry.stepId === step.id) === true;
    return {
      ok: false,
      reason: 'not_approved',
      message: released
        ? `the run was ${grant.status}; step ${step.id} was released before that, so only its release lets it run`
        : `the run was ${grant.status}, not approved`,
    };
  }
  return { ok: true, plan: grant.plan };
}
