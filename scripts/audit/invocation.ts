/** The audit CLI's command line: the usage text, and the arguments read into a command. */
import { parseArgs } from 'node:util';
import { createKeys, type Keys } from '../../src/approvals/keys.ts';
import { readEnv } from '../../src/config/env.ts';
import { RUN_ID_PATTERN } from '../../src/pipeline/index.ts';
import { AuditError, messageOf } from './audit-error.ts';

/** Printed for --help and after a usage error. */
export const USAGE = `usage:
  npm run audit -- verify <runId>      recompute a run's journal hash chain and check its approvals,
                                       decision and status against the journal
  npm run audit -- show <runId>        print a run's history
  npm run audit -- export --since <date> [--out <file>]
                                       JSONL of the edits in runs created since <date> (e.g. 2026-04-01)
options:
  --redis-url <url>   Redis to read (default: REDIS_URL, else redis://127.0.0.1:6379)
  --prefix <prefix>   key prefix (default: COUNTERSIGN_PREFIX, else cs)`;

export type Command =
  | { readonly name: 'verify' | 'show'; readonly runId: string }
  | { readonly name: 'export'; readonly since: number; readonly out: string | null };

export interface Invocation {
  readonly command: Command;
  readonly redisUrl: string;
  readonly keys: Keys;
}

/** The command and its options, or an AuditError of kind `usage` that says what is wrong. */
export function parseInvocation(argv: readonly string[]): Invocation {
  let parsed: ReturnType<typeof parseCli>;
  try {
    parsed = parseCli(argv);
  } catch (error) {
    throw new AuditError(messageOf(error), 'usage');
  }
  const { values, positionals } = parsed;
  const [name, ...rest] = positionals;
  let command: Command;
  if (name === 'verify' || name === 'show') {
    const [runId, ...extra] = rest;
    if (runId === undefined) throw new AuditError(`${name} needs a run id`, 'usage');
    if (extra.length > 0) throw new AuditError(`unexpected argument ${JSON.stringify(extra[0])}`, 'usage');
    if (!RUN_ID_PATTERN.test(runId))
      throw new AuditError(`${JSON.stringify(runId)} is not a run id`, 'usage');
    command = { name, runId };
  } else if (name === 'export') {
    if (rest.length > 0) throw new AuditError(`unexpected argument ${JSON.stringify(rest[0])}`, 'usage');
    if (values.since === undefined) throw new AuditError('export needs --since <date>', 'usage');
    const since = Date.parse(values.since);
    if (Number.isNaN(since)) {
      throw new AuditError(`--since ${JSON.stringify(values.since)} is not a date (try 2026-04-01)`, 'usage');
    }
    command = { name, since, out: values.out ?? null };
  } else {
    throw new AuditError(
      name === undefined ? 'no command given' : `unknown command ${JSON.stringify(name)}`,
      'usage',
    );
  }
  if (command.name !== 'export' && values.out !== undefined)
    throw new AuditError('--out is for export', 'usage');
  if (command.name !== 'export' && values.since !== undefined)
    throw new AuditError('--since is for export', 'usage');

  let keys: Keys;
  try {
    keys = createKeys(values.prefix ?? defaultFromEnv().COUNTERSIGN_PREFIX);
  } catch (error) {
    throw new AuditError(messageOf(error), 'usage');
  }
  return { command, keys, redisUrl: values['redis-url'] ?? defaultFromEnv().REDIS_URL };
}

function parseCli(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      'redis-url': { type: 'string' },
      prefix: { type: 'string' },
      since: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

/**
 * REDIS_URL and COUNTERSIGN_PREFIX, as the bot reads them. Only read when an option is absent, so an
 * unrelated bad variable cannot block explicit options.
 */
export function defaultFromEnv(): { REDIS_URL: string; COUNTERSIGN_PREFIX: string } {
  const env = readEnv();
  if (!env.ok) throw new AuditError(`bad environment: ${env.problems.join('; ')}`, 'usage');
  return env.env;
}
