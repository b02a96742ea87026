/**
 * The bot in a child process of its own (bench/bot-process.ts), so the Slack emulator, the agent client
 * and the clicks in the benchmark process do not share its event loop.
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface BotProcess {
  /** The child's resident set size, bytes. */
  rss(): Promise<number>;
  /** Stops it cleanly (SIGKILL after 15 s). */
  stop(): Promise<void>;
}

/**
 * The Node flags the bot runs with, read from package.json's `dev` script (`node <flags> src/main.ts`,
 * the same flags as `start`, which runs the compiled build). The measured process runs the sources
 * through tsx, not dist/: its RSS includes tsx's compiled-module cache.
 */
function startFlags(): string[] {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    scripts: { dev: string };
  };
  const match = /^node (.+) src\/main\.ts$/.exec(pkg.scripts.dev);
  if (match?.[1] === undefined)
    throw new Error(`bot process: cannot read node flags from "${pkg.scripts.dev}"`);
  return match[1].split(' ');
}

/** The bot in a child process (bench/bot-process.ts), run as `npm start` runs it, ready once it listens. */
export async function startBotProcess(env: Readonly<Record<string, string>>): Promise<BotProcess> {
  const child = fork(fileURLToPath(new URL('./bot-process.ts', import.meta.url)), {
    env: { ...process.env, ...env },
    execArgv: startFlags(),
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const reply = <T>(pick: (message: unknown) => T | undefined, what: string) =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`bot process: no ${what}`)), 30_000);
      const onMessage = (message: unknown) => {
        const value = pick(message);
        if (value === undefined) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve(value);
      };
      child.on('message', onMessage);
      child.once('exit', (code) => reject(new Error(`bot process: exited (${code}) before ${what}`)));
    });
  const field = (name: string) => (message: unknown) =>
    typeof message === 'object' && message !== null && name in message
      ? (message as Record<string, unknown>)[name]
      : undefined;
  await reply(field('ready'), 'ready');
  return {
    async rss() {
      const answer = reply(field('rss'), 'rss');
      child.send('rss');
      return Number(await answer);
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.send('stop');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
