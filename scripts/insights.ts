/**
 * `npm run insights -- [--agent A] [--since DATE] [--format md|json]`: what people's edits say about
 * each agent's plans (issue 20; src/approvals/insights). Reads the run journals (only runs whose journal
 * verifies and whose state agrees with it), prints the report on stdout and progress on stderr.
 * Exit codes: 0 ok; 1 some runs were skipped (said on stderr); 2 bad arguments; 3 Redis or output failing.
 */

import {
  historyOf,
  insightsReport,
  type RunHistory,
  renderMarkdown,
  toolFields,
} from '../src/approvals/insights/index.ts';
import { loadConfig } from '../src/config/load.ts';
import { messageOf, runCli } from './audit/audit-error.ts';
import { connect } from './audit/connection.ts';
import { finish, plural, writeLine } from './audit/output.ts';
import { forEachVerifiedRun, skippedNote } from './audit/verified-runs.ts';
import { parseInsightsInvocation, USAGE } from './insights/invocation.ts';

/** Progress is shown once the period holds this many runs, at most once a second. */
const PROGRESS_FROM = 1_000;

async function run(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const options = parseInsightsInvocation(argv, Date.now());
  let fields: ReturnType<typeof toolFields> | undefined;
  if (options.configPath !== undefined) {
    try {
      fields = toolFields([...(await loadConfig(options.configPath)).pipeline.tools.values()]);
    } catch (error) {
      process.stderr.write(
        `insights: cannot read the config ${options.configPath} (${messageOf(error).split('\n')[0]}); fields are shown as paths and raw values\n`,
      );
    }
  }
  const redis = await connect(options.redisUrl);
  try {
    const histories: RunHistory[] = [];
    let lastProgress = 0;
    const result = await forEachVerifiedRun(
      redis,
      options.keys,
      options.since,
      process.stderr,
      (runId, records) => {
        const history = historyOf(runId, records);
        if (history !== undefined && (options.agent === undefined || history.agent === options.agent))
          histories.push(history);
      },
      (read, total) => {
        if (total < PROGRESS_FROM || (Date.now() - lastProgress < 1_000 && read < total)) return;
        lastProgress = Date.now();
        process.stderr.write(
          `insights: read ${read.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} runs…\n`,
        );
      },
    );
    const report = insightsReport(histories, {
      since: options.since,
      now: Date.now(),
      minPlans: options.minPlans,
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      ...(fields === undefined ? {} : { fields }),
    });
    process.stdout.on('error', () => {}); // a closed pipe (`| head`) surfaces through writeLine
    await writeLine(
      process.stdout,
      options.format === 'json' ? `${JSON.stringify(report, null, 2)}\n` : renderMarkdown(report),
    );
    await finish(process.stdout);
    process.stderr.write(
      `insights: ${plural(histories.length, 'run')} of ${plural(report.agents.length, 'agent')} read${skippedNote(result)}\n`,
    );
    return result.broken + result.disagreeing === 0 ? 0 : 1;
  } finally {
    redis.disconnect();
  }
}

await runCli('insights', USAGE, run);
