/**
 * `npm run audit -- <command>`: read the run journals (docs/architecture.md §7, docs/journal.md).
 *
 *   verify <runId>                 recompute the hash chain; report OK or the first broken record;
 *                                  then cross-check the run's approvals, decision and status against it
 *   show <runId>                   the run's history, one line per record, then both checks' results
 *   export --since <date> [--out <file>]
 *                                  JSONL, one line per `edited` record of the runs created since <date>
 *
 * Options: --redis-url <url> (default: REDIS_URL), --prefix <prefix> (default: COUNTERSIGN_PREFIX, else cs).
 * Exit codes: 0 ok; 1 a journal is broken or the run's state disagrees with it (verify, show; export
 * when it skipped such a run);
 * 2 bad arguments or unknown run; 3 Redis unreachable or failing.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { AuditError, messageOf, runCli } from './audit/audit-error.ts';
import { connect } from './audit/connection.ts';
import { exportEdits } from './audit/export-edits.ts';
import { parseInvocation, USAGE } from './audit/invocation.ts';
import { finish } from './audit/output.ts';
import { show } from './audit/show.ts';
import { verify } from './audit/verify.ts';

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

await runCli('audit', USAGE, run);
