/**
 * Plans with dependencies, the pure part: what parse refuses, what the digests cover, and the gate
 * (`verifyDecisionStep`) refusing a step that is not released or whose dependency is not applied.
 */
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createReceiptSigner,
  type DecisionPlan,
  type DecisionStep,
  dependencyCycles,
  dependentsOf,
  digestPlan,
  planDigest,
  receiptKeysOf,
  signDecision,
  signRelease,
  stepDigest,
  verifyDecisionStep,
} from '../../src/pipeline/index.ts';
import { parseEnvelope } from '../../src/pipeline/phases/parse.ts';

const limits = { maxPlanBytes: 256 * 1024, maxSteps: 50, maxDepth: 16, maxStringLength: 10_000 };
const expiry = { now: Date.parse('2026-04-06T10:00:00Z'), defaultMs: () => 3_600_000 };
const note = (id: string, dependsOn?: string[]) => ({
  id,
  tool: 'add_note',
  args: { ticket_id: 'T-1', note: id },
  ...(dependsOn === undefined ? {} : { dependsOn }),
});
const parsed = (steps: unknown[]) => parseEnvelope({ runId: 'r1', agent: 'a', steps }, limits, expiry);

describe('parse', () => {
  it('keeps dependencies sorted, without an empty list, and accepts any order in the plan', () => {
    const result = parsed([note('s3', ['s2', 's1']), note('s1'), note('s2', [])]);
    expect(result.ok && result.value.steps).toEqual([note('s3', ['s1', 's2']), note('s1'), note('s2')]);
  });

  it('names a cycle along its steps, and every cycle in the plan', () => {
    const result = parsed([
      note('s1', ['s3']),
      note('s2', ['s4']),
      note('s3', ['s1']),
      note('s4', ['s2']),
      note('s5', ['s1']),
    ]);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.diagnostics.map((d) => [d.code, d.stepId, d.message])).toEqual([
      ['dependency_cycle', 's1', 'the steps depend on each other in a circle: s1 → s3 → s1'],
      ['dependency_cycle', 's2', 'the steps depend on each other in a circle: s2 → s4 → s2'],
    ]);
  });

  it('refuses unknown, self and repeated dependencies at the field', () => {
    const result = parsed([note('s1', ['s1']), note('s2', ['s9']), note('s3', ['s1', 's1'])]);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.diagnostics.map((d) => [d.code, d.path])).toEqual([
      ['invalid_field', ['steps', 2, 'dependsOn', 1]],
    ]);
    const second = parsed([note('s1', ['s1']), note('s2', ['s9'])]);
    expect(!second.ok && second.diagnostics.map((d) => [d.code, d.path])).toEqual([
      ['self_dependency', ['steps', 0, 'dependsOn', 0]],
      ['unknown_dependency', ['steps', 1, 'dependsOn', 0]],
    ]);
  });

  it('refuses a dependsOn that is not a list of ids, saying what it must be', () => {
    const result = parsed([{ ...note('s1'), dependsOn: 's2' }]);
    expect(!result.ok && result.diagnostics[0]?.message).toMatch(
      /dependsOn in step 1 must be a list of step ids/,
    );
  });
});

describe('digests', () => {
  const plan = {
    runId: 'r1',
    agent: 'a',
    expiresAt: '2026-04-06T12:00:00Z',
    steps: [note('s1'), note('s2', ['s1'])],
  };

  it('change when a dependency is added, removed or changed, and not when it is reordered', () => {
    const base = stepDigest(note('s2', ['s1']));
    expect(stepDigest(note('s2'))).not.toBe(base);
    expect(stepDigest(note('s2', ['s3']))).not.toBe(base);
    expect(stepDigest(note('s2', ['s1', 's3']))).toBe(stepDigest(note('s2', ['s3', 's1'])));
    expect(stepDigest(note('s2', []))).toBe(stepDigest(note('s2')));
    expect(planDigest(plan)).not.toBe(planDigest({ ...plan, steps: [note('s1'), note('s2')] }));
  });

  it('agree between the one-pass form and the separate ones', () => {
    expect(digestPlan(plan)).toEqual({
      plan: planDigest(plan),
      steps: plan.steps.map((step) => stepDigest(step)),
    });
  });

  it('answer who depends on a step and find no cycle in a chain', () => {
    expect(dependentsOf([note('s1'), note('s2', ['s1']), note('s3', ['s1', 's2'])], 's1')).toEqual([
      's2',
      's3',
    ]);
    expect(dependencyCycles([note('s1'), note('s2', ['s1']), note('s3', ['s2'])])).toEqual([]);
  });
});

