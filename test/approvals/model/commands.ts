/**
 * The commands of the model-based test: each one moves the clock, asks the reference model what the
 * service must answer, calls the real ApprovalService on real Redis, and compares the answer and the
 * whole observable state (see `checkState`). Arbitraries generate them from small domains so that
 * identical steps, reverts, stale versions and expiry happen often.
 */
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { expect } from 'vitest';
import type { ApprovalService } from '../../../src/approvals/service.ts';
import type { UseCaseResult } from '../../../src/approvals/types.ts';
import {
  type Decision,
  envelopeOf,
  type JsonObject,
  storedHookResults,
  validate,
} from '../../../src/pipeline/index.ts';
import { AGENT, modelConfig, SUPPLIERS, type Supplier, USERS, type World } from './config.ts';
import { checkState, expectSame } from './observe.ts';
import {
  type EditedStep,
  isoSeconds,
  type ModelVersion,
  type Outcome,
  problem,
  type RunModel,
  type StepSpec,
} from './run-model.ts';

/** The system under test for one sequence: a service on a fresh run id, with a clock the test moves. */
export interface Real {
  readonly svc: ApprovalService;
  /** The connection the service uses (the journal is read back from it). */
  readonly redis: Redis;
  readonly runId: string;
  readonly clock: { now: number };
  /** Decisions the service delivered, in order. */
  readonly delivered: Decision[];
  /** What ran so far, with concrete steps and answers (appended to a failure's message). */
  readonly trace: string[];
  /** The world this run's hooks read (config.ts); the model keeps its own copy. */
  readonly world: World;
}

/** How often each kind of command got each answer (`MODEL_STATS=1` prints it): what the runs covered. */
export const tally = new Map<string, number>();
const SECOND = 1_000;
const MINUTE = 60 * SECOND;

/** The answer of a use case, reduced to what the model predicts. */
export function outcomeOf(result: UseCaseResult): Outcome {
  switch (result.kind) {
    case 'awaiting':
      return { kind: 'awaiting', approvedSteps: [...result.approvedSteps] };
    case 'edited':
      return {
        kind: 'edited',
        version: result.run.version,
        touched: [...result.diff.touchedStepIds],
        added: result.diff.counts.added,
        removed: result.diff.counts.removed,
        changed: result.diff.counts.changed,
      };
    case 'escalated':
      return { kind: 'escalated', level: result.level };
    case 'stale':
      return { kind: 'stale', currentVersion: result.currentVersion };
    case 'already_decided':
      return { kind: 'already_decided', status: result.status, by: result.by };
    case 'invalid':
      return {
        kind: 'invalid',
        phase: result.phase,
        problems: result.diagnostics.map((d) => problem(d.code, d.stepId)).sort(),
      };
    default:
      return { kind: result.kind };
  }
}

function show(outcome: Outcome): string {
  const { kind, ...rest } = outcome;
  return Object.keys(rest).length === 0 ? kind : `${kind} ${JSON.stringify(rest)}`;
}

function showStep(step: { readonly id?: string; readonly tool: string; readonly args: JsonObject }): string {
  return `${step.id ?? '(new)'}=${step.tool}${JSON.stringify(step.args)}`;
}

function showSpec(step: StepSpec): string {
  const deps = step.dependsOn === undefined ? '' : ` ← ${step.dependsOn.join(',')}`;
  return `${step.tool}${JSON.stringify(step.args)}${deps}`;
}

/** `current`, or `current-n` for a version n behind it. */
function showBack(back: number): string {
  return back === 0 ? 'current' : `current-${back}`;
}

/** Prepared command: what it is (concretely), what the model expects, and the call on the service. */
type Prepared =
  | {
      readonly label: string;
      readonly expected: Outcome;
      readonly act: (svc: ApprovalService) => Promise<UseCaseResult>;
      /** Extra checks on the service's answer. */
      readonly verify?: (result: UseCaseResult) => void | Promise<void>;
    }
  /** Nothing is called (time passes): only the state is compared. */
  | { readonly label: string };

abstract class RunCommand implements fc.AsyncCommand<RunModel, Real> {
  /** How far the clock moves before the command (every command moves it: approvals never tie). */
  protected get elapse(): number {
    return SECOND;
  }

  check(_model: Readonly<RunModel>): boolean {
    return true;
  }

  /** Reads the model for the command's inputs, then applies the use case to it (a world command moves `real`'s world too). */
  protected abstract prepare(model: RunModel, real: Real): Prepared;

