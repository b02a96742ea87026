/**
 * The bot (bench/bot-process.ts) and other measured servers (bench/bare-gateway.ts) in child processes
 * of their own, so the Slack emulator, the agent client and the clicks in the benchmark process do not
 * share their event loop. They run **as deployed**: compiled to JavaScript (the product and these entry
 * points, tsconfig.bench.json → bench/.build/, once per benchmark process) and started with the Node
 * flags of `npm start`.
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compile, PROJECT_ROOT } from '../scripts/compile.ts';

export interface BenchChild {
  /** The child's resident set size, bytes. */
  rss(): Promise<number>;
  /** V8's heap in use, garbage included. */
  heap(): Promise<number>;
  /** CPU time it has used so far (user + system), ms. */
  cpu(): Promise<number>;
  /** Stops it cleanly (SIGKILL after 15 s). */
  stop(): Promise<void>;
  /**
   * A diagnosis, never a figure (bench/bot-process.ts only): starts V8's CPU profiler in the child; the returned function stops
   * it and writes the window's profile to `path` (a .cpuprofile, for Chrome's DevTools or speedscope).
   */
  profile(): Promise<(path: string) => Promise<void>>;
}

/** The bot's child process. */
export type BotProcess = BenchChild;

const BUILD_DIR = 'bench/.build';
let built = false;

/** Compiles the product and the benchmark's entry points once per process. */
function ensureBuilt(): void {
  if (built) return;
  process.stderr.write('bench: compiling the bot as deployed (tsconfig.bench.json → bench/.build/)…\n');
  compile('tsconfig.bench.json', BUILD_DIR);
  built = true;
}

/** The Node flags `npm start` runs the compiled bot with (`node <flags> dist/src/main.js`). */
export function startFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const match = /^node (.+) dist\/src\/main\.js$/.exec(pkg.scripts.start);
  if (match?.[1] === undefined)
    throw new Error(`bench: cannot read node flags from the start script "${pkg.scripts.start}"`);
  return match[1].split(' ');
}

/**
 * `bench/<name>.ts`, compiled, in a child process with `npm start`'s flags, ready once it sends
 * `{ ready: true }` over IPC; it answers `'rss'`, `'heap'` and `'cpu'` and stops on `'stop'`.
 */
export async function startBenchChild(
  name: 'bot-process' | 'bare-gateway',
  env: Readonly<Record<string, string>>,
): Promise<BenchChild> {
  ensureBuilt();
  const child = fork(join(PROJECT_ROOT, BUILD_DIR, 'bench', `${name}.js`), {
    env: { ...process.env, ...env },
    // BENCH_NODE_FLAGS adds flags for a diagnosis (`--cpu-prof --cpu-prof-dir=…`), never for a figure.
    execArgv: [...startFlags(), ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean)],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const reply = <T>(pick: (message: unknown) => T | undefined, what: string) =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`bench: ${name}: no ${what}`)), 30_000);
      const onExit = (code: number | null) =>
        reject(new Error(`bench: ${name} exited (${code}) before ${what}`));
      const onMessage = (message: unknown) => {
        const value = pick(message);
        if (value === undefined) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit); // one listener per question, gone once answered
        resolve(value);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const field = (key: string) => (message: unknown) =>
    typeof message === 'object' && message !== null && key in message
      ? (message as Record<string, unknown>)[key]
      : undefined;
  const ask = async (key: 'rss' | 'heap' | 'cpu') => {
    const answer = reply(field(key), key);
    child.send(key);
    return Number(await answer);
  };
  await reply(field('ready'), 'ready');
  const profile = async () => {
    const started = reply(field('profiling'), 'profiling');
    child.send({ profile: 'start' });
    await started;
    return async (path: string) => {
      const written = reply(field('profiled'), 'profiled');
      child.send({ profile: 'stop', path });
      await written;
    };
  };
  return {
    profile,
    rss: () => ask('rss'),
    heap: () => ask('heap'),
    cpu: () => ask('cpu'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.send('stop');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The bot in a child process (bench/bot-process.ts), run as `npm start` runs it, ready once it listens. */
export function startBotProcess(env: Readonly<Record<string, string>>): Promise<BenchChild> {
  return startBenchChild('bot-process', env);
}
