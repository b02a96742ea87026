/**
 * `npm run audit -- <command>`: read the run journals (DESIGN.md §7, docs/journal.md).
 *
 *   verify <runId>                 recompute the hash chain; report OK or the first broken record;
 *                                  then cross-check the run's approvals, decision and status against it
 *   show <runId>                   the run's history, one line per record, then both checks' results
 *   export --since <date> [--out <file>]
 *                                  JSONL, one line per `edited` record of the runs created since <date>
 *
 * Options: --redis-url <url> (default: REDIS_URL), --prefix <prefix> (default: cs).
 * Exit codes: 0 ok; 1 a journal is broken or the run's state disagrees with it (verify, show; export
 * when it skipped such a run);
 * 2 bad arguments or unknown run; 3 Redis unreachable or failing.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { checkRunState, type StateCheck } from '../src/approvals/audit-check.ts';
import { describeDecision } from '../src/approvals/audit-findings.ts';
import { describeEvent } from '../src/approvals/describe-event.ts';
import { type JournalVerification, parseRecord, verifyJournal } from '../src/approvals/journal.ts';
import { createKeys, type Keys } from '../src/approvals/keys.ts';
import { type RunEvidence, readRunEvidence } from '../src/approvals/run-evidence.ts';
import type { JournalRecord } from '../src/approvals/types.ts';
import { readEnv } from '../src/config/env.ts';
import { RUN_ID_PATTERN } from '../src/pipeline/index.ts';

const USAGE = `usage:
  npm run audit -- verify <runId>      recompute a run's journal hash chain and check its approvals,
                                       decision and status against the journal
  npm run audit -- show <runId>        print a run's history
  npm run audit -- export --since <date> [--out <file>]
                                       JSONL of the edits in runs created since <date> (e.g. 2026-04-01)
options:
  --redis-url <url>   Redis to read (default: REDIS_URL, else redis://127.0.0.1:6379)
  --prefix <prefix>   key prefix (default: cs)`;

/**
 * An expected failure: printed as one line (no stack trace). `usage` and `not_found` exit 2 (usage
 * also prints the usage text); `io` (Redis or the output failing) exits 3.
 */
class AuditError extends Error {
  override readonly name = 'AuditError';
  constructor(
    message: string,
    readonly kind: 'usage' | 'not_found' | 'io',
  ) {
    super(message);
  }
}

type Command =
  | { readonly name: 'verify' | 'show'; readonly runId: string }
  | { readonly name: 'export'; readonly since: number; readonly out: string | null };

interface Invocation {
  readonly command: Command;
  readonly redisUrl: string;
  readonly keys: Keys;
}

function parseInvocation(argv: readonly string[]): Invocation {
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
    keys = createKeys(values.prefix ?? 'cs');
  } catch (error) {
    throw new AuditError(messageOf(error), 'usage');
  }
  return { command, keys, redisUrl: values['redis-url'] ?? defaultRedisUrl() };
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

/** Only read when --redis-url is absent, so an unrelated bad variable cannot block an explicit URL. */
function defaultRedisUrl(): string {
  const env = readEnv();
  if (!env.ok) throw new AuditError(`bad environment: ${env.problems.join('; ')}`, 'usage');
  return env.env.REDIS_URL;
}

/** The URL without its password, for messages. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

async function connect(url: string): Promise<Redis> {
  // Fail fast: an audit against an unreachable Redis should say so, not retry forever.
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 5_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // Kept for the message: a refused connection rejects connect() with only "Connection is closed".
  // The listener also keeps ioredis from logging errors we report ourselves.
  let lastError: unknown;
  redis.on('error', (error: unknown) => {
    lastError = error;
  });
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new AuditError(
      `cannot connect to Redis at ${redactUrl(url)}: ${messageOf(lastError ?? error)}`,
      'io',
    );
  }
  return redis;
}

/** Reads one run's journal and stored state, or fails with "no journal for run X". */
async function loadRun(redis: Redis, keys: Keys, runId: string): Promise<RunEvidence> {
  const evidence = await fromRedis(readRunEvidence(redis, keys, runId));
  if (evidence.records.length === 0) throw new AuditError(`no journal for run ${runId}`, 'not_found');
  return evidence;
}

/** The journal's records that parse (the chain check reports the others), checked against the state. */
function checkState(evidence: RunEvidence): StateCheck {
  const records = evidence.records.flatMap((text) => {
    const parsed = parseRecord(text);
    return parsed.ok ? [parsed.record] : [];
  });
  return checkRunState(records, evidence);
}

