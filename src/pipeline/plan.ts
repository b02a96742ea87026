import type { ChangeSet, Unverified } from './change-set.ts';
import type { JsonObject } from './json.ts';

/** One tool call the agent has not run yet. `id` is stable across edits. */
export interface Step {
  readonly id: string;
  readonly tool: string;
  readonly args: JsonObject;
  /**
   * Ids of the steps whose effects this one needs applied first: sorted, without duplicates, never
   * empty (absent when there are none). Covered by the step and plan digests (docs/canonical-json.md).
   */
  readonly dependsOn?: readonly string[];
}

/** The plan envelope after `parse`: ids assigned, shape checked, nothing else trusted yet. */
export interface PlanEnvelope {
  readonly runId: string;
  readonly agent: string;
  readonly summary?: string;
  readonly context?: JsonObject;
  /** ISO 8601 UTC instant, part of the protected plan (it is in the plan digest). */
  readonly expiresAt: string;
  readonly steps: readonly Step[];
  /**
   * What a submission asks for when policy blocks a step: `review` (the default) posts the plan for
   * people to see, `refuse` refuses it at authorize (`blocked`). Not stored with the plan; edits never carry it.
   */
  readonly ifBlocked?: IfBlocked;
}

export type IfBlocked = 'review' | 'refuse';

/** The gate's verdict for one step (docs/architecture.md §1). */
export type Route =
  | {
      readonly kind: 'auto';
      readonly rule: string;
      /** True: released to the agent at once (its dependencies applied), before the plan is decided. */
      readonly continue?: true;
    }
  | {
      readonly kind: 'review';
      readonly rule: string;
      /** Name of the config group whose members may approve. */
      readonly group: string;
      /** How many distinct members of `group` must approve. */
      readonly approvals: number;
      /** Whether the step's human author is barred from approving it. */
      readonly distinctFromAuthor: boolean;
      /** False: people the run was escalated to may not approve it (absent means they may, as granted). */
      readonly escalatedMayApprove?: false;
      /**
       * True: the step may be released to the agent before the whole plan is decided, once its own
       * approvals are complete and its dependencies are applied (never for irreversible effects).
       */
      readonly continue?: true;
    }
  | { readonly kind: 'block'; readonly rule: string; readonly reason: string };

/** A warning from a tool's `annotate` hook, shown beside the step; it never rejects a plan. */
export interface Annotation {
  readonly level: 'info' | 'warning';
  readonly message: string;
}

/** A step that passed every phase, with what the rest of the system needs to show and approve it. */
export interface ValidatedStep extends Step {
  /** SHA-256 hex of canonical `{ args, depends_on?, tool }`: approvals are bound to it. */
  readonly digest: string;
  readonly route: Route;
  readonly annotations: readonly Annotation[];
  /** One line from the tool's `summarize` hook, if it has one. */
  readonly summary?: string;
  /** What the step will change in the world, from the tool's `preview` hook (absent without one). */
  readonly changeSet?: ChangeSet;
  /** Hooks that failed or timed out: the step could not be verified and is routed to review. */
  readonly unverified?: readonly Unverified[];
}

/** The output of `validate`: deep-frozen, with per-step digests and routes and the plan digest. */
export interface ValidatedPlan extends PlanEnvelope {
  readonly steps: readonly ValidatedStep[];
  /** SHA-256 hex of canonical `{ agent, expires_at, run_id, steps: [{ args, depends_on?, id, tool }] }`. */
  readonly digest: string;
}

/**
 * Who wrote a step: the agent (model) or a named Slack user, in which version, and — for a user —
 * whether they added the step or changed one (absent in versions stored before it was recorded).
 */
export type Provenance =
  | { readonly by: 'agent'; readonly version: number }
  | {
      readonly by: 'user';
      readonly userId: string;
      readonly version: number;
      readonly change?: 'added' | 'changed';
    };
