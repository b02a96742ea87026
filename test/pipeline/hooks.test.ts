/**
 * Async tool hooks (issue 19): `checks`, `annotate` and `preview` run in parallel for every step, each
 * within its time budget on an injected timer (no test here waits on the wall clock). A hook that
 * throws, rejects, answers something malformed or runs out of time leaves its step unverified and
 * routed to review — even under a rule that says auto — and never fails or passes the plan by itself.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineConfig } from '../../src/config/index.ts';
import {
  type ChangeSet,
  defineTool,
  type HookTimer,
  type PipelineConfig,
  rule,
  storedHookResults,
  type ToolDefinition,
  text,
  type ValidatedPlan,
  type ValidationContext,
  validate,
} from '../../src/pipeline/index.ts';

const NOW = Date.parse('2026-04-01T10:00:00Z');

const delivery = (id: string, version = 'v7'): ChangeSet => ({
  target: { type: 'delivery', id, label: `Delivery ${id}`, version },
  changes: [
    {
      path: 'delivery.date',
      label: "delivery date used for the driver's route",
      before: '2026-04-03',
      after: '2026-04-06',
      beforeText: 'Fri 3 Apr',
      afterText: 'Mon 6 Apr',
    },
  ],
  related: [{ entity: { type: 'route', id: 'rt_9' }, impact: 'write', source: 'declared' }],
  invariants: [{ name: 'within_window', label: 'inside the booked window', status: 'preserved' }],
});

/** A deferred: a promise the test settles itself. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

/** A timer the test fires by hand; it records each budget it was asked for. */
function manualTimer() {
  const pending: { ms: number; fire: () => void; signal: AbortSignal }[] = [];
  const timer: HookTimer = (ms, signal) =>
    new Promise((resolve) => {
      pending.push({ ms, fire: () => resolve(), signal });
    });
  return {
    timer,
    budgets: () => pending.map((entry) => entry.ms),
    /** Fires every timer whose hook has not answered yet. */
    fireAll: () => {
      for (const entry of pending) if (!entry.signal.aborted) entry.fire();
    },
  };
}