  abstract toString(): string;

  async run(model: RunModel, real: Real): Promise<void> {
    model.now += this.elapse;
    real.clock.now = model.now;
    const prepared = this.prepare(model, real);
    const { label } = prepared;
    try {
      let result: UseCaseResult | undefined;
      if ('act' in prepared) {
        result = await prepared.act(real.svc);
        const actual = outcomeOf(result);
        const differs =
          show(actual) === show(prepared.expected) ? '' : ` (model: ${show(prepared.expected)})`;
        real.trace.push(`${label} → ${show(actual)}${differs}`);
        count(this.constructor.name.replace('Command', ''), actual);
        expectSame(actual, prepared.expected, `${label}: the answer`);
        await prepared.verify?.(result);
      } else {
        real.trace.push(label);
      }
      await checkState(model, real, label, result);
    } catch (error) {
      if (real.trace.at(-1)?.startsWith(label) !== true) real.trace.push(`${label} → threw`);
      throw withTrace(error, real.trace);
    }
  }
}

/** Counts an answer in `tally`, by command and kind (and for refused edits, phase and codes). */
function count(command: string, outcome: Outcome): void {
  const detail =
    outcome.kind === 'invalid'
      ? ` (${outcome.phase}: ${outcome.problems.map((problem) => problem.split(':')[0]).join(' ')})`
      : '';
  const key = `${command} → ${outcome.kind}${detail}`;
  tally.set(key, (tally.get(key) ?? 0) + 1);
}

/** The failure, with the run's trace after its message (fast-check reports the message). */
function withTrace(error: unknown, trace: readonly string[]): Error {
  const message = error instanceof Error ? error.message : String(error);
  return new Error(`${message}\n\nThe run so far:\n  ${trace.join('\n  ')}`, { cause: error });
}

/** The version `back` versions behind the current one (0 and below for none). */
function versionBack(model: RunModel, back: number): number {
  return (model.current?.number ?? 0) - back;
}

// ── submit ──────────────────────────────────────────────────────────────────────────────────────────

export class SubmitCommand extends RunCommand {
  constructor(
    readonly steps: readonly StepSpec[],
    readonly expiresInMinutes: number,
    /** Whether order B's warehouse is closed when the plan comes in. */
    readonly warehouseClosed = false,
  ) {
    super();
  }

  toString(): string {
    const closed = this.warehouseClosed ? ', warehouse B closed' : '';
    return `submit([${this.steps.map(showSpec).join(', ')}], expires in ${this.expiresInMinutes}m${closed})`;
  }

  protected prepare(model: RunModel, real: Real): Prepared {
    model.world.warehouseBClosed = this.warehouseClosed;
    real.world.warehouseBClosed = this.warehouseClosed;
    const expiresAt = model.now + this.expiresInMinutes * MINUTE;
    const raw = JSON.stringify({
      runId: model.runId,
      agent: AGENT,
      expiresAt: isoSeconds(expiresAt),
      steps: this.steps,
    });
    return {
      label: this.toString(),
      expected: model.submit(raw, this.steps, expiresAt),
      act: (svc) => svc.submitPlan({ runId: model.runId, agent: AGENT, raw }),
    };
  }
}

/** The agent (or a retry of its job) submits again: the very same text, or another under the same run id. */
export class ResubmitCommand extends RunCommand {
  constructor(readonly same: boolean) {
    super();
  }

  toString(): string {
    return this.same ? 'resubmit(same text)' : 'resubmit(other text)';
  }

  protected prepare(model: RunModel): Prepared {
    const first = model.raw ?? '{}';
    const raw = this.same ? first : `${first.slice(0, -1)},"summary":"again"}`;
    return {
      label: this.toString(),
      expected: model.submit(raw, [], model.expiresAt),
      act: (svc) => svc.submitPlan({ runId: model.runId, agent: AGENT, raw }),
    };
  }
}

// ── clicks ──────────────────────────────────────────────────────────────────────────────────────────

export class ApproveCommand extends RunCommand {
  constructor(
    readonly userId: string,
    readonly back: number,
  ) {
    super();
  }

  toString(): string {
    return `approve(${this.userId}, ${showBack(this.back)})`;
  }

