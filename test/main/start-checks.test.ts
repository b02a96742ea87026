/**
 * `npm start` refuses to start with everything that is missing listed at once — the Slack
 * credentials, Countersign's signing key, the agents' secrets — and a clear word for each, never a
 * stack trace.
 */
import { execFile, spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort, type RedisServer, startRedisServer } from '../../src/devtools/redis-server.ts';
import { createSlackEmulator, DEFAULT_BOT_TOKEN, type SlackEmulator } from '../../src/emulator/index.ts';

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'countersign-start-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs `src/main.ts` with exactly this environment (plus PATH); its exit code and output. */
async function start(env: Record<string, string>) {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', MAIN], {
      env: { PATH: process.env.PATH ?? '', ...env },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('npm start', () => {
  it('lists every missing piece at once: Slack credentials, the signing key, the agent’s secret', async () => {
    const result = await start({ REDIS_URL: `redis://127.0.0.1:${await findFreePort()}` });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('countersign: cannot start:');
    expect(result.stderr).toContain('SLACK_BOT_TOKEN is not set');
    expect(result.stderr).toContain('set SLACK_SIGNING_SECRET for the HTTP receiver, or SLACK_APP_TOKEN');
    expect(result.stderr).toContain('COUNTERSIGN_SIGNING_KEY is not set');
    expect(result.stderr).toContain('npm run keygen');
    expect(result.stderr).toContain('FREIGHT_AGENT_SECRET is not set');
    expect(result.stderr).toMatch(/Redis at redis:\/\/127\.0\.0\.1:\d+ is not reachable: .*ECONNREFUSED/);
    expect(result.stderr).not.toContain('listening');
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
  }, 40_000);

  it('names a signing key of the wrong kind', async () => {
    const rsa = join(scratch, 'rsa.pem');
    const { generateKeyPairSync } = await import('node:crypto');
    writeFileSync(
      rsa,
      generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }),
    );
    const result = await start({
      SLACK_BOT_TOKEN: 'xoxb-test',
      SLACK_SIGNING_SECRET: 'signing-secret',
      FREIGHT_AGENT_SECRET: 'freight-secret-0123456789',
      COUNTERSIGN_SIGNING_KEY_FILE: rsa,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/is an RSA key; Countersign signs with Ed25519/);
  }, 40_000);
});

/** Everything `npm start` needs but Redis: the Slack stand-in, a signing key, the agent's secret. */
let slack: SlackEmulator;
let base: Record<string, string>;
const servers: RedisServer[] = [];
beforeAll(async () => {
  slack = createSlackEmulator({ rateLimit: false });
  await slack.start();
  const key = join(scratch, 'signing.pem');
  writeFileSync(
    key,
    generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }) as string,
  );
  base = {
    SLACK_BOT_TOKEN: DEFAULT_BOT_TOKEN,
    SLACK_SIGNING_SECRET: 'signing-secret',
    SLACK_API_URL: slack.url,
    FREIGHT_AGENT_SECRET: 'freight-secret-0123456789',
    COUNTERSIGN_SIGNING_KEY_FILE: key,
    COUNTERSIGN_PREFIX: 'start-checks',
    PORT: '0',
  };
});
afterAll(async () => {
  for (const server of servers) await server.stop();
  await slack.stop();
});

async function redisWith(...extraArgs: string[]): Promise<RedisServer> {
  const server = await startRedisServer({ extraArgs });
  servers.push(server);
  return server;
}

describe('npm start checks Redis before it listens', () => {
  it('refuses a Redis that keeps nothing across a restart, naming the fix', async () => {
    const redis = await redisWith();
    const result = await start({ ...base, REDIS_URL: redis.url });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `Redis at ${redis.url} keeps nothing across a restart (AOF off, no RDB snapshots): runs and decisions would be lost; turn on appendonly yes (or a save schedule) or set COUNTERSIGN_ALLOW_VOLATILE_REDIS=1 for a throw-away setup`,
    );
    expect(result.stdout).not.toContain('listening');
  }, 40_000);

  it('refuses a Redis that evicts keys, and lists it with every other problem', async () => {
    const redis = await redisWith('--appendonly', 'yes', '--maxmemory-policy', 'allkeys-lru');
    const result = await start({ ...base, REDIS_URL: redis.url, FREIGHT_AGENT_SECRET: '' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `Redis at ${redis.url} evicts keys when full (maxmemory-policy allkeys-lru): set maxmemory-policy noeviction`,
    );
    expect(result.stderr).toContain('FREIGHT_AGENT_SECRET is not set');
    expect(result.stderr).not.toContain('keeps nothing');
  }, 40_000);

  it('names a config file that does not exist', async () => {
    const redis = await redisWith('--appendonly', 'yes');
    const result = await start({ ...base, REDIS_URL: redis.url, COUNTERSIGN_CONFIG: 'no/such/config.ts' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no/such/config.ts');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  }, 40_000);

  it('starts on a volatile Redis with COUNTERSIGN_ALLOW_VOLATILE_REDIS=1, and SIGTERM stops it within 10 s with Redis down', async () => {
    const redis = await redisWith();
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        ...base,
        REDIS_URL: redis.url,
        COUNTERSIGN_ALLOW_VOLATILE_REDIS: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.resume();
    const exited = once(child, 'exit');
    try {
      for (let waited = 0; !stdout.includes('listening'); waited += 50) {
        if (waited > 30_000) throw new Error(`never listened: ${stdout}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await redis.stop();
      const signalled = Date.now();
      child.kill('SIGTERM');
      const deadline = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
      clearTimeout(deadline);
      expect(signal).toBeNull(); // it exited by itself, not by the SIGKILL above
      expect(code).not.toBeNull();
      expect(Date.now() - signalled).toBeLessThan(10_000);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);
});
