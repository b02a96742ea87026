/**
 * `scripts/audit.ts` run as a real child process against the test Redis, as an operator would run it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import config from '../../examples/freight/countersign.config.ts';
import { addedRefundStep, freightPlan } from '../../examples/freight/plans.ts';
import { createKeys } from '../../src/approvals/keys.ts';
import { RunCommit } from '../../src/approvals/run-commit.ts';
import { ApprovalService } from '../../src/approvals/service.ts';
import { loadRun } from '../../src/approvals/store.ts';
import { deleteKeysUnder, redisUrl, testRedis } from '../helpers/redis.ts';
import { freightHistory } from '../support/journal-history.ts';
import { testSigning } from '../support/stack.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const url = redisUrl();
const { redis, prefix: testPrefix, cleanup } = testRedis('audit-cli');
// COUNTERSIGN_PREFIX allows letters, digits, - and _ only: the harness's prefix without its colons.
const prefix = testPrefix.replace(/:/g, '-');
const keys = createKeys(prefix);
const outDir = mkdtempSync(join(tmpdir(), 'audit-cli-'));

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI; `--redis-url` and `--prefix` are added unless `bare`. */
function audit(
  args: readonly string[],
  options: { bare?: boolean; env?: Record<string, string> } = {},
): Promise<Run> {
  const full = options.bare ? args : [...args, '--redis-url', url, '--prefix', prefix];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/audit.ts', ...full],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...options.env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Stores a run's journal (and the head the service keeps on the run hash) and indexes the run. */
async function storeRun(
  runId: string,
  texts: readonly string[],
  createdAt: number,
  head?: string,
): Promise<void> {
  const runKeys = keys.forRun(runId);
  await redis.rpush(runKeys.journal, ...texts);
  if (head !== undefined)
    await redis.hset(runKeys.run, { journal_seq: String(texts.length), journal_head: head });
  await redis.zadd(keys.runs, createdAt, runId);
}

const good = freightHistory('run-good');
const old = freightHistory('run-old');
const goodHead = good.records.at(-1)!.hash;

beforeAll(async () => {
  await storeRun('run-good', good.texts, Date.parse('2026-04-01T10:00:00Z'), goodHead);
  await storeRun('run-old', old.texts, Date.parse('2026-03-20T09:00:00Z'), old.records.at(-1)!.hash);
  // A byte flipped inside the edit record.
  const corrupted = [...good.texts];
  corrupted[4] = corrupted[4]!.replace('"editor":"U0FIN1"', '"editor":"U0FIN2"');
  await storeRun('run-corrupt', corrupted, Date.parse('2026-04-02T08:00:00Z'));
  await storeRun('run-truncated', good.texts.slice(0, -2), Date.parse('2026-03-01T00:00:00Z'));
  await redis.hset(keys.forRun('run-truncated').run, {
    journal_seq: String(good.texts.length),
    journal_head: goodHead,
  });
});

afterAll(async () => {
  await deleteKeysUnder(redis, prefix);
  await cleanup();
  rmSync(outDir, { recursive: true, force: true });
});

describe('audit verify', () => {
  it('reports OK with the record count and head hash, exit 0', async () => {
    const result = await audit(['verify', 'run-good']);
    expect(result).toEqual({
      code: 0,
      stdout:
        `journal of run run-good: OK, 13 records, head ${goodHead}\n` +
        'state of run run-good: OK, no approvals, decision or run status stored beside the journal\n',
      stderr: '',
    });
  });

  it('reports the first broken record with its index, seq and reason, exit 1', async () => {
    const result = await audit(['verify', 'run-corrupt']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /^journal of run run-corrupt: BROKEN at record index 4 \(seq 5\): bad_hash: stored hash /,
    );
  });

  it('catches a truncated tail against the head the run hash recorded', async () => {
    const result = await audit(['verify', 'run-truncated']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'BROKEN at record index 11 (seq 12): head_mismatch: the run records 13 journal records',
    );
  });

  it('says so, without a stack trace, for a run with no journal, exit 2', async () => {
    const result = await audit(['verify', 'run-nobody']);
    expect(result).toEqual({ code: 2, stdout: '', stderr: 'audit: no journal for run run-nobody\n' });
  });

  it('reads the Redis URL from REDIS_URL when --redis-url is not given', async () => {
    const result = await audit(['verify', 'run-good', '--prefix', prefix], {
      bare: true,
      env: { REDIS_URL: url },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('OK, 13 records');
  });

  it('reads the prefix from COUNTERSIGN_PREFIX, like the bot, when --prefix is not given', async () => {
    const result = await audit(['verify', 'run-good'], {
      bare: true,
      env: { REDIS_URL: url, COUNTERSIGN_PREFIX: prefix },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('OK, 13 records');
  });
});

describe('audit show', () => {
  it('prints the history one readable line per record, then the chain and state checks', async () => {
    const result = await audit(['show', 'run-good']);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.slice(0, 3)).toEqual([
      'run run-good: 13 journal records (times UTC)',
      '2026-04-01',
      '10:00:00  #1  submitted by agent freight-ops (678 bytes, nonce n-0001)',
    ]);
    expect(lines).toContain(
      '10:02:11  #5  edited by U0FIN1: v1 → v2 (+1 added: s4 issue_refund; ~ s2.window 2026-04-03 → 2026-04-06)',
    );
    expect(lines).toContain('10:02:40  #7  refused approve by U0OP2: version 2 is current');
    expect(lines).toContain('10:04:00  #9  approved by U0FIN2 (1 step of v2)');
    expect(lines.slice(-2)).toEqual([
      `chain: OK, head ${goodHead}`,
      'state: OK, no approvals, decision or run status stored beside the journal',
    ]);
  });

  it('still prints a broken history, ending with where it breaks, exit 1', async () => {
    const result = await audit(['show', 'run-corrupt']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('#5  edited by U0FIN2: v1 → v2');
    expect(result.stdout.trimEnd().split('\n').at(-2)).toMatch(
      /^chain: BROKEN at record index 4 \(seq 5\): bad_hash/,
    );
  });
});

describe('audit export', () => {
  it('writes one JSONL line per edit in the runs created since the date', async () => {
    const result = await audit(['export', '--since', '2026-03-15']);
    // run-truncated was created before the date; run-corrupt is after it but cannot be trusted.
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('skipping run run-corrupt: journal BROKEN at record index 4');
    expect(result.stderr).toContain('exported 2 edits from 3 runs created since 2026-03-15T00:00:00.000Z');
    const rows = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rows.map((row) => row.runId)).toEqual(['run-old', 'run-good']);
    expect(rows[1]).toEqual({
      runId: 'run-good',
      agent: 'freight-ops',
      at: '2026-04-01T10:02:11.000Z',
      editor: 'U0FIN1',
      baseVersion: 1,
      version: 2,
      before: JSON.parse(JSON.stringify(good.v1)),
      after: JSON.parse(JSON.stringify(good.v2)),
      diff: expect.objectContaining({ touchedStepIds: ['s2', 's4'] }),
    });
  });

  it('writes to --out and leaves older runs out', async () => {
    const file = join(outDir, 'edits.jsonl');
    const result = await audit(['export', '--since', '2026-04-01T09:00:00Z', '--out', file]);
    expect(result.code).toBe(1); // run-corrupt is still in range
    expect(result.stdout).toBe('');
    const rows = readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rows.map((row) => [row.runId, row.editor, row.version])).toEqual([['run-good', 'U0FIN1', 2]]);
  });

  it('exits 0 with nothing to export', async () => {
    const result = await audit(['export', '--since', '2030-01-01']);
    expect(result).toMatchObject({ code: 0, stdout: '' });
    expect(result.stderr).toContain('exported 0 edits from 0 runs');
  });
});

/**
 * Runs the service made, created before the fixtures above (so `export --since 2026-03-15` leaves
 * them out): the attack of issue 11 §3, and clean runs that must verify.
 */
describe('audit of the approvals and decision beside the journal', () => {
  let now = Date.parse('2026-02-02T10:00:00Z');
  const service = new ApprovalService({
    redis,
    config,
    prefix,
    signer: testSigning.signer,
    clock: () => now,
  });

  async function act(use: Promise<{ kind: string }>, kind: string): Promise<void> {
    expect((await use).kind).toBe(kind);
    now += 30_000;
  }

  async function submit(runId: string): Promise<void> {
    const raw = JSON.stringify(freightPlan({ runId, now }));
    await act(service.submitPlan({ runId, agent: 'freight-ops', raw }), 'pending');
  }

  /** Finance adds the $1,489 refund s4 (two finance approvers, not its author); returns its digest. */
  async function addRefund(runId: string): Promise<string> {
    const v1 = (await service.getRun(runId))!.current.plan;
    const steps = [...v1.steps.map(({ id, tool, args }) => ({ id, tool, args })), addedRefundStep];
    await act(service.applyEdit({ runId, baseVersion: 1, editorId: 'U0FIN1', steps }), 'edited');
    return (await service.getRun(runId))!.current.plan.steps.find((step) => step.id === 's4')!.digest;
  }

  /** An operator's approval of v1, committed as the service did before approvals named step ids. */
  async function approveTheOldWay(runId: string, userId: string): Promise<void> {
    const runKeys = keys.forRun(runId);
    const snapshot = await loadRun(redis, runKeys);
    const plan = snapshot.current!.plan;
    const digests = plan.steps.filter((step) => step.route.kind === 'review').map((step) => step.digest);
    const commit = new RunCommit(runKeys, snapshot);
    for (const stepDigest of digests) {
      const approval = { stepDigest, userId, version: 1, at: now };
      commit.hset(runKeys.approvals, { [`${stepDigest}|${userId}`]: JSON.stringify(approval) });
    }
    commit.journal({ type: 'approval', userId, version: 1, stepDigests: digests }, now, plan.digest);
    expect(await commit.exec(redis)).toBeTypeOf('number');
    now += 30_000;
  }

  let forgedDigest = '';

  beforeAll(async () => {
    await submit('run-forged');
    forgedDigest = await addRefund('run-forged');
    // The attack: someone with Redis access approves the refund for two finance people (one entry
    // as approvals are stored today, one as they were stored before they named step ids)…
    await redis.hset(keys.forRun('run-forged').approvals, {
      [`s4|${forgedDigest}|U0FIN2`]: JSON.stringify({
        stepId: 's4',
        stepDigest: forgedDigest,
        userId: 'U0FIN2',
        version: 2,
        at: now - 20_000,
      }),
      [`${forgedDigest}|U0FIN3`]: JSON.stringify({
        stepDigest: forgedDigest,
        userId: 'U0FIN3',
        version: 2,
        at: now - 10_000,
      }),
    });
    // …and one operator's click on the reschedule and the reply approves the whole plan, refund too.
    await act(service.approve({ runId: 'run-forged', version: 2, userId: 'U0OP1' }), 'approved');

    await submit('run-clean');
    await addRefund('run-clean');
    await act(service.approve({ runId: 'run-clean', version: 2, userId: 'U0OP1' }), 'awaiting');
    await act(service.approve({ runId: 'run-clean', version: 2, userId: 'U0FIN2' }), 'awaiting');
    await act(service.approve({ runId: 'run-clean', version: 2, userId: 'U0FIN3' }), 'approved');

    await submit('run-legacy');
    await approveTheOldWay('run-legacy', 'U0OP1');
    await addRefund('run-legacy');
    await act(service.approve({ runId: 'run-legacy', version: 2, userId: 'U0FIN2' }), 'awaiting');
    await act(service.approve({ runId: 'run-legacy', version: 2, userId: 'U0FIN3' }), 'approved');

    await submit('run-rejected');
    await addRefund('run-rejected');
    await act(service.approve({ runId: 'run-rejected', version: 2, userId: 'U0OP1' }), 'awaiting');
    const reason = 'the invoice is another account’s';
    await act(service.reject({ runId: 'run-rejected', version: 2, userId: 'U0FIN2', reason }), 'rejected');

    await submit('run-expired');
    now += 3 * 3_600_000; // past the plan's two hours
    await act(service.expire({ runId: 'run-expired', version: 1 }), 'expired');
  });

  it('verify names each forged approval and each one the decision counted, exit 1', async () => {
    const decision = await service.getDecision('run-forged');
    const refund = decision?.plan?.steps.find((step) => step.id === 's4');
    expect(refund?.approvals.map((approval) => approval.userId)).toEqual(['U0FIN2', 'U0FIN3']);

    const result = await audit(['verify', 'run-forged']);
    expect(result.code).toBe(1);
    const short = `${forgedDigest.slice(0, 12)}…`;
    const [fin2, fin3] = refund?.approvals ?? [];
    expect(result.stdout.split('\n').slice(1)).toEqual([
      'state of run run-forged: DISAGREES with the journal, 4 findings:',
      `  approval_without_record: approval by U0FIN3 of step s4 (digest ${short}), a record without a step id, at version 2 has no journal record (approvals field "${forgedDigest}|U0FIN3")`,
      `  approval_without_record: approval by U0FIN2 of step s4 (digest ${short}) at version 2 has no journal record (approvals field "s4|${forgedDigest}|U0FIN2")`,
      `  decision_approval_without_record: the decision counts an approval by U0FIN2 of step s4 (digest ${short}) at ${fin2?.at} that has no journal record`,
      `  decision_approval_without_record: the decision counts an approval by U0FIN3 of step s4 (digest ${short}) at ${fin3?.at} that has no journal record`,
      '',
    ]);
    // The chain itself is intact: the forger never touched the journal.
    expect(result.stdout).toMatch(/^journal of run run-forged: OK, 5 records, head [0-9a-f]{64}\n/);
  });

  it('verify passes a run the service approved after an edit, exit 0', async () => {
    const result = await audit(['verify', 'run-clean']);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n').slice(1)).toEqual([
      expect.stringMatching(
        /^state of run run-clean: OK, 4 approvals, decision approved v2 by U0FIN3 \(plan \w{12}…\), status approved: each has its journal record$/,
      ),
      '',
    ]);
  });

  it('verify passes approvals stored before they named step ids, with their journal records of then', async () => {
    const result = await audit(['verify', 'run-legacy']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain(
      'state of run run-legacy: OK, 4 approvals, decision approved v2 by U0FIN3',
    );
    const counted = (await service.getDecision('run-legacy'))?.plan?.steps.map((step) => [
      step.id,
      step.approvals.map((approval) => approval.userId),
    ]);
    expect(counted).toEqual([
      ['s1', []],
      ['s2', ['U0OP1']],
      ['s3', ['U0OP1']],
      ['s4', ['U0FIN2', 'U0FIN3']],
    ]);
  });

  it.each([
    ['run-rejected', 'decision rejected v2 by U0FIN2, status rejected'],
    ['run-expired', 'decision expired v1 by timer, status expired'],
  ])('verify passes %s', async (runId, decided) => {
    const result = await audit(['verify', runId]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain(`state of run ${runId}: OK, `);
    expect(result.stdout).toContain(`${decided}: each has its journal record\n`);
  });

  it('show prints the history, then the findings, exit 1', async () => {
    const result = await audit(['show', 'run-forged']);
    expect(result.code).toBe(1);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toContain('10:01:00  #4  approved by U0OP1 (2 steps of v2)');
    expect(lines.slice(-6, -4)).toEqual([
      expect.stringMatching(/^chain: OK, head /),
      'state: DISAGREES with the journal, 4 findings:',
    ]);
    expect(lines.at(-1)).toMatch(/^ {2}decision_approval_without_record: .* by U0FIN3 of step s4 /);
  });

  it('export leaves out the run whose approvals disagree with its journal, exit 1', async () => {
    const file = join(outDir, 'february.jsonl');
    const result = await audit(['export', '--since', '2026-02-01', '--out', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'skipping run run-forged: state DISAGREES with the journal: approval_without_record: approval by U0FIN3 of step s4',
    );
    expect(result.stderr).toContain('(+3 more; see `npm run audit -- verify run-forged`)');
    expect(result.stderr).toContain(
      'skipped 2 with a broken journal, 1 whose state disagrees with its journal',
    );
    const rows = readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rows.map((row) => row.runId)).toEqual([
      'run-clean',
      'run-legacy',
      'run-rejected',
      'run-old',
      'run-good',
    ]);
  });
});

describe('audit usage', () => {
  it.each([
    [[], /no command given/],
    [['verify'], /verify needs a run id/],
    [['verify', 'a:b'], /"a:b" is not a run id/],
    [['show', 'run-good', 'extra'], /unexpected argument "extra"/],
    [['export'], /export needs --since/],
    [['export', '--since', 'yesterday'], /--since "yesterday" is not a date/],
    [['verify', 'run-good', '--out', 'x'], /--out is for export/],
    [['verify', 'run-good', '--frobnicate'], /Unknown option '--frobnicate'/],
    [['verify', 'run-good', '--prefix', 'a*b'], /invalid key prefix "a\*b"/],
    [['audit-everything'], /unknown command "audit-everything"/],
  ])('refuses %j with a message and the usage, exit 2', async (args, message) => {
    const result = await audit(args, { bare: true, env: { REDIS_URL: url } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain('usage:');
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('says when Redis cannot be reached, exit 3', async () => {
    const result = await audit(['verify', 'run-good', '--redis-url', 'redis://127.0.0.1:1'], { bare: true });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^audit: cannot connect to Redis at redis:\/\/127\.0\.0\.1:1/);
  });
});