  protected prepare(model: RunModel): Prepared {
    const version = versionBack(model, this.back);
    return {
      label: `approve(${this.userId}, v${version})`,
      expected: model.approve(this.userId, version),
      act: (svc) => svc.approve({ runId: model.runId, version, userId: this.userId }),
    };
  }
}

export class RejectCommand extends RunCommand {
  constructor(
    readonly userId: string,
    readonly back: number,
    readonly reason: string,
  ) {
    super();
  }

  toString(): string {
    return `reject(${this.userId}, ${showBack(this.back)}, ${JSON.stringify(this.reason)})`;
  }

  protected prepare(model: RunModel): Prepared {
    const version = versionBack(model, this.back);
    return {
      label: `reject(${this.userId}, v${version}, ${JSON.stringify(this.reason)})`,
      expected: model.reject(this.userId, version, this.reason),
      act: (svc) => svc.reject({ runId: model.runId, version, userId: this.userId, reason: this.reason }),
    };
  }
}

// ── edits ───────────────────────────────────────────────────────────────────────────────────────────

/** Which id an added step is sent with. */
export type IdChoice =
  | 'none'
  /** the id of a step in the plan (a duplicate id: refused by parse) */
  | 'existing'
  /** an id the run used for a step it no longer has (kept only with that step's last bytes) */
  | 'used'
  /** an id the run never used (kept) */
  | 'fresh'
  /** `s9`, which the run may or may not have used (kept if not; then new ids start above it) */
  | 's9'
  /** not a valid id (refused by parse) */
  | 'malformed';

/** One change an editor makes in the edit modal, resolved against the plan at run time. */
export type EditOp =
  | { readonly op: 'change'; readonly at: number; readonly spec: StepSpec }
  | {
      readonly op: 'add';
      readonly at: number;
      readonly source:
        | { readonly spec: StepSpec }
        /** an exact copy of the step at this index: identical bytes */
        | { readonly copy: number }
        /** a step the run no longer has, with its id and its last bytes: a restoration */
        | { readonly restore: number };
      readonly id: IdChoice;
    }
  | { readonly op: 'remove'; readonly at: number }
  | { readonly op: 'move'; readonly from: number; readonly to: number }
  /** the step at `at` back to the bytes it had `back` versions before (same id) */
  | { readonly op: 'revert'; readonly at: number; readonly back: number }
  /** the step at `at` now depends on the step at `on` (itself when the same), or on nothing (null) */
  | { readonly op: 'depend'; readonly at: number; readonly on: number | null };

function showOp(op: EditOp): string {
  switch (op.op) {
    case 'change':
      return `change #${op.at} to ${showSpec(op.spec)}`;
    case 'add': {
      const source =
        'spec' in op.source
          ? showSpec(op.source.spec)
          : 'copy' in op.source
            ? `a copy of #${op.source.copy}`
            : `removed step #${op.source.restore} as it was`;
      return `add ${source} at #${op.at}${op.id === 'none' || 'restore' in op.source ? '' : ` with id:${op.id}`}`;
    }
    case 'remove':
      return `remove #${op.at}`;
    case 'move':
      return `move #${op.from} to #${op.to}`;
    case 'revert':
      return `revert #${op.at} to its bytes ${op.back} version(s) back`;
    case 'depend':
      return op.on === null ? `#${op.at} depends on nothing` : `#${op.at} depends on #${op.on}`;
  }
}

/** Ids the run used for steps the plan no longer has, in a stable order. */
function removedIds(model: RunModel, steps: readonly EditedStep[]): string[] {
  const present = new Set(steps.flatMap((step) => (step.id === undefined ? [] : [step.id])));
  return [...model.history.keys()].filter((id) => !present.has(id)).sort();
}

