/**
 * The whole bot in a child process (test/support/countersign-child.ts), for tests that kill it with
 * SIGKILL and start it again: started on a given port against the test's Redis and Slack stand-in.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { redisUrl } from '../helpers/redis.ts';

const CHILD = fileURLToPath(new URL('./countersign-child.ts', import.meta.url));
const SKEWED_CLOCK = fileURLToPath(new URL('./skewed-clock.ts', import.meta.url));

export interface BotChild {
  readonly process: ChildProcess;
  /** The child's reconciliation line (`reconciled {…}`), once it prints it. */
  readonly reconciled: Promise<string>;
}

/**
 * Starts the bot; resolves once it listens. Every child started is in `children` (kill them after).
 * With `clockSkewMs` the child's clock runs that far ahead (negative: behind) of this machine's
 * (test/support/skewed-clock.ts).
 */
export async function startBotChild(
  options: {
    readonly prefix: string;
    readonly port: number;
    readonly slackUrl: string;
    readonly clockSkewMs?: number;
  },
  children: ChildProcess[],
): Promise<BotChild> {
  const skewed = options.clockSkewMs === undefined ? [] : ['--import', SKEWED_CLOCK];
  const spawned = spawn(process.execPath, ['--import', 'tsx', ...skewed, CHILD], {
    env: {
      ...process.env,
      REDIS_URL: redisUrl(),
      CS_PREFIX: options.prefix,
      SLACK_API_URL: options.slackUrl,
      PORT: String(options.port),
      ...(options.clockSkewMs === undefined ? {} : { CS_CLOCK_SKEW_MS: String(options.clockSkewMs) }),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(spawned);
  let output = '';
  const lines = new Set<(line: string) => void>();
  spawned.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
    for (let newline = output.indexOf('\n'); newline >= 0; newline = output.indexOf('\n')) {
      const line = output.slice(0, newline);
      output = output.slice(newline + 1);
      for (const listener of lines) listener(line);
    }
  });
  const waitFor = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the bot never printed ${pattern}`)), 20_000);
      const listener = (line: string) => {
        if (!pattern.test(line)) return;
        clearTimeout(timer);
        lines.delete(listener);
        resolve(line);
      };
      lines.add(listener);
      spawned.once('exit', (code, signal) => reject(new Error(`the bot exited (${code ?? signal})`)));
    });
  const reconciled = waitFor(/^reconciled /);
  reconciled.catch(() => {}); // a killed bot never prints it
  await waitFor(/^ready$/);
  return { process: spawned, reconciled };
}
