/**
 * The whole bot in its own process, for the restart test (test/bot/timers-restart.test.ts): the real
 * `startCountersign` with the timers test config. Env: REDIS_URL, CS_PREFIX, SLACK_API_URL (the
 * parent's emulator), PORT, and CS_LOG_LEVEL (default `error`). Prints `ready` once listening, then
 * `reconciled <summary JSON>`; everything else on stdout is Countersign's log.
 */
import { FREIGHT_AGENT } from '../../examples/freight/plans.ts';
import { DEFAULT_BOT_TOKEN } from '../../src/emulator/index.ts';
import type { LogLevel } from '../../src/log.ts';
import { startCountersign } from '../../src/main.ts';
import { SIGNING_SECRET } from './bot-stack.ts';
import { FREIGHT_SECRET, testSigning } from './stack.ts';
import { timersConfig } from './timers-config.ts';

const countersign = await startCountersign({
  config: timersConfig,
  secrets: { [FREIGHT_AGENT]: FREIGHT_SECRET },
  signing: testSigning,
  redisUrl: process.env.REDIS_URL ?? '',
  prefix: process.env.CS_PREFIX ?? '',
  slack: {
    botToken: DEFAULT_BOT_TOKEN,
    signingSecret: SIGNING_SECRET,
    apiUrl: process.env.SLACK_API_URL ?? '',
  },
  port: Number(process.env.PORT ?? '0'),
  logLevel: logLevelOf(process.env.CS_LOG_LEVEL),
  guardProcess: true,
});
process.stdout.write('ready\n');
process.stdout.write(`reconciled ${JSON.stringify(await countersign.reconciled)}\n`);

function logLevelOf(text: string | undefined): LogLevel {
  return text === 'debug' || text === 'info' || text === 'warn' ? text : 'error';
}
