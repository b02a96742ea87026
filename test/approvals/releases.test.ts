/**
 * Early releases on real Redis: a `continue` step is released to the agent once its own approvals are
 * complete and every step it depends on is reported applied — and never otherwise, never after the run
 * is decided. What the agent receives (signed releases, the decision's `released` list) is checked
 * with the agent's own gate, `verifyDecisionStep`.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkRunState } from '../../src/approvals/audit-check.ts';
import { verifyJournal } from '../../src/approvals/journal.ts';
import { readRunEvidence } from '../../src/approvals/run-evidence.ts';
import { ApprovalService } from '../../src/approvals/service.ts';
import type { JournalRecord, UseCaseResult } from '../../src/approvals/types.ts';
import { type ConfigInput, defineConfig, isConfigError } from '../../src/config/index.ts';
import {
  choice,
  type Decision,
  defineTool,
  type Release,
  receiptKeysOf,
  rule,
  verifyDecisionStep,
} from '../../src/pipeline/index.ts';
import { testRedis } from '../helpers/redis.ts';
import { testSigning } from '../support/stack.ts';

const KEYS = receiptKeysOf(testSigning.publicKeys);
const { redis, prefix, cleanup } = testRedis('releases');
afterAll(cleanup);

const AGENT = 'release-agent';
const lookup = defineTool({
  name: 'lookup',
  title: 'Look up order',
  effect: 'read',
  args: z.strictObject({ order: choice(['A', 'B']) }),
});
const tag = defineTool({
  name: 'tag',
  title: 'Tag order',
  effect: 'write',
  args: z.strictObject({ tag: choice(['late', 'lost']) }),
});
const note = defineTool({
  name: 'note',
  title: 'Internal note',
  effect: 'write',
  args: z.strictObject({ text: choice(['hi', 'bye']) }),
});
const pay = defineTool({
  name: 'pay',
  title: 'Pay refund',
  effect: 'irreversible',
  args: z.strictObject({ to: choice(['acme', 'globex']) }),
});
const mail = defineTool({
  name: 'mail',
  title: 'Mail customer',
  effect: 'write',
  args: z.strictObject({ to: choice(['acme', 'globex']) }),
});

const input: ConfigInput = {
  tools: [lookup, tag, note, pay, mail],
  agents: {
    [AGENT]: {
      tools: ['lookup', 'tag', 'note', 'pay', 'mail'],
      channel: 'C0REL',
      secret: 'release-secret-0123456789abcdef',
    },
  },
  groups: { ops: ['U0OPS1', 'U0OPS2'], fin: ['U0FIN1'] },
  internalTools: ['tag', 'note'],
  policy: [
    rule(lookup, { name: 'lookups', route: 'auto', continue: true }),
    rule(note, { name: 'notes', route: 'auto', continue: true }),
    rule(tag, { name: 'tags', route: 'review', approvers: 'ops', continue: true }),
    rule(pay, { name: 'payments', route: 'review', approvers: 'fin' }),
    rule(mail, { name: 'mails', route: 'review', approvers: 'ops' }),
  ],
  authoring: { ops: '*', fin: '*' },
};
const config = defineConfig(input);

let now = Date.parse('2026-04-01T10:00:00Z');
let runCounter = 0;
let delivered: Decision[] = [];

beforeEach(() => {
  now = Date.parse('2026-04-01T10:00:00Z');
  delivered = [];
});

function service() {
  return new ApprovalService({
    redis,
    config,
    prefix,
    signer: testSigning.signer,
    clock: () => now,
    deliver: async (decision) => {
      delivered.push(decision);
    },
  });
}

type StepInput = { id: string; tool: string; args: Record<string, string>; dependsOn?: string[] };

/** s1 lookup ← s2 tag (ops) ← s3 note ← s4 pay (fin, not continue). */
const CHAIN: StepInput[] = [
  { id: 's1', tool: 'lookup', args: { order: 'A' } },
  { id: 's2', tool: 'tag', args: { tag: 'late' }, dependsOn: ['s1'] },
  { id: 's3', tool: 'note', args: { text: 'hi' }, dependsOn: ['s2'] },
  { id: 's4', tool: 'pay', args: { to: 'acme' }, dependsOn: ['s3'] },
];