/** The steps the editor sends: the version's steps with `ops` applied, by index (modulo length). */
export function resolveEdit(model: RunModel, base: ModelVersion, ops: readonly EditOp[]): EditedStep[] {
  // A step keeps its dependencies through the edit form; new steps and copies have none.
  const deps = (step: { readonly dependsOn?: readonly string[] }) =>
    step.dependsOn === undefined ? {} : { dependsOn: step.dependsOn };
  const steps: EditedStep[] = base.steps.map((step) => ({
    id: step.id,
    tool: step.tool,
    args: step.args,
    ...deps(step),
  }));
  const pick = (at: number) => (steps.length === 0 ? undefined : at % steps.length);
  for (const op of ops) {
    switch (op.op) {
      case 'change': {
        const index = pick(op.at);
        if (index === undefined) break;
        const id = steps[index]!.id;
        steps[index] = {
          ...(id === undefined ? {} : { id }),
          tool: op.spec.tool,
          args: op.spec.args,
          ...deps(steps[index]!),
        };
        break;
      }
      case 'add': {
        let added: EditedStep | undefined;
        if ('restore' in op.source) {
          const ids = removedIds(model, steps);
          const id = ids[op.source.restore % Math.max(1, ids.length)];
          const last = id === undefined ? undefined : model.history.get(id);
          if (last !== undefined) added = { id: last.id, tool: last.tool, args: last.args, ...deps(last) };
        } else {
          const copied = 'copy' in op.source ? pick(op.source.copy) : undefined;
          const spec =
            'spec' in op.source ? op.source.spec : copied === undefined ? undefined : steps[copied];
          if (spec !== undefined) {
            const id = chooseId(model, steps, op.id, op.at);
            added = { ...(id === undefined ? {} : { id }), tool: spec.tool, args: spec.args };
          }
        }
        if (added !== undefined) steps.splice(op.at % (steps.length + 1), 0, added);
        break;
      }
      case 'remove': {
        const index = pick(op.at);
        if (index !== undefined) steps.splice(index, 1);
        break;
      }
      case 'move': {
        const from = pick(op.from);
        if (from === undefined || steps.length < 2) break;
        const [moved] = steps.splice(from, 1);
        steps.splice(op.to % (steps.length + 1), 0, moved!);
        break;
      }
      case 'revert': {
        const index = pick(op.at);
        const id = index === undefined ? undefined : steps[index]!.id;
        const earlier = model.version(base.number - op.back)?.steps.find((step) => step.id === id);
        if (index !== undefined && earlier !== undefined) {
          steps[index] = { id: earlier.id, tool: earlier.tool, args: earlier.args, ...deps(earlier) };
        }
        break;
      }
      case 'depend': {
        // What the form's dependency field sends: one step, or none. A step without an id yet (added
        // in this edit) cannot be named.
        const index = pick(op.at);
        if (index === undefined) break;
        const { dependsOn: _, ...step } = steps[index]!;
        const on = op.on === null ? undefined : steps[pick(op.on)!]!.id;
        steps[index] =
          op.on === null ? step : on === undefined ? steps[index]! : { ...step, dependsOn: [on] };
        break;
      }
    }
  }
  return steps;
}

function chooseId(
  model: RunModel,
  steps: readonly EditedStep[],
  choice: IdChoice,
  at: number,
): string | undefined {
  switch (choice) {
    case 'none':
      return undefined;
    case 'existing':
      return steps.length === 0 ? undefined : steps[at % steps.length]!.id;
    case 'used': {
      const ids = removedIds(model, steps);
      return ids[at % Math.max(1, ids.length)];
    }
    case 'fresh':
      return 'x1';
    case 's9':
      return 's9';
    case 'malformed':
      return 'bad id';
  }
}

/**
 * Checks that an edit the service stored passed all four phases, may_author included, as it stands:
 * the hooks of the steps it touched run again (the world has not moved), the others keep their base's.
 */
function passedAllPhases(editorId: string, now: number): (result: UseCaseResult) => Promise<void> {
  return async (result) => {
    if (result.kind !== 'edited') return;
    const revalidated = await validate(
      envelopeOf(result.run.current.plan),
      { config: modelConfig.pipeline, now, edit: { editorId, base: result.previous.plan } },
      { reuse: storedHookResults(result.previous.plan) },
    );
    expect(revalidated.ok, `v${result.run.version} re-validated as an edit by ${editorId}`).toBe(true);
    expect(result.run.current.createdBy).toBe(editorId);
    expect(result.run.current.baseVersion).toBe(result.previous.version);
  };
}

export class EditCommand extends RunCommand {
  constructor(
    readonly editorId: string,
    readonly back: number,
    readonly ops: readonly EditOp[],
  ) {
    super();
  }

  toString(): string {
    return `edit(${this.editorId}, ${showBack(this.back)}: ${this.ops.map(showOp).join('; ')})`;
  }

  protected prepare(model: RunModel): Prepared {
    const version = versionBack(model, this.back);
    const base = model.version(version) ?? model.current;
    const steps = base === undefined ? [] : resolveEdit(model, base, this.ops);
    return {
      label: `edit(${this.editorId}, v${version}: [${steps.map(showStep).join(', ')}])`,
      expected: model.edit(this.editorId, version, steps),
      act: (svc) =>
        svc.applyEdit({ runId: model.runId, baseVersion: version, editorId: this.editorId, steps }),
      verify: passedAllPhases(this.editorId, model.now),
    };
  }
}

