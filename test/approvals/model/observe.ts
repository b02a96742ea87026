/**
 * What the test reads back from the service after every command, and what it holds it to: the
 * model's view of the run and of the decision, and — independently of the model — the properties the
 * approval rules promise (see `assertInvariants`).
 */
import type { JournalRecord, RunView, UseCaseResult } from '../../../src/approvals/types.ts';
import {
  type Decision,
  planDigest,
  type Release,
  receiptKeysOf,
  verifyDecisionStep,
  verifyReceipt,
} from '../../../src/pipeline/index.ts';
import { testSigning } from '../../support/stack.ts';
import type { Real } from './commands.ts';
import { modelConfig } from './config.ts';
import { type ExpectedDecision, type ExpectedRun, problem, type RunModel } from './run-model.ts';

/** The run as the service shows it, in the model's terms. */
export function observedRun(run: RunView | undefined, withRecords: boolean): ExpectedRun | undefined {
  if (run === undefined) return undefined;
  return {
    status: run.status,
    version: run.version,
    steps: run.current.plan.steps.map((step) => ({
      id: step.id,
      tool: step.tool,
      args: step.args,
      digest: step.digest,
      route: step.route.kind,
      previewed: step.changeSet?.target.version,
    })),
    provenance: run.current.provenance,
    createdBy: run.current.createdBy,
    baseVersion: run.current.baseVersion,
    standing: Object.fromEntries(
      Object.entries(run.standing).map(([id, standing]) => [
        id,
        { ...standing, approvers: [...standing.approvers].sort() },
      ]),
    ),
    awaiting: run.awaiting.map((awaited) => ({
      ...awaited,
      approvers: [...awaited.approvers].sort(),
      mayAct: [...awaited.mayAct].sort(),
    })),
    approvedBy: [...run.approvedBy].sort(),
    blocked: run.blocked.map((step) => step.id),
    decidedBy: run.decidedBy,
    decidedAt: run.decidedAt,
    reason: run.reason,
    recheckProblem: run.recheckProblem,
    escalationLevel: run.escalationLevel,
    escalatedTo: run.escalatedTo,
    escalated: run.escalated.map(({ userId, levels }) => ({ userId, levels })),
    usedStepIds: [...run.usedStepIds].sort(),
    released: Object.entries(run.released)
      .map(([id, entry]) => `${id}@${entry.version}@${entry.at}`)
      .sort(),
    ...(withRecords
      ? {
          approvals: run.approvals
            .map((a) => `${a.stepId}|${a.stepDigest}|${a.userId}|${a.version}|${a.at}`)
            .sort(),
        }
      : {}),
  };
}

/** The decision as the service sealed it, in the model's terms. */
export function observedDecision(decision: Decision | undefined): ExpectedDecision | undefined {
  if (decision === undefined) return undefined;
  return {
    status: decision.status,
    version: decision.version,
    plan:
      decision.plan === null
        ? null
        : {
            expiresAt: decision.plan.expiresAt,
            digest: decision.plan.digest,
            steps: decision.plan.steps.map((step) => ({
              id: step.id,
              tool: step.tool,
              args: step.args,
              digest: step.digest,
              route: step.route,
              approvals: step.approvals.map(({ userId, at }) => ({ userId, at })),
              provenance: step.provenance,
              preconditions: step.preconditions?.map(({ type, id, version }) => ({ type, id, version })),
            })),
          },
    decidedAt: decision.decidedAt,
    decidedBy: decision.decidedBy,
    reason: decision.reason,
    phase: decision.phase,
    problems: decision.diagnostics.map((d) => problem(d.code, d.stepId)).sort(),
    released: (decision.released ?? []).map(({ stepId, releasedAt, outcome }) => ({
      stepId,
      releasedAt,
      outcome,
    })),
  };
}

/**
 * `actual` (the service's) equals `expected` (the model's); undefined properties count as absent.
 * When they differ, the message names each differing field with both values, so fast-check's report
 * says what went wrong. (Not `expect`: this runs several times per command, and its cost showed.)
 */
export function expectSame(actual: unknown, expected: unknown, what: string): void {
  if (same(actual, expected)) return;
  const fields =
    isRecord(actual) && isRecord(expected)
      ? [...new Set([...Object.keys(actual), ...Object.keys(expected)])].filter(
          (key) => !same(actual[key], expected[key]),
        )
      : [];
  const differences =
    fields.length === 0
      ? [`  service: ${stableJson(actual)}`, `  model:   ${stableJson(expected)}`]
      : fields.flatMap((key) => [
          `  ${key}:`,
          `    service: ${stableJson(isRecord(actual) ? actual[key] : undefined)}`,
          `    model:   ${stableJson(isRecord(expected) ? expected[key] : undefined)}`,
        ]);
  throw new Error(`${what} differs from the model's\n${differences.join('\n')}`);
}

