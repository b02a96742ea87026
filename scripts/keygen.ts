/**
 * `npm run keygen -- --out <file>` (or `npm run -s keygen`): a new Ed25519 private key for signing decision receipts
 * (docs/receipts.md), as PKCS#8 PEM.
 *
 * Without --out the PEM goes to stdout. With --out it is written to <file> with mode 0600, and an
 * existing file is never overwritten. The key's kid goes to stderr either way.
 * Exit codes: 0 ok; 1 the file could not be written; 2 bad arguments.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { generateSigningKey } from '../src/config/signing-key.ts';

const USAGE = `usage:
  npm run keygen -- --out <file>      write a new Ed25519 signing key (PEM) to <file>
                                      (mode 0600; never overwrites)
  npm run -s keygen                   print it to stdout instead (-s keeps npm's banner out)
Countersign reads it from COUNTERSIGN_SIGNING_KEY_FILE (a path) or COUNTERSIGN_SIGNING_KEY (the PEM).`;

type Outcome = { readonly code: number; readonly stderr: string; readonly stdout?: string };

function run(argv: readonly string[]): Outcome {
  let out: string | undefined;
  try {
    const { values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: { out: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    });
    if (values.help === true) return { code: 0, stderr: `${USAGE}\n` };
    out = values.out;
  } catch (error) {
    return { code: 2, stderr: `keygen: ${messageOf(error)}\n${USAGE}\n` };
  }
  if (out === '') return { code: 2, stderr: `keygen: --out needs a file name\n${USAGE}\n` };
  const key = generateSigningKey();
  if (out === undefined) return { code: 0, stdout: key.pem, stderr: `kid: ${key.kid}\n` };
  try {
    // 'wx' fails if the file exists, atomically: a key is never replaced by accident.
    writeFileSync(out, key.pem, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'EEXIST'
        ? 'it already exists; keygen never overwrites a key (move it away or choose another name)'
        : messageOf(error);
    return { code: 1, stderr: `keygen: cannot write ${out}: ${reason}\n` };
  }
  return {
    code: 0,
    stderr: `kid: ${key.kid}\nwrote ${out} (mode 0600); set COUNTERSIGN_SIGNING_KEY_FILE=${out}\n`,
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const outcome = run(process.argv.slice(2));
if (outcome.stdout !== undefined) process.stdout.write(outcome.stdout);
process.stderr.write(outcome.stderr);
process.exitCode = outcome.code;
