/**
 * `npm start` refuses to start with everything that is missing listed at once — the Slack
 * credentials, Countersign's signing key, the agents' secrets — and a clear word for each, never a
 * stack trace.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'countersign-start-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs `src/main.ts` with exactly this environment (plus PATH); its exit code and output. */
async function start(env: Record<string, string>) {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', MAIN], {
      env: { PATH: process.env.PATH ?? '', ...env },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('npm start', () => {
  it('lists every missing piece at once: Slack credentials, the signing key, the agent’s secret', async () => {
    const result = await start({});
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('countersign: cannot start:');
    expect(result.stderr).toContain('SLACK_BOT_TOKEN is not set');
    expect(result.stderr).toContain('set SLACK_SIGNING_SECRET for the HTTP receiver, or SLACK_APP_TOKEN');
    expect(result.stderr).toContain('COUNTERSIGN_SIGNING_KEY is not set');
    expect(result.stderr).toContain('npm run keygen');
    expect(result.stderr).toContain('FREIGHT_AGENT_SECRET is not set');
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
  }, 40_000);

  it('names a signing key of the wrong kind', async () => {
    const rsa = join(scratch, 'rsa.pem');
    const { generateKeyPairSync } = await import('node:crypto');
    writeFileSync(
      rsa,
      generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }),
    );
    const result = await start({
      SLACK_BOT_TOKEN: 'xoxb-test',
      SLACK_SIGNING_SECRET: 'signing-secret',
      FREIGHT_AGENT_SECRET: 'freight-secret-0123456789',
      COUNTERSIGN_SIGNING_KEY_FILE: rsa,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/is an RSA key; Countersign signs with Ed25519/);
  }, 40_000);
});
