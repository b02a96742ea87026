/**
 * Start a private, throw-away `redis-server` for tests, `npm run demo` and `npm run bench`.
 *
 * The server keeps everything in memory (`--save "" --appendonly no`), listens on 127.0.0.1 only, works in
 * its own temporary directory, and dies with this process: `stop()` shuts it down and removes the directory,
 * and an exit/signal hook kills any server still running when the process ends.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CountersignError } from '../pipeline/errors.ts';

/** Options for {@link startRedisServer}. */
export interface RedisServerOptions {
  /** Port to listen on; a free one is picked when omitted. */
  readonly port?: number;
  /** The redis-server executable (default `redis-server`, looked up on PATH). */
  readonly bin?: string;
  /** How long to wait for the server to start serving (default 10 s). */
  readonly startTimeoutMs?: number;
  /** Extra command-line arguments, e.g. `['--maxmemory', '64mb']`. */
  readonly extraArgs?: readonly string[];
}

/** A running private redis-server. */
export interface RedisServer {
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Shut the server down (SIGTERM, then SIGKILL after 5 s) and remove its directory. Idempotent. */
  stop(): Promise<void>;
}

/** Thrown when the redis-server executable cannot be found. */
export class RedisServerNotFoundError extends Error {
  readonly code = 'redis_server_not_found';
  constructor(bin: string) {
    super(
      `Cannot start a private Redis: '${bin}' was not found on PATH.\n` +
        'Install it with `apt-get install -y redis-server` (Debian/Ubuntu) or `brew install redis` (macOS),\n' +
        'or point the tests at an existing server with TEST_REDIS_URL=redis://host:port.',
    );
    this.name = 'RedisServerNotFoundError';
  }
}

/** Thrown when redis-server exits or stays silent during startup; the message carries its output. */
export class RedisServerStartError extends Error {
  readonly code = 'redis_server_start_failed';
  constructor(
    message: string,
    /** The last lines redis-server printed (stdout and stderr). */
    readonly output: string,
  ) {
    super(output ? `${message}\n--- redis-server output ---\n${output}` : message);
    this.name = 'RedisServerStartError';
  }
}

/** True for errors from {@link startRedisServer}. */
export function isRedisServerError(
  error: unknown,
): error is RedisServerNotFoundError | RedisServerStartError {
  return error instanceof RedisServerNotFoundError || error instanceof RedisServerStartError;
}

/**
 * Ask the OS for a free TCP port by binding port 0 and closing again. Another process may take the
 * port before it is reused, so callers should retry on "address in use" (startRedisServer does).
 */
export async function findFreePort(host = '127.0.0.1'): Promise<number> {
  const server = createServer();
  server.unref();
  server.listen(0, host);
  await once(server, 'listening');
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') {
    throw new CountersignError('environment', `could not determine a free port on ${host}`);
  }
  return address.port;
}

/**
 * Start a private redis-server and wait until it serves on its port.
 *
 * @example
 * const redis = await startRedisServer();
 * try { await useRedis(redis.url); } finally { await redis.stop(); }
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  // A port found free can be taken by someone else before redis binds it; try a few times.
  const attempts = options.port === undefined ? 3 : 1;
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await findFreePort());
    try {
      return await startOnPort(port, options);
    } catch (error) {
      const portTaken =
        error instanceof RedisServerStartError && /address already in use/i.test(error.output);
      if (!portTaken || attempt >= attempts) throw error;
    }
  }
}

const HOST = '127.0.0.1';
const OUTPUT_LIMIT = 8_000;

async function startOnPort(port: number, options: RedisServerOptions): Promise<RedisServer> {
  const bin = options.bin ?? 'redis-server';
  const dir = mkdtempSync(join(tmpdir(), 'countersign-redis-'));
  const args = [
    '--port',
    String(port),
    '--bind',
    HOST,
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--loglevel',
    'warning',
    ...(options.extraArgs ?? []),
  ];
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_LIMIT);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  // Settles only if the child fails to spawn or dies; 'close' comes after its output is fully read.
  const died = new Promise<Error>((resolve) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      resolve(error.code === 'ENOENT' ? new RedisServerNotFoundError(bin) : error);
    });
    child.once('close', (code, signal) => {
      resolve(
        new RedisServerStartError(
          `redis-server exited during startup (code ${code}, signal ${signal})`,
          output,
        ),
      );
    });
  });
  const removeDir = (): void => rmSync(dir, { recursive: true, force: true });
  track(child, dir);

  const timeoutMs = options.startTimeoutMs ?? 10_000;
  const giveUp = new AbortController();
  const outcome = await Promise.race([waitUntilServing(port, child.pid, timeoutMs, giveUp.signal), died]);
  giveUp.abort();
  if (outcome !== 'ready') {
    child.kill('SIGKILL');
    untrack(child);
    removeDir();
    throw outcome === 'timeout'
      ? new RedisServerStartError(
          `redis-server did not start serving on port ${port} within ${timeoutMs} ms`,
          output,
        )
      : outcome;
  }

  let stopping: Promise<void> | undefined;
  return {
    url: `redis://${HOST}:${port}`,
    port,
    stop() {
      stopping ??= stopChild(child).finally(() => {
        untrack(child);
        removeDir();
      });
      return stopping;
    },
  };
}

/**
 * Poll until the server on `port` answers and reports our child's pid. Checking the pid (not just PONG)
 * matters: if someone else grabbed the port, their server would answer while ours dies.
 */
async function waitUntilServing(
  port: number,
  pid: number | undefined,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<'ready' | 'timeout'> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !signal.aborted) {
    const servingPid = await serverPid(port);
    if (servingPid !== undefined && servingPid === pid) return 'ready';
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return 'timeout';
}

/** The `process_id` from `INFO server` over a raw RESP connection, or undefined if not (yet) serving. */
function serverPid(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: HOST, port });
    let reply = '';
    const finish = (pid: number | undefined): void => {
      socket.destroy();
      resolve(pid);
    };
    socket.setTimeout(500, () => finish(undefined));
    socket.once('error', () => finish(undefined));
    socket.once('close', () => finish(undefined));
    socket.once('connect', () => socket.write('*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n'));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('utf8');
      const pid = /process_id:(\d+)/.exec(reply)?.[1];
      if (pid !== undefined) finish(Number(pid));
      // An error reply such as "-LOADING" means "not yet".
      else if (reply.startsWith('-') && reply.includes('\r\n')) finish(undefined);
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exit = once(child, 'exit');
  // With no save points and no AOF, SIGTERM is a SHUTDOWN NOSAVE.
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  try {
    await exit;
  } finally {
    clearTimeout(timer);
  }
}

// --- kill children that outlive us ---------------------------------------------------------------
// A test runner killed by Ctrl-C or a crashing demo must not leave redis-servers behind. 'exit'
// handlers run for normal exits and process.exit(); signals need their own handlers, which re-raise
// the signal when nobody else listens, so the process still dies the way it would have.

const live = new Map<ChildProcess, string>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function killAll(): void {
  for (const [child, dir] of live) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
  live.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  killAll();
  if (process.listenerCount(signal) === 1) {
    unhook();
    process.kill(process.pid, signal);
  }
}

function hook(): void {
  process.on('exit', killAll);
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

function unhook(): void {
  process.off('exit', killAll);
  for (const signal of SIGNALS) process.off(signal, onSignal);
}

function track(child: ChildProcess, dir: string): void {
  if (live.size === 0) hook();
  live.set(child, dir);
}

function untrack(child: ChildProcess): void {
  if (!live.delete(child)) return;
  if (live.size === 0) unhook();
}
