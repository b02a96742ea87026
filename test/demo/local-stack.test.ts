/**
 * `npm run local-stack` as a real child process: it prints one JSON line that agents can use as is,
 * serves the agent API and the stand-in's page, and stops everything — its redis-server too — on
 * SIGINT and SIGTERM within a few seconds.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createConnection } from 'node:net';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentClient } from '../../src/client/index.ts';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

interface Ready {
  url: string;
  agent: string;
  secret: string;
  gatewayAgent: string;
  gatewaySecret: string;
  page: string;
  redis: string;
}

async function startLocalStack(): Promise<{ child: ChildProcess; ready: Ready }> {
  const { REDIS_URL: _ignored, ...env } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/local-stack.ts'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  child.stderr?.resume();
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await once(lines, 'line')) as [string];
  return { child, ready: JSON.parse(line) as Ready };
}

/** Whether something accepts TCP connections at the URL's host and port. */
function listening(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('npm run local-stack', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)(
    'serves both agents and the stand-in page, and on %s exits within seconds with its redis-server gone',
    async (signal) => {
      const { child, ready } = await startLocalStack();
      for (const [agent, secret] of [
        [ready.agent, ready.secret],
        [ready.gatewayAgent, ready.gatewaySecret],
      ] as const) {
        const client = new AgentClient({ url: ready.url, agent, secret });
        const note = { tool: agent === ready.agent ? 'add_note' : 'mcp_call', args: {} };
        // A plan the server refuses at `type`, signed and answered: the agent and its secret work.
        await expect(client.submit({ steps: [note] })).rejects.toMatchObject({ checkedBy: 'server' });
        await client.close();
      }
      expect((await fetch(ready.page)).status).toBe(200);
      expect(await listening(ready.redis)).toBe(true);

      const started = Date.now();
      const exited = once(child, 'exit');
      child.kill(signal);
      await exited;
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await listening(ready.redis)).toBe(false);
      expect(await listening(ready.url)).toBe(false);
    },
    60_000,
  );
});
