/**
 * `scripts/audit.ts` run as a real child process against the test Redis, as an operator would run it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeys } from '../../src/approvals/keys.ts';
import { redisUrl, testRedis } from '../helpers/redis.ts';
import { freightHistory } from '../support/journal-history.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const url = redisUrl();
const { redis, prefix, cleanup } = testRedis('audit-cli');
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
  await cleanup();
  rmSync(outDir, { recursive: true, force: true });
});

describe('audit verify', () => {
  it('reports OK with the record count and head hash, exit 0', async () => {
    const result = await audit(['verify', 'run-good']);
    expect(result).toEqual({
      code: 0,
      stdout: `journal of run run-good: OK, 13 records, head ${goodHead}\n`,
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
});

describe('audit show', () => {
  it('prints the history one readable line per record, then the chain status', async () => {
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
    expect(lines.at(-1)).toBe(`chain: OK, head ${goodHead}`);
  });

  it('still prints a broken history, ending with where it breaks, exit 1', async () => {
    const result = await audit(['show', 'run-corrupt']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('#5  edited by U0FIN2: v1 → v2');
    expect(result.stdout.trimEnd().split('\n').at(-1)).toMatch(
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