async function submit(svc: ApprovalService, steps: StepInput[] = CHAIN) {
  const runId = `rel-${++runCounter}`;
  const raw = JSON.stringify({
    runId,
    agent: AGENT,
    expiresAt: new Date(now + 3_600_000).toISOString(),
    steps,
  });
  const result = await svc.submitPlan({ runId, agent: AGENT, raw });
  return { runId, result };
}

async function releasesOf(svc: ApprovalService, runId: string): Promise<Record<string, Release>> {
  const hash = await redis.hgetall(svc.keys.forRun(runId).releases);
  return Object.fromEntries(Object.entries(hash).map(([id, text]) => [id, JSON.parse(text) as Release]));
}

async function journalTypes(svc: ApprovalService, runId: string): Promise<string[]> {
  const journal = await redis.lrange(svc.keys.forRun(runId).journal, 0, -1);
  expect(verifyJournal(journal).ok).toBe(true);
  return journal.map((text) => {
    const event = JSON.parse(text).event;
    return event.type === 'released' || event.type === 'outcome'
      ? `${event.type}:${event.stepId}${event.status === undefined ? '' : `:${event.status}`}`
      : event.type;
  });
}

function expectKind<K extends UseCaseResult['kind']>(
  result: UseCaseResult,
  kind: K,
): Extract<UseCaseResult, { kind: K }> {
  expect(result.kind, JSON.stringify(result).slice(0, 400)).toBe(kind);
  return result as Extract<UseCaseResult, { kind: K }>;
}

function stepOf(release: Release, stepId: string) {
  const step = release.plan.steps.find((candidate) => candidate.id === stepId);
  if (step === undefined) throw new Error(`no ${stepId} in the release`);
  return { id: step.id, tool: step.tool, args: step.args };
}

describe('policy: continue', () => {
  const variant = (policy: ConfigInput['policy'], internalTools?: readonly string[]) => {
    try {
      defineConfig({ ...input, policy, ...(internalTools === undefined ? {} : { internalTools }) });
      return [];
    } catch (error) {
      if (!isConfigError(error)) throw error;
      return error.problems;
    }
  };

  it('refuses a continue rule that could cover an irreversible or a non-internal write tool, naming rule and tool', () => {
    expect(
      variant([rule(pay, { name: 'pay-now', route: 'review', approvers: 'fin', continue: true })]),
    ).toEqual(['policy[0] (pay-now): continue covers pay, which is irreversible: it can never run early']);
    expect(variant([rule(mail, { name: 'mail-now', route: 'auto', continue: true })])).toEqual([
      'policy[0] (mail-now): continue covers mail, a write tool not declared internal (add it to internalTools if its effect stays inside your systems)',
    ]);
    // '*' could match every tool, whatever its `when` says.
    const problems = variant([{ name: 'all', tool: '*', route: 'auto', continue: true }]);
    expect(problems).toEqual([
      'policy[0] (all): continue covers pay, which is irreversible: it can never run early',
      expect.stringContaining('policy[0] (all): continue covers mail, a write tool not declared internal'),
    ]);
    expect(variant([{ name: 'stop', tool: 'lookup', route: 'block', continue: true }])).toEqual([
      "policy[0] (stop): continue does not apply to route 'block'",
    ]);
  });

  it('accepts read tools and internal writes, and refuses declaring a non-write tool internal', () => {
    expect(variant([rule(lookup, { route: 'auto', continue: true })], [])).toEqual([]);
    expect(variant([], ['pay', 'lookup', 'nope'])).toEqual([
      'internalTools: pay is irreversible; only write tools can be declared internal',
      'internalTools: lookup is read; only write tools can be declared internal',
      'internalTools: unknown tool "nope"',
    ]);
  });

  it('marks the routes of continue rules, and the config digest changes with continue', () => {
    const without = defineConfig({ ...input, policy: input.policy.map((r) => ({ ...r, continue: false })) });
    expect(without.digest).not.toBe(config.digest);
  });
});