/** Deep equality of JSON-like values, undefined properties counting as absent. */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => same(item, b[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const defined = (record: Record<string, unknown>) =>
    Object.keys(record).filter((key) => record[key] !== undefined);
  const keys = defined(left);
  return keys.length === defined(right).length && keys.every((key) => same(left[key], right[key]));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}

/** Throws `message` unless `condition`: for the invariants, checked many times per command. */
function holds(condition: boolean, message: string): void {
  if (!condition) throw new Error(`invariant broken: ${message}`);
}

/**
 * Reads the run and its decision back and holds them to the model and to the invariants; the run and
 * decision the use case answered with (`result`) must be the ones stored.
 */
export async function checkState(
  model: RunModel,
  real: Real,
  after: string,
  result?: UseCaseResult,
): Promise<void> {
  const [run, decision] = await Promise.all([real.svc.getRun(real.runId), real.svc.getDecision(real.runId)]);
  const comparable = model.binding.comparableRecords;
  const observed = observedRun(run, comparable);
  expectSame(observed, model.expectedRun(), `the run after ${after}`);
  expectSame(observedDecision(decision), model.decision, `the decision after ${after}`);
  expectSame(real.delivered, decision === undefined ? [] : [decision], `decisions delivered after ${after}`);
  if (result !== undefined && 'run' in result && result.run !== undefined) {
    expectSame(observedRun(result.run, comparable), observed, `the run answered to ${after} (stored)`);
  }
  if (result !== undefined && 'decision' in result && result.decision !== undefined) {
    expectSame(result.decision, decision, `the decision answered to ${after} (stored)`);
  }
  assertInvariants(run, decision);
  await assertReleases(real, run);
}

/**
 * The release invariants, on the service's own journal and stored releases: no step is released before
 * every step it depends on was reported applied and its own approvals were complete, only `continue`
 * steps are, nothing is released after the run was decided, and every release is signed and stored
 * once, for the step and version the journal names.
 */
async function assertReleases(real: Real, run: RunView | undefined): Promise<void> {
  const keys = real.svc.keys.forRun(real.runId);
  const [journal, stored] = await Promise.all([
    real.redis.lrange(keys.journal, 0, -1),
    real.redis.hgetall(keys.releases),
  ]);
  const applied = new Set<string>();
  const released = new Map<string, { version: number; digest: string }>();
  let decided = false;
  for (const text of journal) {
    const event = (JSON.parse(text) as JournalRecord).event;
    if (event.type === 'outcome' && event.status === 'applied') applied.add(event.stepId);
    if (event.type === 'approved' || event.type === 'rejected' || event.type === 'expired') decided = true;
    if (event.type !== 'released') continue;
    holds(!decided, `${event.stepId} is released before the run is decided`);
    holds(!released.has(event.stepId), `${event.stepId} is released once`);
    const version = await real.svc.getVersion(real.runId, event.version);
    const step = version?.plan.steps.find((candidate) => candidate.id === event.stepId);
    holds(step !== undefined && step.digest === event.digest, `${event.stepId} is released at its digest`);
    holds(
      step?.route.kind !== 'block' && step?.route.continue === true,
      `${event.stepId} is a continue step`,
    );
    for (const dependency of step?.dependsOn ?? []) {
      holds(
        applied.has(dependency),
        `${event.stepId} is released only after ${dependency} was reported applied`,
      );
    }
    released.set(event.stepId, { version: event.version, digest: event.digest });
  }
  holds(
    Object.keys(stored).sort().join() === [...released.keys()].sort().join(),
    'the releases stored are the ones journaled',
  );
  for (const [stepId, text] of Object.entries(stored)) {
    const release = JSON.parse(text) as Release;
    holds(
      release.stepId === stepId && release.version === released.get(stepId)?.version,
      `the release of ${stepId} names its step and version`,
    );
    holds(verifyGrantReceipt(release), `the release of ${stepId} is signed by Countersign`);
  }
  if (run === undefined) return;
  holds(
    Object.keys(run.released).sort().join() === [...released.keys()].sort().join(),
    'the run shows the steps released',
  );
  for (const [stepId, entry] of released) {
    const step = run.current.plan.steps.find((candidate) => candidate.id === stepId);
    holds(step?.digest === entry.digest, `released ${stepId} is still in the plan as released`);
    if (step?.route.kind === 'review') {
      holds(run.standing[stepId]?.satisfied === true, `released ${stepId} has its approvals`);
    }
  }
}

/** A release's receipt verifies with Countersign's public keys. */
function verifyGrantReceipt(release: Release): boolean {
  return verifyDecisionStep(
    release,
    release.plan.steps.find((step) => step.id === release.stepId) ?? { id: '', tool: '', args: {} },
    receiptKeysOf(testSigning.publicKeys),
    Date.parse(release.releasedAt),
    new Set(release.plan.steps.map((step) => step.id)),
  ).ok;
}

/**
 * What must hold of any run and decision, whatever the sequence that led there — checked on the
 * service's own state, without the model:
 * - a decision is about the run's current version (never a stale one), signed, and sealed exactly
 *   when the run is no longer pending;
 * - every approval that counts for a step was given to that step id at its current digest, by someone
 *   entitled now (a member of its group, or escalated with a grant covering the group — and the
 *   irreversibility — where the rule lets escalation count), and never by its author where the rule
 *   bars authors; the decision lists only approvals that count;
 * - an approved run was approved before it expired, with every review step satisfied and nothing
 *   blocked; an expired run's decision is `expired`, made at or after its expiry.
 */
export function assertInvariants(run: RunView | undefined, decision: Decision | undefined): void {
  if (decision !== undefined) {
    holds(
      verifyReceipt(decision, receiptKeysOf(testSigning.publicKeys)).ok,
      "the decision's receipt verifies",
    );
    holds(decision.configDigest === modelConfig.digest, 'the decision names the config it was made under');
    holds(decision.plan === null || planDigest(decision.plan) === decision.plan.digest, 'the plan digest');
  }
  if (run === undefined) {
    holds(decision === undefined || decision.status === 'invalid', 'only a refused plan has no run');
    return;
  }
  holds((run.status === 'pending') === (decision === undefined), 'decided exactly when it has a decision');
  if (decision !== undefined) {
    holds(decision.version === run.version, 'the decision is about the current version, not a stale one');
    holds(decision.plan?.digest === run.current.plan.digest, 'the decision seals the current plan');
    holds(decision.status === run.status, 'the decision and the run agree on the status');
  }

  const { current } = run;
  for (const step of current.plan.steps) {
    const { route } = step;
    const standing = run.standing[step.id];
    const decided = decision?.plan?.steps.find((s) => s.id === step.id)?.approvals.map((a) => a.userId) ?? [];
    if (route.kind !== 'review') {
      holds(standing === undefined && decided.length === 0, `${step.id} (${route.kind}) counts no approvals`);
      continue;
    }
    const counted = standing?.approvers ?? [];
    holds(standing !== undefined, `${step.id} has a standing`);
    holds(
      new Set(decided).size === decided.length && decided.every((userId) => counted.includes(userId)),
      `the decision lists only approvals that count for ${step.id}, once each`,
    );
    const author = current.provenance[step.id];
    const irreversible = modelConfig.pipeline.tools.get(step.tool)?.effect !== 'write';
    let alone = false;
    for (const userId of counted) {
      holds(
        run.approvals.some(
          (a) => a.userId === userId && a.stepId === step.id && a.stepDigest === step.digest,
        ),
        `${userId}'s approval counted for ${step.id} was given to ${step.id} at its current digest`,
      );
      holds(
        !route.distinctFromAuthor || author?.by !== 'user' || author.userId !== userId,
        `${userId} wrote ${step.id} and does not count for it`,
      );
      const member = (modelConfig.groups[route.group] ?? []).includes(userId);
      const grants =
        route.escalatedMayApprove === false
          ? []
          : (run.escalated.find((person) => person.userId === userId)?.may ?? []).filter(
              (grant) =>
                (grant.approve === '*' || grant.approve.includes(route.group)) &&
                (!irreversible || grant.irreversible),
            );
      holds(member || grants.length > 0, `${userId} is entitled to approve ${step.id}`);
      if (grants.some((grant) => grant.counts === 'alone')) alone = true;
    }
    holds(
      standing?.satisfied === (alone || counted.length >= route.approvals),
      `${step.id} is satisfied exactly when enough approvals count`,
    );
  }

  if (run.status === 'approved') {
    holds(
      decision !== undefined && Date.parse(decision.decidedAt) < Date.parse(current.plan.expiresAt),
      'an approved run was approved before it expired',
    );
    holds(run.blocked.length === 0, 'an approved run has no blocked step');
    holds(
      Object.values(run.standing).every((standing) => standing.satisfied),
      'an approved run has every review step satisfied',
    );
  }
  if (run.status === 'expired') {
    holds(
      decision !== undefined && Date.parse(decision.decidedAt) >= Date.parse(current.plan.expiresAt),
      'an expired run expired at or after its expiry',
    );
  }
}
