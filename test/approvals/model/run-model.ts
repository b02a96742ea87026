/**
 * A reference model of one run, in plain TypeScript: versions of steps (ids, digests, who wrote them),
 * approvals, escalation, expiry and the decision. It says what the approval service must answer and
 * hold after each use case; it borrows only the pure digest functions from src/pipeline (how a digest
 * is computed is not what is under test). Routes, approval rights, edit ids and the edit checks are
 * written out again here from the rules, not taken from src/approvals.
 *
 * The tools' hooks read a world the commands move (config.ts): the model keeps its own copy and
 * predicts from it which steps' checks fail (order B's while its warehouse is closed) and which
 * supplier version each payment's change set was read at — at its submission, or at the edit that last
 * added or changed it.
 *
 * How approvals bind to steps is a parameter (`ApprovalBinding`) so the test can run a deliberately
 * wrong model against the service and show that the comparison catches it.
 */
import {
  type JsonObject,
  type JsonValue,
  type Provenance,
  planDigest,
  stepDigest,
} from '../../../src/pipeline/index.ts';
import {
  AGENT,
  AUTHORING,
  EFFECTS,
  freshWorld,
  GROUPS,
  type Grant,
  type GroupName,
  HUGE_PAYMENT,
  LARGE_PAYMENT,
  LEVELS,
  type Supplier,
  WAREHOUSE_CLOSED,
  type World,
} from './config.ts';

export type Status = 'pending' | 'approved' | 'rejected' | 'expired' | 'invalid';

/** A step as an agent or an editor writes it (the tool may be one that does not exist). */
export interface StepSpec {
  readonly tool: string;
  readonly args: JsonObject;
  /** Ids of the steps it depends on (sorted, unique; absent when none). */
  readonly dependsOn?: readonly string[];
}

export interface ModelStep extends StepSpec {
  readonly id: string;
  readonly digest: string;
}

export type ModelRoute =
  | { readonly kind: 'auto'; readonly continue: boolean }
  | { readonly kind: 'block' }
  | {
      readonly kind: 'review';
      readonly group: GroupName;
      readonly approvals: number;
      readonly distinctFromAuthor: boolean;
      readonly escalatedMayApprove: boolean;
      readonly continue: boolean;
    };

export type ModelProvenance =
  | { readonly by: 'agent'; readonly version: number }
  | {
      readonly by: 'user';
      readonly userId: string;
      readonly version: number;
      readonly change: 'added' | 'changed';
    };

export interface ModelVersion {
  readonly number: number;
  readonly steps: readonly ModelStep[];
  readonly provenance: Readonly<Record<string, ModelProvenance>>;
  readonly createdBy: string;
  readonly baseVersion?: number;
  /** Payment step id → the supplier version its `preview` read (when it was submitted or last touched). */
  readonly previews: Readonly<Record<string, string>>;
}

/** One approval as the model keeps it; `stepId` is what the binding may or may not look at. */
export interface ModelApproval {
  readonly stepId: string;
  readonly stepDigest: string;
  readonly userId: string;
  readonly version: number;
  readonly at: number;
}

/** How approvals are bound to steps: the rule under test, or a wrong one for the test of the test. */
export interface ApprovalBinding {
  /** Whether `approval` is an approval of `step` as it is now. */
  isOf(approval: ModelApproval, step: ModelStep): boolean;
  /** The records one click adds for the steps it approves (`fresh`: not yet approved by the user). */
  record(fresh: readonly ModelStep[], userId: string, version: number, at: number): ModelApproval[];
  /** Whether the stored approval records are comparable one for one with the service's. */
  readonly comparableRecords: boolean;
}

/** The rule: an approval belongs to a step id at a digest; one click records one per step. */
export const BY_STEP_ID_AND_DIGEST: ApprovalBinding = {
  isOf: (approval, step) => approval.stepId === step.id && approval.stepDigest === step.digest,
  record: (fresh, userId, version, at) =>
    fresh.map((step) => ({ stepId: step.id, stepDigest: step.digest, userId, version, at })),
  comparableRecords: true,
};

/**
 * The old rule, deliberately wrong: an approval of digest D counts for every step with digest D — a
 * step added later with the same bytes included — and one record per digest satisfies identical steps.
 */
export const BY_DIGEST_ONLY: ApprovalBinding = {
  isOf: (approval, step) => approval.stepDigest === step.digest,
  record: (fresh, userId, version, at) => {
    const seen = new Set<string>();
    return fresh.flatMap((step) => {
      if (seen.has(step.digest)) return [];
      seen.add(step.digest);
      return [{ stepId: step.id, stepDigest: step.digest, userId, version, at }];
    });
  },
  comparableRecords: false,
};

