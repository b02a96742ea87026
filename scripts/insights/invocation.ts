/** `npm run insights` command line: the usage text and the options read. */
import { parseArgs } from 'node:util';
import { createKeys, type Keys } from '../../src/approvals/keys.ts';
import { AuditError, messageOf } from '../audit/audit-error.ts';
import { defaultFromEnv } from '../audit/invocation.ts';

export const USAGE = `usage: npm run insights -- [--agent <name>] [--since <date>] [--format md|json] [--min-plans <n>]
  what people's edits say about each agent's plans: how much they are edited (and the plans where
  more than half of the steps were added, changed or removed), the edits that recur with a
  suggestion each, and outcomes compared across steps the agent wrote and steps people changed or added
options:
  --agent <name>      only this agent
  --since <date>      runs submitted since then (default: 30 days ago), e.g. 2026-04-01
  --format md|json    Markdown for people (default) or JSON for tools
  --min-plans <n>     list an edit once it recurs in n edited plans (default 2)
  --config <file>     the countersign config, for field labels and money (default: COUNTERSIGN_CONFIG if set)
  --redis-url <url>   Redis to read (default: REDIS_URL, else redis://127.0.0.1:6379)
  --prefix <prefix>   key prefix (default: COUNTERSIGN_PREFIX, else cs)
Progress goes to stderr; the report to stdout.`;

export interface InsightsInvocation {
  readonly agent?: string;
  readonly since: number;
  readonly format: 'md' | 'json';
  readonly minPlans: number;
  readonly configPath?: string;
  readonly redisUrl: string;
  readonly keys: Keys;
}

const DAY_MS = 24 * 60 * 60 * 1000;

export function parseInsightsInvocation(argv: readonly string[], now: number): InsightsInvocation {
  let values: ReturnType<typeof parseCli>['values'];
  try {
    const parsed = parseCli(argv);
    if (parsed.positionals.length > 0)
      throw new Error(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
    values = parsed.values;
  } catch (error) {
    throw new AuditError(messageOf(error), 'usage');
  }
  const since = values.since === undefined ? now - 30 * DAY_MS : Date.parse(values.since);
  if (Number.isNaN(since))
    throw new AuditError(`--since ${JSON.stringify(values.since)} is not a date (try 2026-04-01)`, 'usage');
  const format = values.format ?? 'md';
  if (format !== 'md' && format !== 'json')
    throw new AuditError(`--format ${JSON.stringify(format)}: use md or json`, 'usage');
  const minPlans = values['min-plans'] === undefined ? 2 : Number(values['min-plans']);
  if (!Number.isSafeInteger(minPlans) || minPlans < 1)
    throw new AuditError(
      `--min-plans ${JSON.stringify(values['min-plans'])}: a whole number, 1 or more`,
      'usage',
    );
  const env = defaultFromEnv;
  let keys: Keys;
  try {
    keys = createKeys(values.prefix ?? env().COUNTERSIGN_PREFIX);
  } catch (error) {
    throw new AuditError(messageOf(error), 'usage');
  }
  const configPath = values.config ?? process.env.COUNTERSIGN_CONFIG;
  return {
    ...(values.agent === undefined ? {} : { agent: values.agent }),
    since,
    format,
    minPlans,
    ...(configPath === undefined || configPath === '' ? {} : { configPath }),
    redisUrl: values['redis-url'] ?? env().REDIS_URL,
    keys,
  };
}

function parseCli(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      agent: { type: 'string' },
      since: { type: 'string' },
      format: { type: 'string' },
      'min-plans': { type: 'string' },
      config: { type: 'string' },
      'redis-url': { type: 'string' },
      prefix: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
