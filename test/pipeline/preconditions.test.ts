/**
 * Preconditions at apply (issue 19): the gate returns the target versions the approvers saw, and
 * `checkPreconditions` refuses a step whose target moved since, in words an operator reads.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  checkPreconditions,
  createReceiptSigner,
  type Decision,
  type DecisionPlan,
  type DecisionStep,
  keysFromJwks,
  type Precondition,
  planDigest,
  receiptKeysOf,
  signDecision,
  stepDigest,
  verifyDecisionStep,
} from '../../src/pipeline/index.ts';

const delivery: Precondition = { type: 'delivery', id: 'dl_55120', version: '7' };
const invoice: Precondition = { type: 'invoice', id: 'in_74119', version: '2026-04-01T09:00:00Z' };

/** Versions read "now", keyed as `type:id`; an entity not listed cannot be read. */
const versionsNow = (versions: Record<string, string>) => (entity: { type: string; id: string }) =>
  versions[`${entity.type}:${entity.id}`];

describe('checkPreconditions', () => {
  it('holds when every target is still at the version the approvers saw', () => {
    expect(
      checkPreconditions(
        [delivery, invoice],
        versionsNow({ 'delivery:dl_55120': '7', 'invoice:in_74119': '2026-04-01T09:00:00Z' }),
      ),
    ).toEqual({ ok: true });
  });

  it('holds for a step without preconditions, without reading anything', () => {
    const read: string[] = [];
    expect(
      checkPreconditions([], (entity) => {
        read.push(entity.id);
        return undefined;
      }),
    ).toEqual({ ok: true });
    expect(read).toEqual([]);
  });

  it('refuses a target that moved since approval, naming it with both versions', () => {
    expect(checkPreconditions([delivery], versionsNow({ 'delivery:dl_55120': '9' }))).toEqual({
      ok: false,
      reason: 'world_changed',
      entity: { type: 'delivery', id: 'dl_55120' },
      approvedVersion: '7',
      currentVersion: '9',
      message:
        'delivery dl_55120 changed since it was approved (version 7 → 9): preview again and ask for approval again; do not apply',
    });
  });

  it('names the first precondition that does not hold, after the ones that do', () => {
    const check = checkPreconditions(
      [delivery, invoice],
      versionsNow({ 'delivery:dl_55120': '7', 'invoice:in_74119': '2026-04-02T08:00:00Z' }),
    );
    expect(check).toMatchObject({ ok: false, entity: { type: 'invoice', id: 'in_74119' } });
  });

  it('fails closed when the target cannot be read now (gone, or not read)', () => {
    for (const now of [undefined, null]) {
      expect(checkPreconditions([delivery], () => now)).toEqual({
        ok: false,
        reason: 'world_changed',
        entity: { type: 'delivery', id: 'dl_55120' },
        approvedVersion: '7',
        currentVersion: null,
        message:
          'delivery dl_55120 could not be read now (it was at version 7 when approved): preview again and ask for approval again; do not apply',
      });
    }
  });

  it('compares versions as opaque strings: "07" is not "7"', () => {
    expect(checkPreconditions([delivery], () => '07')).toMatchObject({ ok: false, currentVersion: '07' });
  });
});

describe('verifyDecisionStep returns the preconditions it approved', () => {
  const key = generateKeyPairSync('ed25519');
  const signer = createReceiptSigner(key.privateKey);
  const keys = receiptKeysOf([key.publicKey]);
  const now = Date.parse('2026-04-02T14:00:00Z');
  const reschedule = {
    id: 's2',
    tool: 'reschedule_delivery',
    args: { delivery_id: 'dl_55120', window: '2026-04-06' },
  };
  const note = { id: 's1', tool: 'add_note', args: { ticket_id: '74991', note: 'rebooked' } };
  const decided = (step: typeof note | typeof reschedule, preconditions?: Precondition[]): DecisionStep => ({
    ...step,
    digest: stepDigest(step),
    route: 'review',
    approvals: [{ userId: 'U0OP1', at: '2026-04-02T13:00:00Z' }],
    provenance: { by: 'agent', userId: null, version: 1, change: null },
    ...(preconditions === undefined ? {} : { preconditions }),
  });
  const steps = [decided(note), decided(reschedule, [delivery])];
  const plan: DecisionPlan = {
    runId: 'r1',
    agent: 'freight-ops',
    expiresAt: '2026-04-02T16:00:00Z',
    digest: planDigest({ runId: 'r1', agent: 'freight-ops', expiresAt: '2026-04-02T16:00:00Z', steps }),
    steps,
  };
  const unsigned = {
    runId: 'r1',
    agent: 'freight-ops',
    status: 'approved' as const,
    version: 1,
    plan,
    decidedAt: '2026-04-02T13:00:00Z',
    decidedBy: 'U0OP1',
    reason: null,
    phase: null,
    diagnostics: [],
    configDigest: 'c',
  };
  const decision = signDecision(unsigned, signer);

  it('gives the step’s preconditions, and an empty list for a step without any', () => {
    expect(verifyDecisionStep(decision, reschedule, keys, now)).toMatchObject({
      ok: true,
      preconditions: [delivery],
    });
    expect(verifyDecisionStep(decision, note, keys, now)).toMatchObject({ ok: true, preconditions: [] });
  });

  it('refuses a decision whose preconditions were changed after signing: they are under the receipt', () => {
    const moved = signDecision(
      {
        ...unsigned,
        plan: { ...plan, steps: [steps[0]!, decided(reschedule, [{ ...delivery, version: '9' }])] },
      },
      signer,
    );
    const forged = { ...moved, receipt: decision.receipt };
    expect(verifyDecisionStep(moved, reschedule, keys, now)).toMatchObject({ ok: true });
    expect(verifyDecisionStep(forged, reschedule, keys, now)).toMatchObject({
      ok: false,
      reason: 'bad_receipt',
    });
  });
});

describe('the published vector with preconditions (test/vectors/receipts.json)', () => {
  const vectors = JSON.parse(readFileSync(new URL('../vectors/receipts.json', import.meta.url), 'utf8')) as {
    valid: { name: string; jwks: unknown; decision: Decision; receipt: Decision['receipt'] }[];
  };
  const vector = vectors.valid.find((candidate) =>
    JSON.stringify(candidate.decision).includes('"preconditions"'),
  );
  const read = keysFromJwks(vector?.jwks);

  it('passes the gate at its time and gives each step’s preconditions to check', () => {
    if (vector === undefined || !read.ok)
      throw new Error('no vector with preconditions, or its JWKS does not read');
    const decision = { ...vector.decision, receipt: vector.receipt };
    const now = Date.parse('2026-04-02T15:00:00.000Z');
    const found = decision.plan?.steps.map((step) => {
      const check = verifyDecisionStep(decision, step, read.keys, now);
      return check.ok ? [step.id, check.preconditions] : [step.id, check.reason];
    });
    expect(found).toEqual([
      ['s1', []],
      ['s2', [{ type: 'delivery', id: 'dl_55120', version: '7' }]],
      ['s3', [{ type: 'invoice', id: 'in_74120', version: '2026-04-01T09:14:07.412Z' }]],
    ]);
  });
});