/** What a use case answers, reduced to what the model predicts. */
export type Outcome =
  | { readonly kind: 'pending' }
  | { readonly kind: 'awaiting'; readonly approvedSteps: readonly string[] }
  | { readonly kind: 'approved' }
  | { readonly kind: 'rejected' }
  | { readonly kind: 'expired' }
  | {
      readonly kind: 'edited';
      readonly version: number;
      readonly touched: readonly string[];
      readonly added: number;
      readonly removed: number;
      readonly changed: number;
    }
  | { readonly kind: 'escalated'; readonly level: number }
  | { readonly kind: 'reminded' }
  | { readonly kind: 'stale'; readonly currentVersion: number }
  | { readonly kind: 'already_decided'; readonly status: Status; readonly by: string | undefined }
  | { readonly kind: 'unauthorized' }
  | { readonly kind: 'invalid'; readonly phase: string; readonly problems: readonly string[] }
  | { readonly kind: 'duplicate' }
  | { readonly kind: 'run_exists' }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'unchanged' };

/** Where one review step stands. */
export interface ModelStanding {
  readonly approvers: readonly string[];
  readonly have: number;
  readonly need: number;
  readonly satisfied: boolean;
}

/** The run as the service must show it (`getRun`), in comparable form. */
export interface ExpectedRun {
  readonly status: Status;
  readonly version: number;
  readonly steps: readonly {
    id: string;
    tool: string;
    args: JsonObject;
    digest: string;
    route: string;
    /** The version of the target its stored change set names (payments only). */
    previewed?: string | undefined;
  }[];
  readonly provenance: Readonly<Record<string, Provenance>>;
  /** `'agent'` for v1, else the editor; and the version an edit was made on. */
  readonly createdBy: string;
  readonly baseVersion: number | undefined;
  readonly standing: Readonly<Record<string, ModelStanding>>;
  readonly awaiting: readonly {
    stepId: string;
    group: string;
    have: number;
    need: number;
    approvers: readonly string[];
    /** Who may approve it now and has not (sorted). */
    mayAct: readonly string[];
  }[];
  /** Everyone whose approval counts on some step (sorted). */
  readonly approvedBy: readonly string[];
  readonly blocked: readonly string[];
  readonly decidedBy: string | undefined;
  readonly decidedAt: number | undefined;
  readonly reason: string | undefined;
  /** Why the approval that completed the plan did not approve it: the checks run again failed. */
  readonly recheckProblem: string | undefined;
  readonly escalationLevel: number;
  readonly escalatedTo: readonly string[];
  /** Who was escalated to, by which levels. */
  readonly escalated: readonly { userId: string; levels: readonly number[] }[];
  readonly usedStepIds: readonly string[];
  /** `stepId|digest|user|version|at`, sorted; only when the binding's records are comparable. */
  readonly approvals?: readonly string[];
  /** Released steps: `stepId@version@at`, sorted. */
  readonly released: readonly string[];
}

/** The decision as the service must seal it (`getDecision`), in comparable form. */
export interface ExpectedDecision {
  readonly status: Status;
  readonly version: number | null;
  readonly plan: {
    readonly expiresAt: string;
    readonly digest: string;
    readonly steps: readonly {
      id: string;
      tool: string;
      args: JsonObject;
      digest: string;
      route: string;
      approvals: readonly { userId: string; at: string }[];
      provenance: {
        by: 'agent' | 'user';
        userId: string | null;
        version: number;
        change: 'added' | 'changed' | null;
      };
      /** The target as previewed (payments only). */
      preconditions?: readonly { type: string; id: string; version: string }[] | undefined;
    }[];
  } | null;
  readonly decidedAt: string;
  readonly decidedBy: string | null;
  readonly reason: string | null;
  readonly phase: string | null;
  readonly problems: readonly string[];
  /** Steps released before the decision, with the agent's report then (empty when none). */
  readonly released: readonly { stepId: string; releasedAt: string; outcome: string | null }[];
}

/** A step as an edit submits it. */
export interface EditedStep {
  readonly id?: string;
  readonly tool: string;
  readonly args: JsonObject;
  readonly dependsOn?: readonly string[];
}

/** `code:stepId`, how the model names a diagnostic. */
/**
 * Circular dependencies, as parse names them: walking from each step in plan order along its
 * dependency (the model's steps name at most one), a cycle is reported once, at the first of its
 * steps the walk reaches.
 */
function cycleProblems(
  steps: readonly { readonly id: string; readonly dependsOn?: readonly string[] }[],
): string[] {
  const next = new Map(steps.map((step) => [step.id, step.dependsOn?.[0]]));
  const done = new Set<string>();
  const problems: string[] = [];
  for (const start of steps) {
    const walk: string[] = [];
    let at: string | undefined = start.id;
    while (at !== undefined && !done.has(at) && !walk.includes(at)) {
      walk.push(at);
      at = next.get(at);
    }
    if (at !== undefined && walk.includes(at)) problems.push(problem('dependency_cycle', at));
    for (const id of walk) done.add(id);
  }
  return problems;
}

export function problem(code: string, stepId?: string): string {
  return `${code}:${stepId ?? ''}`;
}

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const TOOLS = new Set(['ship', 'pay', 'note']);

