/**
 * The bot alone in its own process, for end_to_end, slack_backpressure and gateway_latency: the real `startCountersign`
 * with the freight config. Env: REDIS_URL, CS_PREFIX, SLACK_API_URL (the parent's emulator),
 * SLACK_SIGNING_SECRET, PORT, AGENT_SECRET, and BENCH_CONFIG (optional: a name in `BENCH_CONFIGS`,
 * default `freight`). Sends `{ ready: true }` over IPC once listening; answers `'rss'` with its resident
 * set size in bytes, `'heap'` with V8's heap in use (garbage included) and `'cpu'` with the CPU time it
 * has used (user + system, ms); profiles a window on `{ profile: 'start' }` … `{ profile: 'stop', path }`
 * (a diagnosis); stops cleanly on `'stop'`
 * and exits.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { FREIGHT_AGENT } from '../examples/freight/plans.ts';
import { DEFAULT_BOT_TOKEN } from '../src/emulator/index.ts';
import { startCountersign } from '../src/main.ts';
import { BENCH_CONFIGS } from './bench-config.ts';
import { benchSigning } from './signing.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`bot-process: ${name} is not set`);
  return value;
};

const configName = process.env.BENCH_CONFIG ?? 'freight';
if (!Object.hasOwn(BENCH_CONFIGS, configName))
  throw new Error(
    `bot-process: BENCH_CONFIG ${configName} is none of ${Object.keys(BENCH_CONFIGS).join(', ')}`,
  );
const countersign = await startCountersign({
  config: BENCH_CONFIGS[configName as keyof typeof BENCH_CONFIGS],
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
  collectWhenIdle: true,
});
let profiler: Session | undefined;
process.on('message', (message) => {
  // A diagnosis, never a figure: a CPU profile of a window the parent chooses ({ profile: 'start' },
  // then { profile: 'stop', path }), written as a .cpuprofile.
  if (typeof message === 'object' && message !== null && 'profile' in message) {
    const { profile, path } = message as { profile: string; path?: string };
    void (async () => {
      if (profile === 'start') {
        profiler = new Session();
        profiler.connect();
        await profiler.post('Profiler.enable');
        await profiler.post('Profiler.start');
        process.send?.({ profiling: true });
      } else if (profiler !== undefined && path !== undefined) {
        const { profile: taken } = await profiler.post('Profiler.stop');
        writeFileSync(path, JSON.stringify(taken));
        profiler.disconnect();
        process.send?.({ profiled: path });
      }
    })();
  }
  if (message === 'rss') process.send?.({ rss: process.memoryUsage().rss });
  if (message === 'heap') process.send?.({ heap: process.memoryUsage().heapUsed });
  if (message === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send?.({ cpu: (user + system) / 1000 });
  }
  if (message === 'stop') {
    countersign.stop().then(
      () => process.disconnect(),
      (error: unknown) => {
        console.error('bot-process: stop failed:', error);
        process.exit(1);
      },
    );
  }
});
process.send?.({ ready: true });