describe('releases', () => {
  it('releases in dependency order as approvals and applied outcomes come in; the rest waits for the plan', async () => {
    const svc = service();
    const { runId, result } = await submit(svc);
    // s1 (auto, continue, no dependency) is released at submission.
    const pending = expectKind(result, 'pending');
    expect(Object.keys(pending.run.released)).toEqual(['s1']);
    expect(pending.run.waiting).toEqual({
      s2: { approvals: true, dependencies: ['s1'], plan: false },
      s3: { approvals: false, dependencies: ['s2'], plan: false },
      s4: { approvals: true, dependencies: ['s3'], plan: true },
    });

    // s2's approval alone does not release it: s1 is not applied yet.
    expectKind(await svc.approve({ runId, version: 1, userId: 'U0OPS1' }), 'awaiting');
    expect(Object.keys(await releasesOf(svc, runId))).toEqual(['s1']);
    // Claiming s1 is not applying it.
    expect((await svc.recordOutcome({ runId, stepId: 's1', status: 'applying' })).kind).toBe('recorded');
    expect(Object.keys(await releasesOf(svc, runId))).toEqual(['s1']);
    // The applied report releases s2 in its own commit.
    expect((await svc.recordOutcome({ runId, stepId: 's1', status: 'applied' })).kind).toBe('recorded');
    expect(Object.keys(await releasesOf(svc, runId)).sort()).toEqual(['s1', 's2']);
    expect((await svc.recordOutcome({ runId, stepId: 's2', status: 'applied' })).kind).toBe('recorded');
    const releases = await releasesOf(svc, runId);
    expect(Object.keys(releases).sort()).toEqual(['s1', 's2', 's3']);

    const run = await svc.getRun(runId);
    expect(run?.released).toEqual({
      s1: { at: now, version: 1 },
      s2: { at: now, version: 1 },
      s3: { at: now, version: 1 },
    });
    // s4 is not continue: it waits for the whole plan (its own approval too), never for a release.
    expect(run?.waiting).toEqual({ s4: { approvals: true, dependencies: ['s3'], plan: true } });

    // Each release is signed, names its step and passes the agent's gate with the applied set.
    const release = releases.s3!;
    expect(release).toMatchObject({ kind: 'release', runId, agent: AGENT, version: 1, stepId: 's3' });
    expect(verifyDecisionStep(release, stepOf(release, 's3'), KEYS, now, new Set(['s1', 's2'])).ok).toBe(
      true,
    );
    expect(verifyDecisionStep(release, stepOf(release, 's3'), KEYS, now, new Set(['s1']))).toMatchObject({
      ok: false,
      reason: 'dependency_not_applied',
    });
    expect(verifyDecisionStep(release, stepOf(release, 's4'), KEYS, now, new Set(['s3']))).toMatchObject({
      ok: false,
      reason: 'not_released',
    });
    // s2's release carries the approval that counted.
    expect(releases.s2!.plan.steps.find((step) => step.id === 's2')?.approvals).toEqual([
      { userId: 'U0OPS1', at: new Date(now).toISOString() },
    ]);

    expect(await journalTypes(svc, runId)).toEqual([
      'submitted',
      'validated',
      'released:s1',
      'approval',
      'outcome:s1:applying',
      'outcome:s1:applied',
      'released:s2',
      'outcome:s2:applied',
      'released:s3',
    ]);

    // The plan is approved: the decision lists what had been released, with its outcome then.
    const approved = expectKind(await svc.approve({ runId, version: 1, userId: 'U0FIN1' }), 'approved');
    expect(approved.decision.released).toEqual([
      { stepId: 's1', releasedAt: new Date(now).toISOString(), outcome: 'applied' },
      { stepId: 's2', releasedAt: new Date(now).toISOString(), outcome: 'applied' },
      { stepId: 's3', releasedAt: new Date(now).toISOString(), outcome: null },
    ]);
    expect(delivered).toHaveLength(1);
  });

  it('announces each release on the agent released channel, with the run id', async () => {
    const svc = service();
    const subscriber = redis.duplicate();
    const messages: string[] = [];
    subscriber.on('message', (_channel, message) => messages.push(message));
    await subscriber.subscribe(svc.keys.releasedChannel(AGENT));
    try {
      const { runId } = await submit(svc);
      await svc.approve({ runId, version: 1, userId: 'U0OPS1' });
      await svc.recordOutcome({ runId, stepId: 's1', status: 'applied' });
      await expect.poll(() => messages).toEqual([runId, runId]);
    } finally {
      await subscriber.quit();
    }
  });

  it('releases nothing that is not continue, and nothing whose approvals are missing', async () => {
    const svc = service();
    const { runId, result } = await submit(svc, [
      { id: 's1', tool: 'mail', args: { to: 'acme' } },
      { id: 's2', tool: 'tag', args: { tag: 'lost' } },
      { id: 's3', tool: 'pay', args: { to: 'acme' } },
    ]);
    const pending = expectKind(result, 'pending');
    expect(pending.run.released).toEqual({});
    expect(pending.run.waiting).toEqual({
      s1: { approvals: true, dependencies: [], plan: true },
      s2: { approvals: true, dependencies: [], plan: false },
      s3: { approvals: true, dependencies: [], plan: true },
    });
    // U0OPS1's click approves s1 and s2: only the continue step, s2, is released; s3 keeps the run pending.
    const awaiting = expectKind(await svc.approve({ runId, version: 1, userId: 'U0OPS1' }), 'awaiting');
    expect(awaiting.approvedSteps).toEqual(['s1', 's2']);
    expect(awaiting.run.released).toEqual({ s2: { at: now, version: 1 } });
    expect(Object.keys(await releasesOf(svc, runId))).toEqual(['s2']);
    // Once the plan is approved, nothing more is released: the decision covers the rest.
    const approved = expectKind(await svc.approve({ runId, version: 1, userId: 'U0FIN1' }), 'approved');
    expect(approved.decision.released?.map((entry) => entry.stepId)).toEqual(['s2']);
    expect(Object.keys(await releasesOf(svc, runId))).toEqual(['s2']);
  });

  it('refuses outcome reports for a step neither released nor approved', async () => {
    const svc = service();
    const { runId } = await submit(svc);
    expect(await svc.recordOutcome({ runId, stepId: 's2', status: 'applying' })).toEqual({
      kind: 'not_approved',
      status: 'pending',
    });
    expect((await svc.recordOutcome({ runId, stepId: 's1', status: 'applying' })).kind).toBe('recorded');
  });

  it('rejection after a partial release: the decision lists what was released and applied, nothing is released later', async () => {
    const svc = service();
    const { runId } = await submit(svc);
    await svc.approve({ runId, version: 1, userId: 'U0OPS1' });
    now += 1_000;
    await svc.recordOutcome({ runId, stepId: 's1', status: 'applied' });
    const rejected = expectKind(
      await svc.reject({ runId, version: 1, userId: 'U0FIN1', reason: 'wrong customer' }),
      'rejected',
    );
    expect(rejected.decision.released).toEqual([
      { stepId: 's1', releasedAt: new Date(now - 1_000).toISOString(), outcome: 'applied' },
      { stepId: 's2', releasedAt: new Date(now).toISOString(), outcome: null },
    ]);
    // s2 was running: its report is still taken; it releases nothing now.
    expect((await svc.recordOutcome({ runId, stepId: 's2', status: 'applied' })).kind).toBe('recorded');
    expect(Object.keys(await releasesOf(svc, runId)).sort()).toEqual(['s1', 's2']);
    // An unreleased step of a rejected run may not report.
    expect((await svc.recordOutcome({ runId, stepId: 's3', status: 'applying' })).kind).toBe('not_approved');
    // The final decision does not let a released step run: only its release does.
    const decision = rejected.decision;
    expect(
      verifyDecisionStep(decision, { id: 's2', tool: 'tag', args: { tag: 'late' } }, KEYS, now),
    ).toMatchObject({
      ok: false,
      reason: 'not_approved',
    });
    const types = await journalTypes(svc, runId);
    expect(types.slice(types.indexOf('rejected'))).toEqual(['rejected', 'outcome:s2:applied']);
  });

  it('expiry lists the released steps too', async () => {
    const svc = service();
    const { runId } = await submit(svc);
    now += 3_600_000;
    const expired = expectKind(await svc.expire({ runId, version: 1 }), 'expired');
    expect(expired.decision?.released).toEqual([
      { stepId: 's1', releasedAt: new Date(now - 3_600_000).toISOString(), outcome: null },
    ]);
  });

  it('refuses an edit that changes or removes a released step, naming it; an edit that keeps it goes through and the release holds', async () => {
    const svc = service();
    const { runId } = await submit(svc);
    const steps = CHAIN.map((step) => ({ ...step }));
    const changed = await svc.applyEdit({
      runId,
      baseVersion: 1,
      editorId: 'U0OPS1',
      steps: steps.map((step) => (step.id === 's1' ? { ...step, args: { order: 'B' } } : step)),
    });
    expect(changed).toMatchObject({
      kind: 'invalid',
      phase: 'authorize',
      diagnostics: [
        {
          stepId: 's1',
          message: 's1 was already released to the agent and may be running: it cannot be changed',
        },
      ],
    });
    const removed = await svc.applyEdit({
      runId,
      baseVersion: 1,
      editorId: 'U0OPS1',
      steps: [{ id: 's5', tool: 'note', args: { text: 'bye' } }],
    });
    expect(removed).toMatchObject({
      kind: 'invalid',
      diagnostics: [
        { stepId: 's1', message: expect.stringMatching(/s1 was already released .* cannot be removed/) },
      ],
    });
    // Changing s2 keeps s1 as released; a new auto continue note with no dependency is released with the edit.
    const edited = expectKind(
      await svc.applyEdit({
        runId,
        baseVersion: 1,
        editorId: 'U0OPS1',
        steps: [
          ...steps.map((step) => (step.id === 's2' ? { ...step, args: { tag: 'lost' } } : step)),
          { tool: 'note', args: { text: 'bye' } },
        ],
      }),
      'edited',
    );
    expect(edited.run.released).toEqual({ s1: { at: now, version: 1 }, s5: { at: now, version: 2 } });
    const types = await journalTypes(svc, runId);
    expect(types.filter((type) => type === 'edit_refused')).toHaveLength(2);
    expect(types.slice(-2)).toEqual(['edited', 'released:s5']);
  });

  it('releases atomically with the applied report: one commit holds the outcome and the release', async () => {
    const svc = service();
    const { runId } = await submit(svc);
    await svc.approve({ runId, version: 1, userId: 'U0OPS1' });
    const keys = svc.keys.forRun(runId);
    const rev = Number(await redis.hget(keys.run, 'rev'));
    await svc.recordOutcome({ runId, stepId: 's1', status: 'applied' });
    expect(Number(await redis.hget(keys.run, 'rev'))).toBe(rev + 1);
    expect(Object.keys(await releasesOf(svc, runId)).sort()).toEqual(['s1', 's2']);
    expect(JSON.parse((await redis.hget(keys.run, 'released')) ?? '{}')).toHaveProperty('s2');
    // A report repeated after a crash (the agent's retry) is refused as already final: nothing twice.
    expect((await svc.recordOutcome({ runId, stepId: 's1', status: 'applied' })).kind).toBe(
      'already_claimed',
    );
    expect((await journalTypes(svc, runId)).filter((type) => type === 'released:s2')).toHaveLength(1);
  });

  it('audit: releases the service wrote have their journal records; one written straight into Redis is reported', async () => {
    const svc = service();
    const { runId } = await submit(svc);
    await svc.approve({ runId, version: 1, userId: 'U0OPS1' });
    await svc.recordOutcome({ runId, stepId: 's1', status: 'applied' });
    const audit = async () => {
      const evidence = await readRunEvidence(redis, svc.keys, runId);
      const records = evidence.records.map((text) => JSON.parse(text) as JournalRecord);
      return checkRunState(records, evidence).findings.map(
        (finding) => `${finding.code}: ${finding.message}`,
      );
    };
    expect(await audit()).toEqual([]);
    // s3's release forged from s2's: signed by nobody's journal.
    const keys = svc.keys.forRun(runId);
    const forged = { ...JSON.parse((await redis.hget(keys.releases, 's2')) ?? '{}'), stepId: 's3' };
    await redis.hset(keys.releases, 's3', JSON.stringify(forged));
    expect(await audit()).toEqual([
      'release_without_record: the release of step s3 at version 1 has no journal record',
    ]);
  });
});