/** The route the policy gives a (well-typed) step. */
export function routeOf(step: StepSpec): ModelRoute {
  const review = (
    group: GroupName,
    approvals: number,
    distinctFromAuthor: boolean,
    escalated = true,
    early = false,
  ) =>
    ({
      kind: 'review',
      group,
      approvals,
      distinctFromAuthor,
      escalatedMayApprove: escalated,
      continue: early,
    }) as const;
  switch (step.tool) {
    case 'note':
      return step.args.urgent === true ? review('fin', 1, false) : { kind: 'auto', continue: true };
    case 'pay': {
      const amount = Number(step.args.amount);
      if (amount >= HUGE_PAYMENT) return { kind: 'block' };
      if (amount >= LARGE_PAYMENT) return review('fin', 3, true, false);
      return review('fin', 2, true);
    }
    case 'ship':
      return review('ops', 1, false, true, true);
    default:
      throw new Error(`routeOf: no route for tool ${step.tool}`);
  }
}

/** What the `type` phase says about a step of a known tool: `code:stepId` per problem. */
function typeProblems(step: ModelStep): string[] {
  const fields: Record<string, { required: boolean; ok: (value: JsonValue) => boolean }> =
    step.tool === 'ship'
      ? { order: { required: true, ok: (v) => v === 'A' || v === 'B' } }
      : step.tool === 'pay'
        ? {
            to: { required: true, ok: (v) => v === 'acme' || v === 'globex' },
            amount: { required: true, ok: (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1 },
          }
        : {
            text: { required: true, ok: (v) => v === 'hi' || v === 'bye' },
            urgent: { required: false, ok: (v) => typeof v === 'boolean' },
          };
  const problems: string[] = [];
  for (const [name, field] of Object.entries(fields)) {
    const value = step.args[name];
    if (value === undefined) {
      if (field.required) problems.push(problem('missing_argument', step.id));
    } else if (!field.ok(value)) {
      problems.push(problem('invalid_argument', step.id));
    }
  }
  for (const key of Object.keys(step.args)) {
    if (!Object.hasOwn(fields, key)) problems.push(problem('unknown_argument', step.id));
  }
  return problems;
}

function groupsOf(userId: string): GroupName[] {
  return (Object.keys(GROUPS) as GroupName[]).filter((group) =>
    (GROUPS[group] as readonly string[]).includes(userId),
  );
}

function isMember(group: GroupName, userId: string): boolean {
  return (GROUPS[group] as readonly string[]).includes(userId);
}

function mayAuthor(userId: string, tool: string): boolean {
  return groupsOf(userId).some((group) => {
    const tools = AUTHORING[group];
    return tools === '*' || tools.includes(tool);
  });
}

function sorted<T>(values: Iterable<T>): T[] {
  return [...values].sort();
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** An instant as plans write it: `2026-04-01T11:00:00Z`. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

function withDigest(step: StepSpec & { readonly id: string }): ModelStep {
  return {
    id: step.id,
    tool: step.tool,
    args: step.args,
    ...(step.dependsOn === undefined || step.dependsOn.length === 0 ? {} : { dependsOn: step.dependsOn }),
    digest: stepDigest(step),
  };
}

/** An agent's report on a step, as the model keeps it. */
export interface ModelOutcome {
  readonly status: 'applying' | 'applied' | 'failed';
  readonly at: number;
}

/** What an outcome report is answered. */
export type OutcomeAnswer =
  | { readonly kind: 'recorded'; readonly status: string }
  | { readonly kind: 'already_claimed'; readonly status: string }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'not_approved'; readonly status: string }
  | { readonly kind: 'unknown_step' };

/** `defaults.uncertainAfter` (15 minutes): a claim this old reads as `uncertain`. */
const UNCERTAIN_AFTER_MS = 15 * 60_000;

/** One run, from its submission to its decision. */
export class RunModel {
  status: Status | 'none' = 'none';
  now: number;
  /** The text submitted first (re-submissions are compared with it). */
  raw: string | undefined;
  readonly versions: ModelVersion[] = [];
  /** Every step id the run has used → the step it last was under that id. */
  readonly history = new Map<string, ModelStep>();
  readonly approvals: ModelApproval[] = [];
  /** user → the escalation levels that notified them (insertion order = first notified). */
  readonly escalated = new Map<string, number[]>();
  escalationLevel = 0;
  expiresAt = 0;
  expiresAtText = '';
  decidedBy: string | undefined;
  decidedAt: number | undefined;
  reason: string | undefined;
  decision: ExpectedDecision | undefined;
  /** Steps released before the decision: step id → when, in which version, at which digest. */
  readonly released = new Map<string, { at: number; version: number; digest: string }>();
  /** The agent's last report per step. */
  readonly outcomes = new Map<string, ModelOutcome>();
  /** The model's copy of the world the hooks read (the commands move both). */
  readonly world: World = freshWorld();
  /** Set when an approval completed the plan but its checks failed; cleared by an edit. */
  recheckProblem: string | undefined;

  constructor(
    readonly runId: string,
    now: number,
    readonly binding: ApprovalBinding = BY_STEP_ID_AND_DIGEST,
  ) {
    this.now = now;
  }

  get current(): ModelVersion | undefined {
    return this.versions.at(-1);
  }

  version(n: number): ModelVersion | undefined {
    return n >= 1 ? this.versions[n - 1] : undefined;
  }

  // ── rights ───────────────────────────────────────────────────────────────────────────────────────

  humanAuthor(version: ModelVersion, stepId: string): string | undefined {
    const provenance = version.provenance[stepId];
    return provenance?.by === 'user' ? provenance.userId : undefined;
  }

  /** The grant escalation gives `userId` over `step`, preferring one that counts alone. */
  escalationGrant(step: ModelStep, userId: string): Grant | undefined {
    const route = routeOf(step);
    if (route.kind !== 'review' || !route.escalatedMayApprove) return undefined;
    const levels = this.escalated.get(userId);
    if (levels === undefined) return undefined;
    const irreversible = EFFECTS[step.tool] === 'irreversible';
    const grants = levels
      .map((level) => LEVELS[level - 1]!.may)
      .filter(
        (grant) =>
          (grant.approve === '*' || grant.approve.includes(route.group)) &&
          (!irreversible || grant.irreversible),
      );
    return grants.find((grant) => grant.counts === 'alone') ?? grants[0];
  }

  /** How `userId` may approve `step` in `version`: as a member, as escalated (member/alone), or not. */
  right(version: ModelVersion, step: ModelStep, userId: string): 'member' | 'alone' | undefined {
    const route = routeOf(step);
    if (route.kind !== 'review') return undefined;
    if (route.distinctFromAuthor && this.humanAuthor(version, step.id) === userId) return undefined;
    const grant = this.escalationGrant(step, userId);
    if (grant?.counts === 'alone') return 'alone';
    if (isMember(route.group, userId)) return 'member';
    return grant === undefined ? undefined : 'member';
  }

  /**
   * Who may approve or reject a version: anyone with a right on one of its steps; when none of its
   * steps needs review, anyone who may edit it (else a run could become one nobody can decide).
   */
  mayDecide(version: ModelVersion, userId: string): boolean {
    if (version.steps.some((step) => this.right(version, step, userId) !== undefined)) return true;
    return !version.steps.some((step) => routeOf(step).kind === 'review') && this.mayEdit(userId);
  }

  /** A member of any group, or someone escalation named (every level here grants something). */
  mayEdit(userId: string): boolean {
    return groupsOf(userId).length > 0 || this.escalated.has(userId);
  }

  standing(version: ModelVersion, step: ModelStep): ModelStanding | undefined {
    const route = routeOf(step);
    if (route.kind !== 'review') return undefined;
    const approvers: string[] = [];
    let alone = false;
    for (const approval of this.approvals) {
      if (!this.binding.isOf(approval, step) || approvers.includes(approval.userId)) continue;
      const right = this.right(version, step, approval.userId);
      if (right === undefined) continue;
      approvers.push(approval.userId);
      if (right === 'alone') alone = true;
    }
    return {
      approvers: sorted(approvers),
      have: approvers.length,
      need: route.approvals,
      satisfied: alone || approvers.length >= route.approvals,
    };
  }

  awaited(version: ModelVersion): ModelStep[] {
    return version.steps.filter((step) => this.standing(version, step)?.satisfied === false);
  }

  blocked(version: ModelVersion): ModelStep[] {
    return version.steps.filter((step) => routeOf(step).kind === 'block');
  }

  /** The steps among `steps` whose `checks` find a problem in the world as it is now. */
  failingChecks(steps: readonly ModelStep[]): ModelStep[] {
    return this.world.warehouseBClosed
      ? steps.filter((step) => step.tool === 'ship' && step.args.order === 'B')
      : [];
  }

  /** What each payment's `preview` reads now: its supplier's version. */
  previewNow(step: ModelStep): string {
    return String(this.world.supplierVersions[step.args.to as Supplier]);
  }

  // ── use cases ────────────────────────────────────────────────────────────────────────────────────

  /**
   * The agent submits `steps` (no ids: the parser numbers them s1, s2, …) as `raw`, to expire at
   * `expiresAt` (whole seconds).
   */
  submit(raw: string, steps: readonly StepSpec[], expiresAt: number): Outcome {
    if (this.status !== 'none') {
      if (raw !== this.raw) return { kind: 'run_exists' };
      // The same text again: the same answer (for a refused plan, its refusal; there is no run to show).
      const refused = this.decision;
      if (this.status === 'invalid' && refused?.phase != null) {
        return { kind: 'invalid', phase: refused.phase, problems: refused.problems };
      }
      return { kind: 'duplicate' };
    }
    this.raw = raw;
    this.expiresAt = expiresAt;
    this.expiresAtText = isoSeconds(expiresAt);
    const numbered = steps.map((step, index) => withDigest({ ...step, id: `s${index + 1}` }));
    const problems = numbered.flatMap((step) => (TOOLS.has(step.tool) ? typeProblems(step) : []));
    const unknown = numbered.filter((step) => !TOOLS.has(step.tool));
    // A typed plan's hooks run; a check that finds a problem refuses it at authorize.
    const failing = unknown.length > 0 || problems.length > 0 ? [] : this.failingChecks(numbered);
    if (unknown.length > 0 || problems.length > 0 || failing.length > 0) {
      const phase = unknown.length > 0 ? 'resolve' : problems.length > 0 ? 'type' : 'authorize';
      const found =
        unknown.length > 0
          ? unknown.map((s) => problem('unknown_tool', s.id))
          : problems.length > 0
            ? problems
            : failing.map((s) => problem('check_failed', s.id));
      this.status = 'invalid';
      this.decidedAt = this.now;
      this.decision = {
        status: 'invalid',
        version: null,
        plan: null,
        decidedAt: iso(this.now),
        decidedBy: null,
        reason: null,
        phase,
        problems: sorted(found),
        released: [],
      };
      return { kind: 'invalid', phase, problems: sorted(found) };
    }
    const version: ModelVersion = {
      number: 1,
      steps: numbered,
      provenance: Object.fromEntries(numbered.map((step) => [step.id, { by: 'agent', version: 1 } as const])),
      createdBy: 'agent',
      previews: Object.fromEntries(
        numbered.filter((step) => step.tool === 'pay').map((step) => [step.id, this.previewNow(step)]),
      ),
    };
    this.versions.push(version);
    for (const step of numbered) this.history.set(step.id, step);
    this.status = 'pending';
    if (numbered.every((step) => routeOf(step).kind === 'auto')) {
      this.decide('approved', 'policy');
      return { kind: 'approved' };
    }
    this.release(true);
    return { kind: 'pending' };
  }

  approve(userId: string, versionNumber: number): Outcome {
    const refused = this.gate(versionNumber);
    if (refused !== undefined) return refused;
    const version = this.current!;
    if (!this.mayDecide(version, userId)) return { kind: 'unauthorized' };
    const eligible = version.steps.filter((step) => this.right(version, step, userId) !== undefined);
    const fresh = eligible.filter(
      (step) => !this.approvals.some((a) => a.userId === userId && this.binding.isOf(a, step)),
    );
    this.approvals.push(...this.binding.record(fresh, userId, version.number, this.now));
    const approvedSteps = fresh.map((step) => step.id);
    if (this.awaited(version).length > 0 || this.blocked(version).length > 0) {
      this.release(true);
      return { kind: 'awaiting', approvedSteps };
    }
    // The plan is complete: every step's checks run again, and one that fails now holds the run.
    const failing = this.failingChecks(version.steps);
    if (failing.length > 0) {
      this.recheckProblem = failing
        .map((step) => `step ${step.id}: ${WAREHOUSE_CLOSED}`)
        .join('; ')
        .slice(0, 2000);
      return {
        kind: 'invalid',
        phase: 'authorize',
        problems: sorted(failing.map((step) => problem('check_failed', step.id))),
      };
    }
    this.decide('approved', userId);
    return { kind: 'approved' };
  }

  reject(userId: string, versionNumber: number, reason: string): Outcome {
    const refused = this.gate(versionNumber);
    if (refused !== undefined) return refused;
    if (!this.mayDecide(this.current!, userId)) return { kind: 'unauthorized' };
    this.decide('rejected', userId, reason.trim().slice(0, 2000) || 'no reason given');
    return { kind: 'rejected' };
  }

  /** An edit of version `baseVersion` by `editorId`: the ids, the four phases, then a new version. */
  edit(editorId: string, baseVersion: number, submitted: readonly EditedStep[]): Outcome {
    const refused = this.gate(baseVersion);
    if (refused !== undefined) return refused;
    if (!this.mayEdit(editorId)) return { kind: 'unauthorized' };
    const base = this.current!;
    const candidate = this.assignIds(base, submitted);
    const invalid = this.validateEdit(base, candidate, editorId);
    if (invalid !== undefined) return invalid;

    const baseById = new Map(base.steps.map((step) => [step.id, step]));
    const candidateIds = new Set(candidate.map((step) => step.id));
    const changes = new Map<string, 'added' | 'changed'>();
    for (const step of candidate) {
      const before = baseById.get(step.id);
      if (before === undefined) changes.set(step.id, 'added');
      else if (before.digest !== step.digest) changes.set(step.id, 'changed');
    }
    const removed = base.steps.filter((step) => !candidateIds.has(step.id)).length;
    const sameOrder =
      candidate.length === base.steps.length && candidate.every((step, i) => step.id === base.steps[i]?.id);
    if (changes.size === 0 && removed === 0 && sameOrder) return { kind: 'unchanged' };
    // A released step may be running: an edit may not change or remove it.
    const releasedProblems = [...this.released].flatMap(([id, entry]) =>
      candidate.find((step) => step.id === id)?.digest === entry.digest
        ? []
        : [problem('immutable_field', id)],
    );
    if (releasedProblems.length > 0)
      return { kind: 'invalid', phase: 'authorize', problems: releasedProblems.slice(0, 1) };

    const number = base.number + 1;
    const provenance: Record<string, ModelProvenance> = {};
    for (const step of candidate) {
      const change = changes.get(step.id);
      provenance[step.id] =
        change === undefined
          ? (base.provenance[step.id] ?? { by: 'agent', version: 1 })
          : { by: 'user', userId: editorId, version: number, change };
    }
    // Touched payments are previewed again now; the others keep the change set their base stored.
    const previews: Record<string, string> = {};
    for (const step of candidate) {
      if (step.tool !== 'pay') continue;
      previews[step.id] = changes.has(step.id) ? this.previewNow(step) : base.previews[step.id]!;
    }
    this.versions.push({
      number,
      steps: candidate,
      provenance,
      createdBy: editorId,
      baseVersion: base.number,
      previews,
    });
    for (const step of candidate) this.history.set(step.id, step);
    this.recheckProblem = undefined;
    // The edit ran every step's checks, so a failing one refused it above: what is released here
    // passed them all, as an approval's or an `applied` report's release does.
    this.release(true);
    const values = [...changes.values()];
    return {
      kind: 'edited',
      version: number,
      touched: candidate.filter((step) => changes.has(step.id)).map((step) => step.id),
      added: values.filter((change) => change === 'added').length,
      removed,
      changed: values.filter((change) => change === 'changed').length,
    };
  }

  /** The diff message's buttons on the card of version `versionNumber` (an edit of its base). */
  diffAction(
    userId: string,
    versionNumber: number,
    action: 'remove_step' | 'revert_step' | 'discard_edit',
    stepId: string | undefined,
  ): Outcome {
    // A click like any other: closed, expired and stale are answered first.
    const refused = this.gate(versionNumber);
    if (refused !== undefined) return refused;
    const edited = this.version(versionNumber);
    const base = edited?.baseVersion === undefined ? undefined : this.version(edited.baseVersion);
    if (edited === undefined || base === undefined) return { kind: 'unauthorized' };
    const plain = (steps: readonly ModelStep[]): EditedStep[] =>
      steps.map(({ id, tool, args, dependsOn }) => ({
        id,
        tool,
        args,
        ...(dependsOn === undefined ? {} : { dependsOn }),
      }));
    let steps: EditedStep[];
    if (action === 'discard_edit') {
      steps = plain(base.steps);
    } else if (action === 'remove_step') {
      steps = plain(edited.steps.filter((step) => step.id !== stepId));
    } else {
      const original = base.steps.find((step) => step.id === stepId);
      if (original === undefined) return { kind: 'unauthorized' };
      steps = plain(edited.steps.map((step) => (step.id === stepId ? original : step)));
    }
    return this.edit(userId, versionNumber, steps);
  }

  /** The expiry timer armed for `versionNumber`. */
  expire(versionNumber: number): Outcome {
    const stale = this.staleTimer(versionNumber);
    if (stale !== undefined) return stale;
    if (this.now < this.expiresAt) return { kind: 'pending' };
    return this.expireNow();
  }

  /** Escalation level `level` fires for `versionNumber`. */
  escalate(versionNumber: number, level: number): Outcome {
    const stale = this.staleTimer(versionNumber);
    if (stale !== undefined) return stale;
    if (this.now >= this.expiresAt) return this.expireNow();
    for (const userId of LEVELS[level - 1]!.notify) {
      const levels = this.escalated.get(userId) ?? [];
      this.escalated.set(
        userId,
        [...new Set([...levels, level])].sort((a, b) => a - b),
      );
    }
    this.escalationLevel = Math.max(level, this.escalationLevel);
    return { kind: 'escalated', level };
  }

  // ── internals ────────────────────────────────────────────────────────────────────────────────────

  /** A click's checks: the run exists and is pending, has not expired (else it expires now), is current. */
  private gate(versionNumber: number): Outcome | undefined {
    const closed = this.closed();
    if (closed !== undefined) return closed;
    if (this.now >= this.expiresAt) return this.expireNow();
    const current = this.current!;
    if (versionNumber !== current.number) return { kind: 'stale', currentVersion: current.number };
    return undefined;
  }

  private closed(): Outcome | undefined {
    if (this.status === 'none' || this.status === 'invalid') return { kind: 'not_found' };
    if (this.status === 'pending') return undefined;
    return { kind: 'already_decided', status: this.status, by: this.decidedBy };
  }

  private staleTimer(versionNumber: number): Outcome | undefined {
    if (this.status === 'none' || this.status === 'invalid') return { kind: 'not_found' };
    const current = this.current!;
    if (this.status === 'pending' && current.number === versionNumber) return undefined;
    return this.status === 'pending'
      ? { kind: 'stale', currentVersion: current.number }
      : { kind: 'already_decided', status: this.status, by: this.decidedBy };
  }

  private expireNow(): Outcome {
    this.decide('expired', 'timer', `expired at ${this.expiresAtText} — nothing was executed`);
    return { kind: 'expired' };
  }

  /**
   * Ids for an edited plan: a step keeps its id when the base has it, when the run never used it, or
   * when it brings back exactly the bytes it last had under that id; any other gets `s<n>` above every
   * `s<n>` the run (or this edit) uses.
   */
  private assignIds(base: ModelVersion, submitted: readonly EditedStep[]): ModelStep[] {
    const baseIds = new Set(base.steps.map((step) => step.id));
    const keeps = (step: EditedStep): step is EditedStep & { id: string } =>
      step.id !== undefined &&
      (baseIds.has(step.id) ||
        !this.history.has(step.id) ||
        this.history.get(step.id)?.digest === stepDigest(step));
    const used = new Set([...this.history.keys(), ...submitted.flatMap((s) => (keeps(s) ? [s.id] : []))]);
    let next = Math.max(0, ...[...used].map((id) => Number(/^s(\d+)$/.exec(id)?.[1] ?? 0))) + 1;
    return submitted.map((step) => {
      const deps = step.dependsOn === undefined ? {} : { dependsOn: step.dependsOn };
      if (keeps(step)) return withDigest({ id: step.id, tool: step.tool, args: step.args, ...deps });
      while (used.has(`s${next}`)) next++;
      const id = `s${next}`;
      used.add(id);
      return withDigest({ id, tool: step.tool, args: step.args, ...deps });
    });
  }

  /** parse → resolve → type → authorize (incl. may_author and unapprovable); the first phase that fails. */
  private validateEdit(
    base: ModelVersion,
    steps: readonly ModelStep[],
    editorId: string,
  ): Outcome | undefined {
    const fail = (phase: string, problems: readonly string[]): Outcome | undefined =>
      problems.length === 0 ? undefined : { kind: 'invalid', phase, problems: sorted(problems) };

    const parse: string[] = [];
    if (steps.length === 0) parse.push(problem('no_steps'));
    const seen = new Set<string>();
    steps.forEach((step, index) => {
      if (!ID_PATTERN.test(step.id)) parse.push(problem('invalid_step_id', `#${index + 1}`));
      else if (seen.has(step.id)) parse.push(problem('duplicate_step_id', step.id));
      seen.add(step.id);
    });
    // Dependencies are read once the ids are sound: a step naming one no longer in the plan.
    if (parse.length === 0) {
      for (const step of steps) {
        for (const dependency of step.dependsOn ?? []) {
          if (dependency === step.id) parse.push(problem('self_dependency', step.id));
          else if (!seen.has(dependency)) parse.push(problem('unknown_dependency', step.id));
        }
      }
    }
    if (parse.length === 0) parse.push(...cycleProblems(steps));
    const resolve = () =>
      steps.filter((step) => !TOOLS.has(step.tool)).map((step) => problem('unknown_tool', step.id));
    const type = () => steps.flatMap(typeProblems);
    const authorize = () => {
      const baseById = new Map(base.steps.map((step) => [step.id, step]));
      const touched = steps.filter((step) => baseById.get(step.id)?.digest !== step.digest);
      return [
        ...touched.filter((step) => !mayAuthor(editorId, step.tool)).map((s) => problem('may_author', s.id)),
        // An edit runs every step's checks again (the whole pipeline), touched or not.
        ...this.failingChecks(steps).map((step) => problem('check_failed', step.id)),
        ...touched.flatMap((step) => {
          const route = routeOf(step);
          if (route.kind !== 'review' || !route.distinctFromAuthor) return [];
          const others = GROUPS[route.group].filter((member) => member !== editorId);
          return others.length >= route.approvals ? [] : [problem('unapprovable', step.id)];
        }),
      ];
    };
    return (
      fail('parse', parse) ??
      fail('resolve', resolve()) ??
      fail('type', type()) ??
      fail('authorize', authorize())
    );
  }

  private decide(status: Exclude<Status, 'pending' | 'invalid'>, by: string, reason?: string): void {
    const version = this.current!;
    this.status = status;
    this.decidedBy = by;
    this.decidedAt = this.now;
    this.reason = reason;
    this.decision = {
      status,
      version: version.number,
      plan: {
        expiresAt: this.expiresAtText,
        digest: planDigest({
          runId: this.runId,
          agent: AGENT,
          expiresAt: this.expiresAtText,
          steps: version.steps,
        }),
        steps: version.steps.map((step) => {
          const counted = new Set(this.standing(version, step)?.approvers ?? []);
          const approvals = this.approvals
            .filter((a) => this.binding.isOf(a, step) && counted.has(a.userId))
            .sort((a, b) => a.at - b.at)
            .filter((a, index, all) => all.findIndex((other) => other.userId === a.userId) === index)
            .map((a) => ({ userId: a.userId, at: iso(a.at) }));
          const provenance = version.provenance[step.id];
          const previewed = version.previews[step.id];
          return {
            id: step.id,
            tool: step.tool,
            args: step.args,
            digest: step.digest,
            route: routeOf(step).kind,
            approvals,
            provenance:
              provenance === undefined || provenance.by === 'agent'
                ? { by: 'agent', userId: null, version: provenance?.version ?? 1, change: null }
                : {
                    by: 'user',
                    userId: provenance.userId,
                    version: provenance.version,
                    change: provenance.change,
                  },
            preconditions:
              previewed === undefined
                ? undefined
                : [{ type: 'supplier', id: String(step.args.to), version: previewed }],
          };
        }),
      },
      decidedAt: iso(this.now),
      decidedBy: by,
      reason: reason ?? null,
      phase: null,
      problems: [],
      released: version.steps.flatMap((step) => {
        const entry = this.released.get(step.id);
        if (entry === undefined) return [];
        return [
          { stepId: step.id, releasedAt: iso(entry.at), outcome: this.outcomes.get(step.id)?.status ?? null },
        ];
      }),
    };
  }

  /**
   * The agent reports `status` for `stepId`: taken for a step of an approved run or one released
   * before its run was decided; `applying` claims it once, a final report ends it. An `applied` report
   * on a pending run before its expiry releases what waited only for it.
   */
  reportOutcome(stepId: string, status: 'applying' | 'applied' | 'failed'): OutcomeAnswer {
    const version = this.current;
    if (this.status === 'none' || this.status === 'invalid' || version === undefined)
      return { kind: 'not_found' };
    if (this.status !== 'approved' && !this.released.has(stepId)) {
      return { kind: 'not_approved', status: this.status };
    }
    if (!version.steps.some((step) => step.id === stepId)) return { kind: 'unknown_step' };
    const existing = this.outcomes.get(stepId);
    if (existing !== undefined) {
      const shown =
        existing.status === 'applying' && this.now - existing.at > UNCERTAIN_AFTER_MS
          ? 'uncertain'
          : existing.status;
      if (status === 'applying' || shown !== 'applying') return { kind: 'already_claimed', status: shown };
    }
    this.outcomes.set(stepId, { status, at: this.now });
    if (status === 'applied') this.release(true);
    return { kind: 'recorded', status };
  }

  /**
   * Releases every step of a pending run that is ready: continue, approved (or auto), dependencies
   * applied — nothing at all when `rechecked` (every step's checks ran again) and one of them fails.
   */
  private release(rechecked: boolean): void {
    const version = this.current;
    if (this.status !== 'pending' || version === undefined || this.now >= this.expiresAt) return;
    if (rechecked && this.failingChecks(version.steps).length > 0) return;
    const applied = new Set([...this.outcomes].flatMap(([id, o]) => (o.status === 'applied' ? [id] : [])));
    for (const step of version.steps) {
      const route = routeOf(step);
      if (route.kind === 'block' || !route.continue || this.released.has(step.id)) continue;
      if (route.kind === 'review' && this.standing(version, step)?.satisfied !== true) continue;
      if (!(step.dependsOn ?? []).every((id) => applied.has(id))) continue;
      this.released.set(step.id, { at: this.now, version: version.number, digest: step.digest });
    }
  }

  // ── what the service must show ───────────────────────────────────────────────────────────────────

  expectedRun(): ExpectedRun | undefined {
    const version = this.current;
    if (this.status === 'none' || this.status === 'invalid' || version === undefined) return undefined;
    const standing: Record<string, ModelStanding> = {};
    for (const step of version.steps) {
      const approved = this.standing(version, step);
      if (approved !== undefined) standing[step.id] = approved;
    }
    return {
      status: this.status,
      version: version.number,
      steps: version.steps.map((step) => ({
        id: step.id,
        tool: step.tool,
        args: step.args,
        digest: step.digest,
        route: routeOf(step).kind,
        previewed: version.previews[step.id],
      })),
      provenance: version.provenance,
      createdBy: version.createdBy,
      baseVersion: version.baseVersion,
      standing,
      awaiting:
        this.status === 'pending'
          ? this.awaited(version).map((step) => {
              const approved = standing[step.id]!;
              const route = routeOf(step);
              return {
                stepId: step.id,
                group: route.kind === 'review' ? route.group : '',
                have: approved.have,
                need: approved.need,
                approvers: approved.approvers,
                mayAct: sorted(new Set([...Object.values(GROUPS).flat(), ...this.escalated.keys()])).filter(
                  (userId) =>
                    !approved.approvers.includes(userId) && this.right(version, step, userId) !== undefined,
                ),
              };
            })
          : [],
      approvedBy: sorted(new Set(Object.values(standing).flatMap((approved) => approved.approvers))),
      blocked: this.blocked(version).map((step) => step.id),
      decidedBy: this.decidedBy,
      decidedAt: this.decidedAt,
      reason: this.reason,
      recheckProblem: this.status === 'pending' ? this.recheckProblem : undefined,
      escalationLevel: this.escalationLevel,
      escalatedTo: [...this.escalated.keys()],
      escalated: [...this.escalated].map(([userId, levels]) => ({ userId, levels })),
      usedStepIds: sorted(this.history.keys()),
      released: sorted([...this.released].map(([id, entry]) => `${id}@${entry.version}@${entry.at}`)),
      ...(this.binding.comparableRecords
        ? {
            approvals: sorted(
              this.approvals.map((a) => `${a.stepId}|${a.stepDigest}|${a.userId}|${a.version}|${a.at}`),
            ),
          }
        : {}),
    };
  }
}
