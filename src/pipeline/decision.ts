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
  readonly receipt: Receipt;
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

export type StepVerification =
  | {
      readonly ok: true;
      /** The step as approved. */
      readonly step: DecisionStep;
      /** Who wrote it: an executor can tell a person's step from the model's before running it. */
      readonly provenance: DecisionProvenance;
    }
  | {
      readonly ok: false;
      readonly reason:
        | 'bad_receipt'
        | 'not_approved'
        | 'expired'
        | 'unknown_step'
        | 'digest_mismatch'
        | 'plan_mismatch';
      readonly message: string;
    };

/**
 * The gate in front of an effect: call it immediately before executing `step`. Checks the receipt,
 * the status, the expiry, that the plan digest matches the plan carried, and that the step's digest
 * recomputed from the tool and args about to run equals the approved digest.
 * @example
 * const check = verifyDecisionStep(decision, step, keysFromJwks(jwks), Date.now());
 * if (!check.ok) throw new Error(`not executing ${step.id}: ${check.message}`);
 */
export function verifyDecisionStep(
  decision: Decision,
  step: { readonly id: string; readonly tool: string; readonly args: JsonObject },
  keys: ReceiptKeys,
  now: number,
): StepVerification {
  const receipt = verifyReceipt(decision, keys);
  if (!receipt.ok) {
    return {
      ok: false,
      reason: 'bad_receipt',
      message: `the decision receipt does not verify with Countersign's keys: ${receipt.message}`,
    };
  }
  const { plan } = decision;
  if (decision.status !== 'approved' || plan === null) {
    return { ok: false, reason: 'not_approved', message: `the run was ${decision.status}, not approved` };
  }
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
      message: 'the plan in the decision does not match its digest',
    };
  }
  const approved = plan.steps.find((candidate) => candidate.id === step.id);
  if (approved === undefined) {
    return {
      ok: false,
      reason: 'unknown_step',
      message: `step ${step.id} is not in the approved plan (version ${decision.version})`,
    };
  }
  const digest = stepDigest(step);
  if (digest !== approved.digest || stepDigest(approved) !== approved.digest) {
    return {
      ok: false,
      reason: 'digest_mismatch',
      message: `step ${step.id} is not what was approved (digest ${digest.slice(0, 12)}… ≠ ${approved.digest.slice(0, 12)}…)`,
    };
  }
  return { ok: true, step: approved, provenance: approved.provenance };
}