export type DiffActionName = 'remove_step' | 'revert_step' | 'discard_edit';

/**
 * A button of a version's diff message: remove a step that edit added, revert one it changed (picked
 * among them by `pick`), or discard the edit. `bogus` aims it at a step the edit did not touch.
 */
export class DiffActionCommand extends RunCommand {
  constructor(
    readonly userId: string,
    readonly back: number,
    readonly action: DiffActionName,
    readonly pick: number,
    readonly bogus: boolean,
  ) {
    super();
  }

  /** Mostly on runs with an edit to act on; now and then on one without (the card of v1 has no diff). */
  override check(model: Readonly<RunModel>): boolean {
    return model.versions.length >= 2 || this.pick === 0;
  }

  toString(): string {
    const target =
      this.action === 'discard_edit' ? '' : `, ${this.bogus ? 'untouched' : 'touched'} step #${this.pick}`;
    return `${this.action}(${this.userId}, ${showBack(this.back)}${target})`;
  }

  protected prepare(model: RunModel): Prepared {
    const version = versionBack(model, this.back);
    const stepId = this.action === 'discard_edit' ? undefined : this.target(model, version);
    return {
      label: `${this.action}(${this.userId}, v${version}${stepId === undefined ? '' : `, ${stepId}`})`,
      expected: model.diffAction(this.userId, version, this.action, stepId),
      act: (svc) =>
        svc.applyDiffAction({
          runId: model.runId,
          version,
          userId: this.userId,
          action: this.action,
          ...(stepId === undefined ? {} : { stepId }),
        }),
      verify: passedAllPhases(this.userId, model.now),
    };
  }

  /** The step the button is for: one the edit added (remove) or changed (revert), else any other id. */
  private target(model: RunModel, version: number): string {
    const edited = model.version(version);
    const base = edited?.baseVersion === undefined ? undefined : model.version(edited.baseVersion);
    const before = new Map((base?.steps ?? []).map((step) => [step.id, step.digest]));
    const touched = (edited?.steps ?? []).filter((step) =>
      this.action === 'remove_step'
        ? !before.has(step.id)
        : (before.get(step.id) ?? step.digest) !== step.digest,
    );
    const others = [...model.history.keys()].filter((id) => !touched.some((step) => step.id === id)).sort();
    const pool = this.bogus || touched.length === 0 ? [...others, 's99'] : touched.map((step) => step.id);
    return pool[this.pick % pool.length]!;
  }
}

// ── timers and time ─────────────────────────────────────────────────────────────────────────────────

/** Time passes with nobody clicking. */
export class WaitCommand extends RunCommand {
  constructor(readonly minutes: number) {
    super();
  }

  protected override get elapse(): number {
    return this.minutes * MINUTE;
  }

  toString(): string {
    return `wait(${this.minutes}m)`;
  }

  protected prepare(): Prepared {
    // Nothing is called: the state must still be what it was, read at a later time.
    return { label: this.toString() };
  }
}

/** The expiry timer armed for a version fires (now, whatever the time). */
export class ExpireCommand extends RunCommand {
  constructor(readonly back: number) {
    super();
  }

  toString(): string {
    return `expire timer(${showBack(this.back)})`;
  }

  protected prepare(model: RunModel): Prepared {
    const version = versionBack(model, this.back);
    return {
      label: `expire timer(v${version})`,
      expected: model.expire(version),
      act: (svc) => svc.expire({ runId: model.runId, version }),
    };
  }
}

/** An escalation level's timer fires for a version, notifying whom the config names. */
export class EscalateCommand extends RunCommand {
  constructor(
    readonly level: 1 | 2,
    readonly back: number,
  ) {
    super();
  }

  toString(): string {
    return `escalate(level ${this.level}, ${showBack(this.back)})`;
  }

  protected prepare(model: RunModel): Prepared {
    const version = versionBack(model, this.back);
    const notified = modelConfig.escalation[AGENT]?.levels[this.level - 1]?.notify ?? [];
    return {
      label: `escalate(level ${this.level}, v${version}, notify ${notified.join(' ')})`,
      expected: model.escalate(version, this.level),
      act: (svc) => svc.escalate({ runId: model.runId, version, level: this.level }),
    };
  }
}

