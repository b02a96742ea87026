/**
 * The whole bot in its own process, for the restart test (test/bot/timers-restart.test.ts): the real
 * `startCountersign` with the timers test config. Env: REDIS_URL, CS_PREFIX, SLACK_API_URL (the
 * parent's emulator), PORT. Prints `ready` once listening, then `reconciled <summary JSON>`.
 */
import { FREIGHT_AGENT } from '../../examples/freight/plans.ts';
import { DEFAULT_BOT_TOKEN } from '../../src/emulator/index.ts';
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
  logLevel: 'error',
  guardProcess: true,
});
process.stdout.write('ready\n');
process.stdout.write(`reconciled ${JSON.stringify(await countersign.reconciled)}\n`);
