/**
 * The bot alone in its own process, for gateway_latency: as bench/bot-process.ts (the real
 * `startCountersign`, the freight config, the same env and IPC: `{ ready: true }`, `'rss'`, `'stop'`;
 * also `'heap'`: V8's heap in use, garbage included),
 * except that the freight agent's gateway rate limit is raised — the default (600 a minute per agent)
 * would refuse a 200 plans/s load and 5,000 long polls at once with 429s.
 */
import { freightConfigInput } from '../examples/freight/countersign.config.ts';
import { FREIGHT_AGENT } from '../examples/freight/plans.ts';
import { defineConfig } from '../src/config/index.ts';
import { DEFAULT_BOT_TOKEN } from '../src/emulator/index.ts';
import { startCountersign } from '../src/main.ts';
import { benchSigning } from './signing.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`gateway-bot-process: ${name} is not set`);
  return value;
};

const freightAgent = freightConfigInput.agents[FREIGHT_AGENT];
if (freightAgent === undefined) throw new Error(`gateway-bot-process: no ${FREIGHT_AGENT} in the config`);
const config = defineConfig({
  ...freightConfigInput,
  agents: {
    ...freightConfigInput.agents,
    [FREIGHT_AGENT]: { ...freightAgent, rateLimit: { requests: 10_000_000, per: '1m' } },
  },
});

const countersign = await startCountersign({
  config,
  secrets: { [FREIGHT_AGENT]: env('AGENT_SECRET') },
  signing: benchSigning(),
  redisUrl: env('REDIS_URL'),
  prefix: env('CS_PREFIX'),
  slack: {
    botToken: DEFAULT_BOT_TOKEN,
    signingSecret: env('SLACK_SIGNING_SECRET'),
    apiUrl: env('SLACK_API_URL'),
  },
  port: Number(env('PORT')),
  logLevel: 'error',
});
process.on('message', (message) => {
  if (message === 'rss') process.send?.({ rss: process.memoryUsage().rss });
  if (message === 'heap') process.send?.({ heap: process.memoryUsage().heapUsed });
  if (message === 'stop') {
    countersign.stop().then(
      () => process.disconnect(),
      (error: unknown) => {
        console.error('gateway-bot-process: stop failed:', error);
        process.exit(1);
      },
    );
  }
});
process.send?.({ ready: true });