// ── the world the hooks read ────────────────────────────────────────────────────────────────────────

/** Order B's warehouse closes, or opens again: `ship`'s checks refuse order B while it is closed. */
export class WarehouseCommand extends RunCommand {
  toString(): string {
    return 'toggle warehouse B';
  }

  protected prepare(model: RunModel, real: Real): Prepared {
    model.world.warehouseBClosed = !model.world.warehouseBClosed;
    real.world.warehouseBClosed = !real.world.warehouseBClosed;
    return { label: `warehouse B ${real.world.warehouseBClosed ? 'closes' : 'opens'}` };
  }
}

/** A supplier's record changes: what `pay`'s preview reads from now on. */
export class SupplierCommand extends RunCommand {
  constructor(readonly supplier: Supplier) {
    super();
  }

  toString(): string {
    return `bump supplier ${this.supplier}`;
  }

  protected prepare(model: RunModel, real: Real): Prepared {
    model.world.supplierVersions[this.supplier] += 1;
    real.world.supplierVersions[this.supplier] += 1;
    return {
      label: `supplier ${this.supplier} is now at version ${real.world.supplierVersions[this.supplier]}`,
    };
  }
}

// ── the agent's outcome reports ─────────────────────────────────────────────────────────────────────

/** The agent reports an outcome for a step of the current version (picked by index), or one it invents. */
export class OutcomeCommand implements fc.AsyncCommand<RunModel, Real> {
  constructor(
    readonly pick: number,
    readonly status: 'applying' | 'applied' | 'failed',
  ) {}

  check(_model: Readonly<RunModel>): boolean {
    return true;
  }

  toString(): string {
    return `outcome(#${this.pick}, ${this.status})`;
  }

  async run(model: RunModel, real: Real): Promise<void> {
    model.now += SECOND;
    real.clock.now = model.now;
    const steps = model.current?.steps ?? [];
    const stepId = steps.length === 0 ? 's1' : steps[this.pick % steps.length]!.id;
    const label = `outcome(${stepId}, ${this.status})`;
    try {
      const expected = model.reportOutcome(stepId, this.status);
      const result = await real.svc.recordOutcome({ runId: real.runId, stepId, status: this.status });
      const actual =
        result.kind === 'recorded' || result.kind === 'already_claimed'
          ? { kind: result.kind, status: result.outcome.status }
          : result;
      real.trace.push(`${label} → ${JSON.stringify(actual)}`);
      count('Outcome', { kind: actual.kind } as Outcome);
      expectSame(actual, expected, `${label}: the answer`);
      await checkState(model, real, label);
    } catch (error) {
      if (real.trace.at(-1)?.startsWith(label) !== true) real.trace.push(`${label} → threw`);
      throw withTrace(error, real.trace);
    }
  }
}

// ── arbitraries ─────────────────────────────────────────────────────────────────────────────────────

const user = fc.constantFrom(...USERS);
/** Mostly the current version; sometimes one or two behind (a stale card or timer). */
const back = fc.oneof(
  { weight: 6, arbitrary: fc.constant(0) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 2 }) },
);
const index = fc.nat({ max: 7 });

/** Steps that pass every phase, from a domain small enough that identical steps are common. */
export const validSpec: fc.Arbitrary<StepSpec> = fc.oneof(
  fc.constantFrom('A', 'B').map((order): StepSpec => ({ tool: 'ship', args: { order } })),
  fc
    .record({
      to: fc.constantFrom('acme', 'globex'),
      amount: fc.constantFrom(500, 500, 2_000, 2_000, 20_000, 200_000),
    })
    .map((args): StepSpec => ({ tool: 'pay', args })),
  fc
    .record({ text: fc.constantFrom('hi', 'bye'), urgent: fc.constantFrom(undefined, true, true, false) })
    .map(
      ({ text, urgent }): StepSpec => ({
        tool: 'note',
        args: urgent === undefined ? { text } : { text, urgent },
      }),
    ),
);

/** Steps the pipeline refuses: an unknown tool (resolve), $0.00 and an unknown argument (type). */
export const brokenSpec: fc.Arbitrary<StepSpec> = fc.constantFrom<StepSpec>(
  { tool: 'wire', args: { to: 'acme' } },
  { tool: 'pay', args: { to: 'acme', amount: 0 } },
  { tool: 'ship', args: { order: 'A', rush: true } },
);

