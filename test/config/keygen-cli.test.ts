/**
 * `scripts/keygen.ts` run as a real child process, as an operator would run it.
 */
import { execFile } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSigningKeys } from '../../src/config/signing-key.ts';
import { receiptKid } from '../../src/pipeline/receipt.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const outDir = mkdtempSync(join(tmpdir(), 'keygen-cli-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function keygen(args: readonly string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/keygen.ts', ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '' }, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The kid keygen reported on stderr. */
function reportedKid(stderr: string): string | undefined {
  return /^kid: ([A-Za-z0-9_-]{43})$/m.exec(stderr)?.[1];
}

describe('npm run keygen', () => {
  it('prints a new Ed25519 private key PEM to stdout and its kid to stderr', async () => {
    const result = await keygen([]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+-----END PRIVATE KEY-----\n$/,
    );
    const key = createPrivateKey(result.stdout);
    expect(key.asymmetricKeyType).toBe('ed25519');
    expect(result.stderr).toBe(`kid: ${receiptKid(key)}\n`);
    const loaded = loadSigningKeys({ COUNTERSIGN_SIGNING_KEY: result.stdout });
    expect(loaded.ok && loaded.signer.kid).toBe(reportedKid(result.stderr));
  });

  it('makes a different key each time', async () => {
    const [first, second] = await Promise.all([keygen([]), keygen([])]);
    expect(reportedKid(first!.stderr)).not.toBe(reportedKid(second!.stderr));
  });

  it('writes the key to --out with mode 0600, loadable from COUNTERSIGN_SIGNING_KEY_FILE', async () => {
    const path = join(outDir, 'signing-key.pem');
    const result = await keygen(['--out', path]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    const kid = reportedKid(result.stderr);
    expect(result.stderr).toContain(`wrote ${path} (mode 0600); set COUNTERSIGN_SIGNING_KEY_FILE=${path}`);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const loaded = loadSigningKeys({ COUNTERSIGN_SIGNING_KEY_FILE: path });
    expect(loaded.ok && loaded.signer.kid).toBe(kid);
  });

  it('refuses to overwrite an existing file, leaving it as it was, exit 1', async () => {
    const path = join(outDir, 'existing.pem');
    writeFileSync(path, 'the old key\n');
    const result = await keygen(['--out', path]);
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: `keygen: cannot write ${path}: it already exists; keygen never overwrites a key (move it away or choose another name)\n`,
    });
    expect(readFileSync(path, 'utf8')).toBe('the old key\n');
  });

  it('names the path and the OS error when it cannot write, exit 1', async () => {
    const path = join(outDir, 'no-such-dir', 'key.pem');
    const result = await keygen(['--out', path]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`keygen: cannot write ${path}: ENOENT: no such file or directory`);
  });

  it.each([
    [['--bogus'], "keygen: Unknown option '--bogus'"],
    [['extra'], 'keygen: Unexpected argument'],
    [['--out'], "keygen: Option '--out <value>' argument missing"],
  ])('prints the usage for bad arguments %j, exit 2', async (args, message) => {
    const result = await keygen(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain('usage:\n  npm run keygen -- --out <file>');
  });

  it('prints the usage for --help, exit 0', async () => {
    const result = await keygen(['--help']);
    expect(result).toMatchObject({ code: 0, stdout: '' });
    expect(result.stderr).toContain('COUNTERSIGN_SIGNING_KEY_FILE');
  });
});
