import type { EscalationGrant } from '../config/config-types.ts';
import type {
  Decision,
  Diagnostic,
  JsonObject,
  Phase,
  PlanDiff,
  Provenance,
  Step,
  ValidatedPlan,
  ValidatedStep,
} from '../pipeline/index.ts';
import type { ChainStep } from './escalation.ts';

export type RunStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'invalid';

/** One stored version of a run's plan, frozen once written. */
export interface StoredVersion {
  readonly version: number;
  readonly plan: ValidatedPlan;
  /** stepId → who wrote that step, in which version. */
  readonly provenance: Readonly<Record<string, Provenance>>;
  /** `'agent'` for v1, else the editor's Slack user id. */
  readonly createdBy: string;
  /** ms since epoch. */
  readonly createdAt: number;
  /** The version this one was derived from (edits only). */
  readonly baseVersion?: number;
  /**
   * Every step id used in the run up to this version, with the digest it last had. New steps never get
   * one of these ids. Absent in versions stored before it was kept (read back from the versions).
   */
  readonly stepHistory?: Readonly<Record<string, string>>;
}

/**
 * One person's approval of one step: bound to the step's id and the digest of its canonical JSON.
 * It counts for a later version only where a step keeps both.
 */
export interface ApprovalRecord {
  readonly stepId: string;
  readonly stepDigest: string;
  readonly userId: string;
  /** The version whose card they clicked. */
  readonly version: number;
  readonly at: number;
}

/** What is still needed for one review step. */
export interface AwaitedStep {
  readonly stepId: string;
  readonly group: string;
  readonly have: number;
  readonly need: number;
  /** Users whose approval counts for this step (its id at its current digest). */
  readonly approvers: readonly string[];
  /**
   * Users who may approve it now and whose approval would count (group members, people an escalation
   * granted it), not counted yet: members first, in the config's order.
   */
  readonly mayAct: readonly string[];
}

/** Where one review step stands with its approvers. */
export interface StepApprovals {
  /** Users whose approval counts: given to this step id at its current digest, and entitled to it. */
  readonly approvers: readonly string[];
  readonly have: number;
  readonly need: number;
  /** Enough approvals: `need` of them, or one whose escalation grant counts alone. */
  readonly satisfied: boolean;
}

/** Someone a run was escalated to, and what that lets them do. */
export interface EscalatedPerson {
  readonly userId: string;
  /** The escalation levels that notified them (1-based). */
  readonly levels: readonly number[];
  /** What those levels grant (today's config); empty: they were told, and may do nothing more. */
  readonly may: readonly EscalationGrant[];
}

/** A run as the rest of the system reads it (current version only). */
export interface RunView {
  readonly runId: string;
  readonly agent: string;
  readonly status: RunStatus;
  readonly version: number;
  readonly current: StoredVersion;
  readonly approvals: readonly ApprovalRecord[];
  /** Each review step of the current version, by step id: whose approvals count, and whether enough. */
  readonly standing: Readonly<Record<string, StepApprovals>>;
  /** Review steps still short of approvals (empty once decided). */
  readonly awaiting: readonly AwaitedStep[];
  /** Steps whose route is `block`: the run cannot be approved while they are present. */
  readonly blocked: readonly ValidatedStep[];
  readonly decidedBy?: string;
  /**
   * Everyone whose approval counted for the current version, in plan order of the steps they approved
   * (for an approved run: who approved it, not only the last click).
   */
  readonly approvedBy: readonly string[];
  readonly decidedAt?: number;
  readonly reason?: string;
  readonly escalationLevel: number;
  /**
   * Why the last approval that completed the plan did not approve it: the authorize phase, re-run at
   * that moment, failed (an invoice paid meanwhile, a tightened policy). Cleared by a new version.
   */
  readonly recheckProblem?: string;
  /** People the run was escalated to. */
  readonly escalatedTo: readonly string[];
  /** The same people, with what their escalation lets them do. */
  readonly escalated: readonly EscalatedPerson[];
  /** Every step id the run has used: an added step never gets one of these. */
  readonly usedStepIds: readonly string[];
  /** When the latest escalation level fired (ms since epoch). */
  readonly escalatedAt?: number;
  /** The last escalation chain step that fired, and for which version (absent before the first). */
  readonly chainStep?: { readonly version: number; readonly step: string };
  readonly createdAt: number;
  /**
   * Steps released to the agent before the plan was decided (issue "Plans with dependencies"), by
   * step id: when (ms, Redis's time) and in which version. Empty when none were.
   */
  readonly released: Readonly<Record<string, StepRelease>>;
  /**
   * For each step of the current version that is neither released nor decided, what it still waits
   * for. Absent for a decided run.
   */
  readonly waiting: Readonly<Record<string, StepWait>>;
}

export interface StepRelease {
  readonly at: number;
  readonly version: number;
}

/** What keeps a step from running yet; every reason that holds, not only the first. */
export interface StepWait {
  /** Its own approvals are not complete. */
  readonly approvals: boolean;
  /** Steps it depends on that have not been reported applied, in the order it names them. */
  readonly dependencies: readonly string[];
  /** It is not a `continue` step, so it runs only once the whole plan is approved. */
  readonly plan: boolean;
}

export type OutcomeStatus = 'applying' | 'applied' | 'failed' | 'uncertain';

export interface StepOutcome {
  readonly stepId: string;
  readonly status: OutcomeStatus;
  readonly detail?: string;
  /** Named numbers the agent reported with it (`{ refund_cents: 148900 }`). */
  readonly metrics?: Readonly<Record<string, number>>;
  readonly at: number;
}

