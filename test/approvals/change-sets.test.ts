/**
 * Change sets through the approvals service on real Redis (issue 19): what the preview read is stored
 * with the version and bound into the decision as preconditions; an approval runs the checks again but
 * keeps the change set the approvers saw; an edit previews again only the steps it touched; a hook that
 * fails never lets a step through. Hook timeouts run on an injected timer, never the wall clock.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApprovalService } from '../../src/approvals/service.ts';
import type { UseCaseResult } from '../../src/approvals/types.ts';
import { defineConfig } from '../../src/config/index.ts';
import {
  type ChangeSet,
  type CheckProblem,
  defineTool,
  type HookTimer,
  rule,
  text,
} from '../../src/pipeline/index.ts';
import { testRedis } from '../helpers/redis.ts';
import { testSigning } from '../support/stack.ts';

const { redis, prefix, cleanup } = testRedis('change-sets');
afterAll(cleanup);

const AGENT = 'freight';

/** The outside system: each delivery's date and version; previews and checks read it. */
const deliveries = new Map<string, { date: string; version: number }>();
const calls: string[] = [];
/** When set, `checks` / `preview` reject with it (the outside system is down). */
let checksFailure: Error | undefined;
let previewFailure: Error | undefined;

const move = defineTool({
  name: 'move_delivery',
  title: 'Move delivery',
  effect: 'write',
  args: z.strictObject({ delivery_id: text(), date: text() }),
  checks: async (args): Promise<readonly CheckProblem[]> => {
    calls.push(`checks ${args.delivery_id}`);
    if (checksFailure !== undefined) throw checksFailure;
    return deliveries.has(args.delivery_id) ? [] : [`there is no delivery ${args.delivery_id}`];
  },
  preview: async (args): Promise<ChangeSet> => {
    calls.push(`preview ${args.delivery_id}`);
    if (previewFailure !== undefined) throw previewFailure;
    const current = deliveries.get(args.delivery_id);
    if (current === undefined) throw new Error(`no delivery ${args.delivery_id}`);
    return {
      target: { type: 'delivery', id: args.delivery_id, version: String(current.version) },
      changes: [{ path: 'delivery.date', label: 'delivery date', before: current.date, after: args.date }],
      related: [],
      invariants: [],
    };
  },
});
const note = defineTool({
  name: 'add_note',
  title: 'Add note',
  effect: 'write',
  args: z.strictObject({ text: text() }),
});

const config = defineConfig({
  tools: [move, note],
  agents: {
    [AGENT]: {
      tools: ['move_delivery', 'add_note'],
      channel: 'C0OPS',
      secret: 'freight-secret-0123456789ab',
    },
  },
  groups: { operators: ['U0OP1', 'U0OP2'], leads: ['U0LEAD1'] },
  policy: [
    {
      name: 'date-moves',
      tool: '*',
      changes: { paths: ['delivery.date'] },
      route: 'review',
      approvers: 'operators',
    },
    rule(move, { name: 'other-moves', route: 'auto' }),
    rule(note, { name: 'notes', route: 'auto' }),
  ],
  authoring: { operators: '*' },
  defaults: { unverifiedApprovers: 'leads' },
});

const now = Date.parse('2026-04-01T10:00:00Z');
let runCounter = 0;

beforeEach(() => {
  deliveries.clear();
  deliveries.set('dl_1', { date: '2026-04-03', version: 7 });
  deliveries.set('dl_2', { date: '2026-04-04', version: 2 });
  calls.length = 0;
  checksFailure = undefined;
  previewFailure = undefined;
});

function service(hookTimer?: HookTimer) {
  return new ApprovalService({
    redis,
    config,
    prefix,
    signer: testSigning.signer,
    clock: () => now,
    ...(hookTimer === undefined ? {} : { hookTimer }),
  });
}

type StepInput = { id: string; tool: string; args: Record<string, string> };

const MOVES: StepInput[] = [
  { id: 's1', tool: 'move_delivery', args: { delivery_id: 'dl_1', date: '2026-04-06' } },
  { id: 's2', tool: 'move_delivery', args: { delivery_id: 'dl_2', date: '2026-04-07' } },
  { id: 's3', tool: 'add_note', args: { text: 'moved both' } },
];