/** The cross-check's result: a summary (after "state of run X: " or "state: "), then one line per finding. */
function describeState(check: StateCheck): string[] {
  const { findings } = check;
  if (findings.length > 0) {
    return [
      `DISAGREES with the journal, ${plural(findings.length, 'finding')}:`,
      ...findings.map((finding) => `  ${finding.code}: ${finding.message}`),
    ];
  }
  if (check.approvals === 0 && check.decision === null && check.status === null) {
    return ['OK, no approvals, decision or run status stored beside the journal'];
  }
  const checked = [
    check.approvals === 0 ? 'no approvals' : plural(check.approvals, 'approval'),
    check.decision === null ? 'no decision' : `decision ${describeDecision(check.decision)}`,
    check.status === null ? 'no run status' : `status ${check.status}`,
  ];
  return [`OK, ${checked.join(', ')}: each has its journal record`];
}

function describeFault(result: Extract<JournalVerification, { ok: false }>): string {
  const seq = result.seq === null ? '' : ` (seq ${result.seq})`;
  return `BROKEN at record index ${result.index}${seq}: ${result.reason}: ${result.message}`;
}

async function verify(redis: Redis, keys: Keys, runId: string, out: Writable): Promise<number> {
  const evidence = await loadRun(redis, keys, runId);
  const { records, head } = evidence;
  const result = verifyJournal(records, head ?? undefined);
  if (result.ok) {
    const anchored = head === null ? ' (the run records no head: a truncated tail would go unnoticed)' : '';
    out.write(`journal of run ${runId}: OK, ${result.count} records, head ${result.head}${anchored}\n`);
  } else {
    out.write(`journal of run ${runId}: ${describeFault(result)}\n`);
  }
  // Checked even when the chain is broken: a forged approval is worth naming either way.
  const state = checkState(evidence);
  const [summary, ...lines] = describeState(state);
  out.write([`state of run ${runId}: ${summary}`, ...lines, ''].join('\n'));
  return result.ok && state.findings.length === 0 ? 0 : 1;
}

async function show(redis: Redis, keys: Keys, runId: string, out: Writable): Promise<number> {
  const evidence = await loadRun(redis, keys, runId);
  const { records, head } = evidence;
  out.write(`run ${runId}: ${records.length} journal records (times UTC)\n`);
  let day = '';
  for (const [index, text] of records.entries()) {
    const parsed = parseRecord(text);
    if (!parsed.ok) {
      out.write(`??:??:??  #?  unreadable record at index ${index}: ${parsed.message}\n`);
      continue;
    }
    const { record } = parsed;
    const recordDay = record.at.slice(0, 10);
    if (recordDay !== day) {
      day = recordDay;
      out.write(`${day}\n`);
    }
    out.write(`${record.at.slice(11, 19)}  #${record.seq}  ${describeEvent(record.event)}\n`);
  }
  const result = verifyJournal(records, head ?? undefined);
  out.write(result.ok ? `chain: OK, head ${result.head}\n` : `chain: ${describeFault(result)}\n`);
  const state = checkState(evidence);
  const [summary, ...lines] = describeState(state);
  out.write([`state: ${summary}`, ...lines, ''].join('\n'));
  return result.ok && state.findings.length === 0 ? 0 : 1;
}

/** One line of `export`: an edit with the plans before and after it, as evaluation data. */
interface EditRow {
  readonly runId: string;
  readonly agent: string;
  readonly at: string;
  readonly editor: string;
  readonly baseVersion: number;
  readonly version: number;
  readonly before: unknown;
  readonly after: unknown;
  readonly diff: unknown;
}

function editRows(runId: string, records: readonly JournalRecord[]): EditRow[] {
  return records.flatMap(({ event, at }) =>
    event.type === 'edited'
      ? [
          {
            runId,
            agent: event.before.agent,
            at,
            editor: event.editor,
            baseVersion: event.baseVersion,
            version: event.version,
            before: event.before,
            after: event.after,
            diff: event.diff,
          },
        ]
      : [],
  );
}

/** How many run ids `export` reads per round trip. */
const EXPORT_PAGE = 200;