/**
 * Answers the use cases return; the caller renders them. Each use case returns the subset that can
 * happen to it (see the signatures in `service.ts`).
 */
export type UseCaseResult =
  | { readonly kind: 'pending'; readonly run: RunView }
  | { readonly kind: 'awaiting'; readonly run: RunView; readonly approvedSteps: readonly string[] }
  | { readonly kind: 'approved'; readonly run: RunView; readonly decision: Decision }
  | { readonly kind: 'rejected'; readonly run: RunView; readonly decision: Decision }
  | { readonly kind: 'expired'; readonly run: RunView; readonly decision?: Decision }
  | {
      readonly kind: 'edited';
      readonly run: RunView;
      readonly previous: StoredVersion;
      readonly diff: PlanDiff<ValidatedStep>;
    }
  | {
      readonly kind: 'escalated';
      readonly run: RunView;
      readonly level: number;
      /** The chain step that fired (the level, or one of its re-notifications). */
      readonly step: Extract<ChainStep, { kind: 'escalate' }>;
    }
  | { readonly kind: 'reminded'; readonly run: RunView }
  | { readonly kind: 'stale'; readonly run: RunView; readonly currentVersion: number }
  | {
      readonly kind: 'already_decided';
      readonly run: RunView;
      readonly status: RunStatus;
      readonly by?: string;
    }
  | { readonly kind: 'unauthorized'; readonly reason: string; readonly run?: RunView }
  | {
      readonly kind: 'invalid';
      readonly phase: Phase;
      readonly diagnostics: readonly Diagnostic[];
      readonly decision?: Decision;
      /** The run, when it exists and its card should say why (a re-check that failed at approval). */
      readonly run?: RunView;
    }
  | { readonly kind: 'duplicate'; readonly run: RunView }
  | { readonly kind: 'run_exists'; readonly runId: string }
  | { readonly kind: 'not_found'; readonly runId: string }
  | { readonly kind: 'unchanged'; readonly run: RunView };

/** Journal events (docs/architecture.md §7). `at` and the chain fields live on the record, not here. */
export type JournalEvent =
  | { readonly type: 'submitted'; readonly raw: string; readonly agent: string; readonly nonce?: string }
  | {
      readonly type: 'validated';
      readonly version: number;
      /**
       * Each step's id, tool, digest and route. The plan itself is the immutable version document,
       * bound to this record by its `plan_digest`; the raw text is in the `submitted` record.
       */
      readonly steps: readonly {
        readonly id: string;
        readonly tool: string;
        readonly digest: string;
        readonly route: string;
      }[];
    }
  | { readonly type: 'invalid'; readonly phase: Phase; readonly diagnostics: readonly Diagnostic[] }
  | { readonly type: 'submission_refused'; readonly reason: string }
  | { readonly type: 'posted'; readonly version: number; readonly channel: string; readonly ts: string }
  | {
      readonly type: 'edited';
      readonly editor: string;
      readonly baseVersion: number;
      readonly version: number;
      readonly before: ValidatedPlan;
      readonly after: ValidatedPlan;
      readonly diff: PlanDiff<Step>;
    }
  | {
      readonly type: 'edit_refused';
      readonly editor: string;
      readonly baseVersion: number;
      readonly reason: string;
    }
  | {
      readonly type: 'approval';
      readonly userId: string;
      readonly version: number;
      /** The steps approved, each by id and the digest it had. */
      readonly steps?: readonly { readonly id: string; readonly digest: string }[];
      /** Records written before approvals were bound to step ids carry digests only. */
      readonly stepDigests?: readonly string[];
    }
  | { readonly type: 'approved'; readonly version: number; readonly planDigest: string; readonly by: string }
  | { readonly type: 'rejected'; readonly version: number; readonly userId: string; readonly reason: string }
  | {
      readonly type: 'escalated';
      readonly version: number;
      readonly level: number;
      /** 1… for a re-notification of the level (absent for the level itself). */
      readonly repeat?: number;
      readonly notified: readonly string[];
    }
  | { readonly type: 'reminded'; readonly version: number }
  | { readonly type: 'expired'; readonly version: number }
  | {
      readonly type: 'refused';
      readonly action: 'approve' | 'reject' | 'edit' | 'expire' | 'escalate';
      readonly version: number;
      readonly userId?: string;
      readonly reason: 'stale' | 'expired' | 'unauthorized' | 'already_decided' | 'recheck_failed';
      readonly detail: string;
    }
  | {
      readonly type: 'stale_timer';
      readonly timer: string;
      readonly version: number;
      readonly currentVersion: number;
    }
  | { readonly type: 'decision_delivered'; readonly status: string }
  /** A step released to the agent before the plan was decided, with the version and digest released. */
  | { readonly type: 'released'; readonly stepId: string; readonly version: number; readonly digest: string }
  | {
      readonly type: 'outcome';
      readonly stepId: string;
      readonly status: OutcomeStatus;
      readonly detail?: string;
      readonly metrics?: Readonly<Record<string, number>>;
    };

/** One journal record as stored: hashed over its canonical form minus `hash`, chained from 64 zeros. */
export interface JournalRecord {
  readonly seq: number;
  readonly prev_hash: string;
  /** Digest of the run's current plan version when the event happened (null before v1 exists). */
  readonly plan_digest: string | null;
  readonly event: JournalEvent & JsonObject;
  /** ISO 8601 UTC. */
  readonly at: string;
  readonly hash: string;
}