async function submit(svc: ApprovalService, steps: StepInput[] = MOVES) {
  const runId = `cs-${++runCounter}`;
  const raw = JSON.stringify({
    runId,
    agent: AGENT,
    expiresAt: new Date(now + 3_600_000).toISOString(),
    steps,
  });
  return { runId, result: await svc.submitPlan({ runId, agent: AGENT, raw }) };
}

function expectKind<K extends UseCaseResult['kind']>(
  result: UseCaseResult,
  kind: K,
): Extract<UseCaseResult, { kind: K }> {
  expect(result.kind, JSON.stringify(result).slice(0, 600)).toBe(kind);
  return result as Extract<UseCaseResult, { kind: K }>;
}

describe('change sets in the approvals service', () => {
  it('stores each preview with the version, routes by it, and binds the targets into the decision', async () => {
    const svc = service();
    const { runId, result } = await submit(svc);
    const pending = expectKind(result, 'pending');
    const [s1, s2, s3] = pending.run.current.plan.steps;
    expect(s1?.changeSet?.target).toEqual({ type: 'delivery', id: 'dl_1', version: '7' });
    expect(s1?.route).toMatchObject({ kind: 'review', rule: 'date-moves', group: 'operators' });
    expect(s3?.changeSet).toBeUndefined();
    // Stored with the version in Redis, not only in the answer.
    expect((await svc.getVersion(runId, 1))?.plan.steps[1]?.changeSet).toEqual(s2?.changeSet);

    const approved = expectKind(await svc.approve({ runId, version: 1, userId: 'U0OP1' }), 'approved');
    expect(approved.decision.plan?.steps.map((step) => step.preconditions ?? null)).toEqual([
      [{ type: 'delivery', id: 'dl_1', version: '7' }],
      [{ type: 'delivery', id: 'dl_2', version: '2' }],
      null,
    ]);
    expect(approved.decision.plan?.steps[2]).not.toHaveProperty('preconditions');
  });

  it('an approval runs the checks again but keeps the change set the approvers saw', async () => {
    const svc = service();
    const { runId } = await submit(svc);
    calls.length = 0;
    // The world moves after the card was posted: previews are not re-run, the executor catches it.
    deliveries.set('dl_1', { date: '2026-04-05', version: 8 });
    const approved = expectKind(await svc.approve({ runId, version: 1, userId: 'U0OP1' }), 'approved');
    expect(calls.sort()).toEqual(['checks dl_1', 'checks dl_2']);
    expect(approved.decision.plan?.steps[0]?.preconditions).toEqual([
      { type: 'delivery', id: 'dl_1', version: '7' },
    ]);
    expect(approved.run.current.plan.steps[0]?.changeSet?.changes[0]?.before).toBe('2026-04-03');
  });

  it('a check that fails at approval holds the run, saying why; the next approval runs it again', async () => {
    const svc = service();
    const { runId } = await submit(svc);
    checksFailure = new Error('the freight API answered 503');
    const held = expectKind(await svc.approve({ runId, version: 1, userId: 'U0OP1' }), 'invalid');
    expect(held.diagnostics.map((d) => d.message)).toEqual([
      'step s1: could not verify: checks failed: the freight API answered 503',
      'step s2: could not verify: checks failed: the freight API answered 503',
    ]);
    expect((await svc.getRun(runId))?.status).toBe('pending');
    checksFailure = undefined;
    expectKind(await svc.approve({ runId, version: 1, userId: 'U0OP2' }), 'approved');
  });

  it('an edit previews again only the steps it touched (the others keep their stored change set) and checks every step', async () => {
    const svc = service();
    const { runId } = await submit(svc);
    calls.length = 0;
    deliveries.set('dl_1', { date: '2026-04-05', version: 8 });
    deliveries.set('dl_2', { date: '2026-04-05', version: 3 });
    const edited = expectKind(
      await svc.applyEdit({
        runId,
        baseVersion: 1,
        editorId: 'U0OP1',
        steps: MOVES.map((step) =>
          step.id === 's2' ? { ...step, args: { ...step.args, date: '2026-04-09' } } : step,
        ),
      }),
      'edited',
    );
    // The whole pipeline checks every step; only the touched one is previewed.
    expect(calls.sort()).toEqual(['checks dl_1', 'checks dl_2', 'preview dl_2']);
    const [s1, s2] = edited.run.current.plan.steps;
    expect(s1?.changeSet?.target.version).toBe('7');
    expect(s2?.changeSet?.target.version).toBe('3');
    expect(s2?.changeSet?.changes[0]).toMatchObject({ before: '2026-04-05', after: '2026-04-09' });
  });

  it('a diff action (revert) is an edit too: only the reverted step is previewed again, every step checked', async () => {
    const svc = service();
    const { runId } = await submit(svc);
    const changed = MOVES.map((step) =>
      step.id === 's2' ? { ...step, args: { ...step.args, date: '2026-04-09' } } : step,
    );
    expectKind(await svc.applyEdit({ runId, baseVersion: 1, editorId: 'U0OP1', steps: changed }), 'edited');
    calls.length = 0;
    deliveries.set('dl_1', { date: '2026-04-05', version: 8 });
    deliveries.set('dl_2', { date: '2026-04-05', version: 4 });
    const reverted = expectKind(
      await svc.applyDiffAction({ runId, version: 2, userId: 'U0OP1', action: 'revert_step', stepId: 's2' }),
      'edited',
    );
    // The whole pipeline checks every step; only the touched one is previewed.
    expect(calls.sort()).toEqual(['checks dl_1', 'checks dl_2', 'preview dl_2']);
    const [s1, s2] = reverted.run.current.plan.steps;
    expect(s1?.changeSet?.target.version).toBe('7');
    expect(s2?.changeSet?.target.version).toBe('4');
  });

  it('a preview that fails never lets its step through: the run waits for a person instead of passing', async () => {
    const svc = service();
    previewFailure = new Error('the freight API answered 503');
    const { result } = await submit(svc, [MOVES[0] as StepInput]);
    // No change set, so `date-moves` cannot match; `other-moves` says auto, but the step is unverified.
    const step = expectKind(result, 'pending').run.current.plan.steps[0];
    expect(step?.changeSet).toBeUndefined();
    expect(step?.unverified).toEqual([
      { hook: 'preview', reason: 'preview failed: the freight API answered 503' },
    ]);
    expect(step?.route).toEqual({
      kind: 'review',
      rule: 'other-moves (could not verify)',
      group: 'leads',
      approvals: 1,
      distinctFromAuthor: false,
    });
  });

  it('a hook that runs out of its budget (injected timer) leaves the step unverified and reviewed by unverifiedApprovers', async () => {
    const fireAtOnce: HookTimer = () => Promise.resolve();
    const slow = defineTool({
      name: 'add_note',
      title: 'Add note',
      effect: 'write',
      args: z.strictObject({ text: text() }),
      preview: () => new Promise<ChangeSet>(() => {}),
    });
    const slowConfig = defineConfig({
      tools: [slow],
      agents: { [AGENT]: { tools: ['add_note'], channel: 'C0OPS', secret: 'freight-secret-0123456789ab' } },
      groups: { operators: ['U0OP1'], leads: ['U0LEAD1'] },
      policy: [rule(slow, { name: 'notes', route: 'auto' })],
      authoring: { operators: '*' },
      defaults: { unverifiedApprovers: 'leads' },
    });
    const svc = new ApprovalService({
      redis,
      config: slowConfig,
      prefix,
      signer: testSigning.signer,
      clock: () => now,
      hookTimer: fireAtOnce,
    });
    const { result } = await submit(svc, [{ id: 's1', tool: 'add_note', args: { text: 'hi' } }]);
    const step = expectKind(result, 'pending').run.current.plan.steps[0];
    expect(step?.unverified).toEqual([{ hook: 'preview', reason: 'preview timed out after 2 s' }]);
    expect(step?.route).toMatchObject({ kind: 'review', group: 'leads', rule: 'notes (could not verify)' });
  });
});
