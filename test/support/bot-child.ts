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
  /** Every line it wrote so far, stdout and stderr (stderr only when `logLevel` is given). */
  readonly lines: readonly string[];
  /** Resolves with the first line (from now on or already written) that matches. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

export interface BotChildOptions {
  readonly prefix: string;
  readonly port: number;
  readonly slackUrl: string;
  /** Default: the test harness's Redis. */
  readonly redisUrl?: string;
  /** Countersign's log level (default `error`); when given, stderr is captured in `lines` too. */
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** The child's clock runs this far ahead of this machine's (negative: behind). */
  readonly clockSkewMs?: number;
}

/**
 * Starts the bot; resolves once it listens. Every child started is in `children` (kill them after).
 * With `clockSkewMs` the child's clock runs that far ahead (negative: behind) of this machine's
 * (test/support/skewed-clock.ts).
 */
export async function startBotChild(options: BotChildOptions, children: ChildProcess[]): Promise<BotChild> {
  const capture = options.logLevel !== undefined;
  const skewed = options.clockSkewMs === undefined ? [] : ['--import', SKEWED_CLOCK];
  const spawned = spawn(process.execPath, ['--import', 'tsx', ...skewed, CHILD], {
    env: {
      ...process.env,
      REDIS_URL: options.redisUrl ?? redisUrl(),
      CS_PREFIX: options.prefix,
      SLACK_API_URL: options.slackUrl,
      PORT: String(options.port),
      ...(options.clockSkewMs === undefined ? {} : { CS_CLOCK_SKEW_MS: String(options.clockSkewMs) }),
      ...(capture ? { CS_LOG_LEVEL: options.logLevel } : {}),
    },
    stdio: ['ignore', 'pipe', capture ? 'pipe' : 'inherit'],
  });
  children.push(spawned);
  const written: string[] = [];
  const lines = new Set<(line: string) => void>();
  const splitLines = (stream: NodeJS.ReadableStream | null) => {
    let output = '';
    stream?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      for (let newline = output.indexOf('\n'); newline >= 0; newline = output.indexOf('\n')) {
        const line = output.slice(0, newline);
        output = output.slice(newline + 1);
        written.push(line);
        for (const listener of lines) listener(line);
      }
    });
  };
  splitLines(spawned.stdout);
  splitLines(spawned.stderr);
  const waitFor = (pattern: RegExp, timeoutMs = 20_000) =>
    new Promise<string>((resolve, reject) => {
      const already = written.find((line) => pattern.test(line));
      if (already !== undefined) return resolve(already);
      const timer = setTimeout(() => reject(new Error(`the bot never printed ${pattern}`)), timeoutMs);
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
  return { process: spawned, reconciled, lines: written, waitFor };
}