const anySpec = fc.oneof({ weight: 12, arbitrary: validSpec }, { weight: 1, arbitrary: brokenSpec });

const editOp: fc.Arbitrary<EditOp> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('change' as const), at: index, spec: anySpec }) },
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('add' as const),
      at: index,
      source: fc.oneof(
        { weight: 3, arbitrary: fc.record({ spec: anySpec }) },
        { weight: 3, arbitrary: fc.record({ copy: index }) },
        { weight: 1, arbitrary: fc.record({ restore: index }) },
      ),
      id: fc.oneof(
        { weight: 4, arbitrary: fc.constant<IdChoice>('none') },
        { weight: 1, arbitrary: fc.constantFrom<IdChoice>('existing', 'used', 'fresh', 's9', 'malformed') },
      ),
    }),
  },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('remove' as const), at: index }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('move' as const), from: index, to: index }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('depend' as const),
      at: index,
      on: fc.option(index, { freq: 4 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('revert' as const),
      at: index,
      back: fc.integer({ min: 1, max: 3 }),
    }),
  },
);

/** The run's first command: the agent's plan (1–4 steps, now and then one the pipeline refuses). */
export const submitCommand: fc.Arbitrary<SubmitCommand> = fc
  .record({
    steps: fc.array(
      fc.record({
        spec: fc.oneof({ weight: 99, arbitrary: validSpec }, { weight: 1, arbitrary: brokenSpec }),
        // Often one dependency on an earlier step (the parser numbers steps s1, s2, …).
        dependsOn: fc.option(fc.nat({ max: 3 }), { freq: 2 }),
      }),
      { minLength: 1, maxLength: 4 },
    ),
    minutes: fc.integer({ min: 20, max: 90 }),
    // Now and then order B's warehouse is closed already when the plan comes in.
    closed: fc.oneof(
      { weight: 5, arbitrary: fc.constant(false) },
      { weight: 1, arbitrary: fc.constant(true) },
    ),
  })
  .map(
    ({ steps, minutes, closed }) =>
      new SubmitCommand(
        steps.map(({ spec, dependsOn }, index) =>
          dependsOn === null || index === 0 ? spec : { ...spec, dependsOn: [`s${(dependsOn % index) + 1}`] },
        ),
        minutes,
        closed,
      ),
  );

/** Everything that may happen to a run after its submission, weighted towards approvals and edits. */
export const runCommand: fc.Arbitrary<fc.AsyncCommand<RunModel, Real>> = fc.oneof(
  { weight: 30, arbitrary: fc.tuple(user, back).map(([u, b]) => new ApproveCommand(u, b)) },
  {
    weight: 20,
    arbitrary: fc
      .tuple(user, back, fc.array(editOp, { minLength: 1, maxLength: 3 }))
      .map(([u, b, ops]) => new EditCommand(u, b, ops)),
  },
  {
    weight: 8,
    arbitrary: fc
      .tuple(
        user,
        back,
        fc.constantFrom<DiffActionName>('remove_step', 'revert_step', 'discard_edit'),
        index,
        fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      )
      .map(([u, b, action, pick, bogus]) => new DiffActionCommand(u, b, action, pick, bogus)),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(user, back, fc.constantFrom('wrong amount', '  ', 'not today'))
      .map(([u, b, reason]) => new RejectCommand(u, b, reason)),
  },
  { weight: 8, arbitrary: fc.constantFrom(5, 15, 30).map((minutes) => new WaitCommand(minutes)) },
  {
    weight: 8,
    arbitrary: fc
      .tuple(fc.constantFrom<1 | 2>(1, 2), back)
      .map(([level, b]) => new EscalateCommand(level, b)),
  },
  { weight: 5, arbitrary: back.map((b) => new ExpireCommand(b)) },
  { weight: 3, arbitrary: fc.boolean().map((same) => new ResubmitCommand(same)) },
  { weight: 5, arbitrary: fc.constant(null).map(() => new WarehouseCommand()) },
  { weight: 4, arbitrary: fc.constantFrom(...SUPPLIERS).map((supplier) => new SupplierCommand(supplier)) },
  {
    weight: 12,
    arbitrary: fc
      .tuple(
        index,
        fc.constantFrom<'applying' | 'applied' | 'failed'>('applied', 'applied', 'applying', 'failed'),
      )
      .map(([pick, status]) => new OutcomeCommand(pick, status)),
  },
);