/** Lets every promise callback queued so far run (no wall-clock wait). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

const moveArgs = z.strictObject({ delivery_id: text() });
type Hooks = Partial<Pick<ToolDefinition<typeof moveArgs>, 'checks' | 'annotate' | 'preview'>>;

function configWith(hooks: Hooks, route: 'auto' | 'review' = 'auto', extra: { hookTimeout?: string } = {}) {
  const move = defineTool({
    name: 'move_delivery',
    title: 'Move delivery',
    effect: 'write',
    args: moveArgs,
    ...hooks,
  });
  return defineConfig({
    tools: [move],
    agents: { ops: { tools: ['move_delivery'], channel: 'C0OPS', secret: 'ops-secret-0123456789abcdef' } },
    groups: { operators: ['U0OP1'], leads: ['U0LEAD1'] },
    policy: [
      route === 'auto'
        ? rule(move, { name: 'moves', route: 'auto' })
        : rule(move, { name: 'moves', route: 'review', approvers: 'leads' }),
    ],
    authoring: { operators: '*' },
    defaults: { ...extra },
  });
}

function plan(ids: readonly string[] = ['dl_1', 'dl_2', 'dl_3']) {
  return {
    runId: 'run-hooks',
    agent: 'ops',
    expiresAt: new Date(NOW + 3_600_000).toISOString(),
    steps: ids.map((id) => ({ tool: 'move_delivery', args: { delivery_id: id } })),
  };
}

async function accepted(raw: unknown, ctx: ValidationContext): Promise<ValidatedPlan> {
  const result = await validate(raw, ctx);
  if (!result.ok) throw new Error(`expected the plan to pass: ${JSON.stringify(result.diagnostics)}`);
  return result.plan;
}

describe('async hooks', () => {
  it('runs every step’s preview at once, not one after another', async () => {
    const release = deferred<void>();
    const started: string[] = [];
    const config = configWith({
      preview: async (args) => {
        started.push(args.delivery_id);
        await release.promise;
        return delivery(args.delivery_id);
      },
    });
    const pending = validate(plan(), { config: config.pipeline, now: NOW, timer: manualTimer().timer });
    await settle();
    // Each preview waits on the same latch: serial hooks would have started only the first.
    expect(started).toEqual(['dl_1', 'dl_2', 'dl_3']);
    release.resolve();
    const result = await pending;
    expect(result.ok && result.plan.steps.map((step) => step.changeSet?.target.id)).toEqual([
      'dl_1',
      'dl_2',
      'dl_3',
    ]);
  });

  it('stores the preview’s change set on the step, frozen, with no unverified mark', async () => {
    const config = configWith({ preview: async (args) => delivery(args.delivery_id) });
    const validated = await accepted(plan(['dl_1']), { config: config.pipeline, now: NOW });
    const step = validated.steps[0];
    expect(step?.changeSet).toEqual(delivery('dl_1'));
    expect(step?.unverified).toBeUndefined();
    expect(step?.route).toEqual({ kind: 'auto', rule: 'moves' });
    expect(Object.isFrozen(step?.changeSet?.changes[0])).toBe(true);
  });

  it('a preview that runs out of its budget leaves the step unverified, routed to review, its signal aborted', async () => {
    const clock = manualTimer();
    let signal: AbortSignal | undefined;
    const config = configWith({
      preview: (_args, ctx) => {
        signal = ctx.signal;
        return new Promise<ChangeSet>(() => {});
      },
    });
    const pending = validate(plan(['dl_1']), { config: config.pipeline, now: NOW, timer: clock.timer });
    await settle();
    expect(clock.budgets()).toEqual([2_000]);
    expect(signal?.aborted).toBe(false);
    clock.fireAll();
    const result = await pending;
    expect(signal?.aborted).toBe(true);
    if (!result.ok) throw new Error('a timed-out hook must not fail the plan');
    const step = result.plan.steps[0];
    expect(step?.unverified).toEqual([{ hook: 'preview', reason: 'preview timed out after 2 s' }]);
    expect(step?.changeSet).toBeUndefined();
    // The rule says auto; an unverified step is reviewed by the first group that may write the tool.
    expect(step?.route).toEqual({
      kind: 'review',
      rule: 'moves (could not verify)',
      group: 'operators',
      approvals: 1,
      distinctFromAuthor: false,
    });
  });

  it('gives each hook the budget of defaults.hookTimeout and says it in the reason', async () => {
    const clock = manualTimer();
    const config = configWith(
      { checks: () => new Promise(() => {}), preview: () => new Promise(() => {}) },
      'auto',
      { hookTimeout: '250ms' },
    );
    const pending = validate(plan(['dl_1']), { config: config.pipeline, now: NOW, timer: clock.timer });
    await settle();
    expect(clock.budgets()).toEqual([250, 250]);
    clock.fireAll();
    const result = await pending;
    expect(result.ok && result.plan.steps[0]?.unverified).toEqual([
      { hook: 'checks', reason: 'checks timed out after 250 ms' },
      { hook: 'preview', reason: 'preview timed out after 250 ms' },
    ]);
  });

  it('a check that throws leaves the step unverified with its message; a review rule keeps its group', async () => {
    const config = configWith(
      {
        checks: () => {
          throw new Error('the freight API answered 503');
        },
      },
      'review',
    );
    const validated = await accepted(plan(['dl_1']), { config: config.pipeline, now: NOW });
    expect(validated.steps[0]?.unverified).toEqual([
      { hook: 'checks', reason: 'checks failed: the freight API answered 503' },
    ]);
    expect(validated.steps[0]?.route).toMatchObject({ kind: 'review', rule: 'moves', group: 'leads' });
  });

  it('a check that rejects, or answers something that is not a list, is unverified too', async () => {
    const rejecting = configWith({ checks: async () => Promise.reject(new Error('timeout reading dl_1')) });
    const odd = configWith({ checks: async () => 'fine' as unknown as string[] });
    const first = await accepted(plan(['dl_1']), { config: rejecting.pipeline, now: NOW });
    const second = await accepted(plan(['dl_1']), { config: odd.pipeline, now: NOW });
    expect(first.steps[0]?.unverified).toEqual([
      { hook: 'checks', reason: 'checks failed: timeout reading dl_1' },
    ]);
    expect(second.steps[0]?.unverified).toEqual([
      { hook: 'checks', reason: 'checks answered a string, not a list of problems' },
    ]);
    expect(second.steps[0]?.route.kind).toBe('review');
  });

  it('problems an async check finds still reject the plan at authorize', async () => {
    const config = configWith({ checks: async (args) => [`there is no delivery ${args.delivery_id}`] });
    const result = await validate(plan(['dl_404']), { config: config.pipeline, now: NOW });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.diagnostics).toEqual([
      expect.objectContaining({ code: 'check_failed', message: 'step s1: there is no delivery dl_404' }),
    ]);
  });

  it('an annotate hook that fails is unverified and its notes are dropped', async () => {
    const config = configWith({ annotate: async () => Promise.reject(new Error('no ticket data')) });
    const validated = await accepted(plan(['dl_1']), { config: config.pipeline, now: NOW });
    expect(validated.steps[0]?.annotations).toEqual([]);
    expect(validated.steps[0]?.unverified).toEqual([
      { hook: 'annotate', reason: 'annotate failed: no ticket data' },
    ]);
  });

  it('a malformed change set is refused in plain words, and the step goes to review under an auto rule', async () => {
    const config = configWith({
      preview: async (args) => {
        const { target, ...rest } = delivery(args.delivery_id);
        return { ...rest, target: { type: target.type, id: target.id }, extra: 1 } as unknown as ChangeSet;
      },
    });
    const validated = await accepted(plan(['dl_1']), { config: config.pipeline, now: NOW });
    const step = validated.steps[0];
    expect(step?.changeSet).toBeUndefined();
    expect(step?.unverified).toHaveLength(1);
    expect(step?.unverified?.[0]?.hook).toBe('preview');
    expect(step?.unverified?.[0]?.reason).toMatch(
      /^preview answered a change set that is not well formed: target\.version: .*; .*extra/,
    );
    expect(step?.route).toMatchObject({ kind: 'review', group: 'operators' });
  });

  it('refuses numbers canonical JSON cannot hold (the change set is journaled): floats, -0', async () => {
    const config = configWith({
      preview: async (args) => {
        const changeSet = delivery(args.delivery_id);
        return { ...changeSet, changes: [{ path: 'load.weight', label: 'weight', before: 12.5, after: 13 }] };
      },
    });
    const validated = await accepted(plan(['dl_1']), { config: config.pipeline, now: NOW });
    expect(validated.steps[0]?.unverified).toEqual([
      {
        hook: 'preview',
        reason:
          'preview answered a change set that is not well formed: number 12.5 at changes[0].before is not a whole number; only integers are allowed (amounts are in minor units such as cents)',
      },
    ]);
  });

  it('with nobody to review an unverified step, it is blocked, saying why', async () => {
    const config = configWith({ preview: async () => Promise.reject(new Error('down')) });
    const pipeline: PipelineConfig = { ...config.pipeline, authoring: {} };
    const validated = await accepted(plan(['dl_1']), { config: pipeline, now: NOW });
    expect(validated.steps[0]?.route).toEqual({
      kind: 'block',
      rule: 'moves (could not verify)',
      reason:
        'could not verify this step (preview failed: down) and no group may review it (defaults.unverifiedApprovers)',
    });
  });

  it('reused results skip the hooks of steps whose bytes are unchanged, except those rerun', async () => {
    const calls: string[] = [];
    let version = 0;
    const config = configWith({
      checks: async (args) => {
        calls.push(`checks ${args.delivery_id}`);
        return [];
      },
      preview: async (args) => {
        calls.push(`preview ${args.delivery_id}`);
        version += 1;
        return delivery(args.delivery_id, `v${version}`);
      },
    });
    const ctx = { config: config.pipeline, now: NOW };
    const base = await accepted(plan(['dl_1', 'dl_2']), ctx);
    calls.length = 0;
    const edited = {
      ...plan(),
      steps: [
        { id: 's1', tool: 'move_delivery', args: { delivery_id: 'dl_1' } },
        { id: 's2', tool: 'move_delivery', args: { delivery_id: 'dl_9' } },
      ],
    };
    const next = await accepted(edited, ctx);
    expect(calls.sort()).toEqual(['checks dl_1', 'checks dl_9', 'preview dl_1', 'preview dl_9']);
    calls.length = 0;
    const reusing = await validate(edited, ctx, { reuse: storedHookResults(base) });
    expect(calls).toEqual(['checks dl_9', 'preview dl_9']);
    expect(reusing.ok && reusing.plan.steps[0]?.changeSet).toEqual(base.steps[0]?.changeSet);
    calls.length = 0;
    await validate(edited, ctx, { reuse: storedHookResults(next), rerun: ['checks'] });
    expect(calls.sort()).toEqual(['checks dl_1', 'checks dl_9']);
  });
});