describe('verifyDecisionStep: no action bypasses an unmet dependency', () => {
  const key = generateKeyPairSync('ed25519');
  const signer = createReceiptSigner(key.privateKey);
  const keys = receiptKeysOf([key.publicKey]);
  const now = Date.parse('2026-04-06T11:00:00Z');
  const decided = (id: string, dependsOn?: string[]): DecisionStep => ({
    ...note(id, dependsOn),
    digest: stepDigest(note(id, dependsOn)),
    route: 'review',
    approvals: [],
    provenance: { by: 'agent', userId: null, version: 1, change: null },
  });
  const steps = [decided('s1'), decided('s2', ['s1']), decided('s3', ['s1', 's2'])];
  const plan: DecisionPlan = {
    runId: 'r1',
    agent: 'a',
    expiresAt: '2026-04-06T12:00:00Z',
    digest: planDigest({ runId: 'r1', agent: 'a', expiresAt: '2026-04-06T12:00:00Z', steps }),
    steps,
  };
  const decision = signDecision(
    {
      runId: 'r1',
      agent: 'a',
      status: 'approved',
      version: 1,
      plan,
      decidedAt: '2026-04-06T10:30:00Z',
      decidedBy: 'U1',
      reason: null,
      phase: null,
      diagnostics: [],
      configDigest: 'c',
    },
    signer,
  );
  const release = signRelease(
    {
      kind: 'release',
      runId: 'r1',
      agent: 'a',
      version: 1,
      plan,
      stepId: 's2',
      releasedAt: '2026-04-06T10:10:00Z',
      configDigest: 'c',
    },
    signer,
  );

  it('refuses a step whose dependency is not applied, naming it, even in an approved decision', () => {
    expect(verifyDecisionStep(decision, note('s3'), keys, now, new Set(['s1']))).toEqual({
      ok: false,
      reason: 'dependency_not_applied',
      message: 'step s3 depends on s2, not reported applied yet',
    });
    expect(verifyDecisionStep(decision, note('s2'), keys, now)).toMatchObject({
      reason: 'dependency_not_applied',
    });
    expect(verifyDecisionStep(decision, note('s3'), keys, now, new Set(['s1', 's2']))).toMatchObject({
      ok: true,
    });
    expect(verifyDecisionStep(decision, note('s1'), keys, now)).toMatchObject({ ok: true });
  });

  it('lets a release run only its own step, its dependencies applied', () => {
    expect(verifyDecisionStep(release, note('s1'), keys, now, new Set())).toMatchObject({
      ok: false,
      reason: 'not_released',
    });
    expect(verifyDecisionStep(release, note('s2'), keys, now, new Set())).toMatchObject({
      ok: false,
      reason: 'dependency_not_applied',
    });
    expect(verifyDecisionStep(release, note('s2'), keys, now, new Set(['s1']))).toMatchObject({ ok: true });
  });

  it('refuses a release that was altered after signing, or whose step was changed', () => {
    const forged = { ...release, stepId: 's3' };
    expect(verifyDecisionStep(forged, note('s3'), keys, now, new Set(['s1', 's2']))).toMatchObject({
      reason: 'bad_receipt',
    });
    const other = { ...note('s2', ['s1']), args: { ticket_id: 'T-2', note: 's2' } };
    expect(verifyDecisionStep(release, other, keys, now, new Set(['s1']))).toMatchObject({
      reason: 'digest_mismatch',
    });
    expect(verifyDecisionStep(release, note('s2', []), keys, now, new Set(['s1']))).toMatchObject({
      reason: 'digest_mismatch',
    });
  });
});