async function exportEdits(
  redis: Redis,
  keys: Keys,
  since: number,
  out: Writable,
  err: Writable,
): Promise<number> {
  let runs = 0;
  let edits = 0;
  let broken = 0;
  let disagreeing = 0;
  // Offset paging is safe here: new runs score higher than existing ones, so they only append.
  for (let offset = 0; ; offset += EXPORT_PAGE) {
    const runIds = await fromRedis(
      redis.zrangebyscore(keys.runs, since, '+inf', 'LIMIT', offset, EXPORT_PAGE),
    );
    for (const runId of runIds) {
      const evidence = await fromRedis(readRunEvidence(redis, keys, runId));
      const { records, head } = evidence;
      if (records.length === 0) continue; // the run's keys are gone (retention); nothing to export
      runs++;
      const result = verifyJournal(records, head ?? undefined);
      if (!result.ok) {
        broken++;
        err.write(`skipping run ${runId}: journal ${describeFault(result)}\n`);
        continue;
      }
      // A run whose state was written around the service is not evidence either.
      const { findings } = checkState(evidence);
      const [first] = findings;
      if (first !== undefined) {
        disagreeing++;
        const more =
          findings.length === 1
            ? ''
            : ` (+${findings.length - 1} more; see \`npm run audit -- verify ${runId}\`)`;
        err.write(
          `skipping run ${runId}: state DISAGREES with the journal: ${first.code}: ${first.message}${more}\n`,
        );
        continue;
      }
      // verifyJournal parsed every record already, so these parses succeed.
      const parsed = records.flatMap((text) => {
        const one = parseRecord(text);
        return one.ok ? [one.record] : [];
      });
      for (const row of editRows(runId, parsed)) {
        edits++;
        await writeLine(out, `${JSON.stringify(row)}\n`);
      }
    }
    if (runIds.length < EXPORT_PAGE) break;
  }
  const skipped = [
    ...(broken === 0 ? [] : [`${broken} with a broken journal`]),
    ...(disagreeing === 0 ? [] : [`${disagreeing} whose state disagrees with its journal`]),
  ];
  const skippedNote = skipped.length === 0 ? '' : `; skipped ${skipped.join(', ')}`;
  err.write(
    `exported ${plural(edits, 'edit')} from ${plural(runs, 'run')} created since ${new Date(since).toISOString()}${skippedNote}\n`,
  );
  return skipped.length === 0 ? 0 : 1;
}

/** Writes with backpressure; a failed output (a full disk, a closed pipe) becomes an `io` error. */
async function writeLine(out: Writable, line: string): Promise<void> {
  try {
    if (out.errored) throw out.errored;
    if (!out.write(line)) await once(out, 'drain');
  } catch (error) {
    throw new AuditError(`cannot write the output: ${messageOf(error)}`, 'io');
  }
}

async function finish(stream: Writable): Promise<void> {
  try {
    if (stream.errored) throw stream.errored;
    stream.end();
    await once(stream, 'finish');
  } catch (error) {
    throw new AuditError(`cannot write the output: ${messageOf(error)}`, 'io');
  }
}

/** Redis failing mid-command (connection lost, a key of the wrong type) is an `io` error, not a crash. */
async function fromRedis<T>(reply: Promise<T>): Promise<T> {
  try {
    return await reply;
  } catch (error) {
    throw new AuditError(`Redis error: ${messageOf(error)}`, 'io');
  }
}

async function run(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const { command, keys, redisUrl } = parseInvocation(argv);
  const redis = await connect(redisUrl);
  try {
    switch (command.name) {
      case 'verify':
        return await verify(redis, keys, command.runId, process.stdout);
      case 'show':
        return await show(redis, keys, command.runId, process.stdout);
      case 'export': {
        if (command.out === null) {
          // A closed pipe (`| head`) surfaces through writeLine as an io error instead of a crash.
          process.stdout.on('error', () => {});
          return await exportEdits(redis, keys, command.since, process.stdout, process.stderr);
        }
        const file = createWriteStream(command.out);
        // Errors are read from `file.errored` and the awaited events; this keeps them from crashing us.
        file.on('error', () => {});
        try {
          await once(file, 'open');
        } catch (error) {
          throw new AuditError(`cannot write ${command.out}: ${messageOf(error)}`, 'io');
        }
        const code = await exportEdits(redis, keys, command.since, file, process.stderr);
        await finish(file);
        return code;
      }
    }
  } finally {
    redis.disconnect();
  }
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

try {
  process.exitCode = await run(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof AuditError)) throw error;
  process.stderr.write(`audit: ${error.message}\n`);
  if (error.kind === 'usage') process.stderr.write(`${USAGE}\n`);
  process.exitCode = error.kind === 'io' ? 3 : 2;
}
