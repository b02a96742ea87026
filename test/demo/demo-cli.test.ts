import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { PageSnapshot } from '../../src/emulator/index.ts';
import { redisUrl } from '../helpers/redis.ts';

const DEMO = 'scripts/demo.ts';
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

interface RunningDemo {
  readonly child: ChildProcess;
  /** Everything printed so far (stdout and stderr). */
  output(): string;
  /** Resolves once the output matches. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  readonly exited: Promise<number | null>;
}

/** `npm run demo` as a child process (tsx, as the npm script runs it), with `env` on top of ours. */
function startDemoProcess(args: readonly string[], env: Record<string, string | undefined>): RunningDemo {
  const { REDIS_URL: _ignored, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', DEMO, ...args], {
    env: { ...inherited, DEMO_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  const waiters = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    for (const waiter of waiters) waiter();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited,
    waitFor(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output);
          if (match === null) return;
          finish();
          resolve(match);
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`the demo never printed ${pattern}; it printed:\n${output}`));
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        void exited.then(() => setTimeout(check, 50));
        check();
      });
    },
  };
}

/** Approves the freight card through the page's own endpoint, as Dana clicking Approve would. */
async function approveAsDana(pageUrl: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const state = (await (
      await fetch(new URL('/page/api/state?user=U0OP1', pageUrl))
    ).json()) as PageSnapshot;
    const card = state.messages.find((message) => message.channel === 'C0OPS');
    const actions = card?.blocks.find((block) => block.type === 'actions');
    const approve = (actions?.elements as { action_id: string; value: string }[] | undefined)?.find(
      (element) => element.action_id === 'approve',
    );
    if (card !== undefined && actions !== undefined && approve !== undefined) {
      const answer = await fetch(new URL('/page/api/action', pageUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          user: 'U0OP1',
          container: { type: 'message', channel: 'C0OPS', ts: card.ts },
          action: {
            type: 'button',
            actionId: 'approve',
            // The page names blocks without a block_id by position, as it draws them.
            blockId:
              typeof actions.block_id === 'string'
                ? actions.block_id
                : `block-${card.blocks.indexOf(actions)}`,
            text: 'Approve',
            value: approve.value,
            style: 'primary',
          },
        }),
      });
      expect(await answer.json()).toEqual({ ok: true, status: 200 });
      return;
    }
    if (Date.now() > deadline) throw new Error('the card never appeared on the page');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('npm run demo', () => {
  it('with --once and REDIS_URL: prints the page, the agent gets the approval made on it, verifies each step, exits 0 and leaves no keys', async () => {
    const url = redisUrl();
    const demo = startDemoProcess(['--once'], { REDIS_URL: url });
    const [, pageUrl = ''] = await demo.waitFor(/Open (http:\/\/127\.0\.0\.1:\d+\/)/);
    const [, prefix = ''] = await demo.waitFor(/keys under (demo-[0-9a-f]+):/);
    await demo.waitFor(/agent │ submitted run/);
    await approveAsDana(pageUrl);
    expect(await demo.exited).toBe(0);
    const output = demo.output();
    expect(output).toContain('agent │ decision: approved by U0OP1');
    for (const step of ['s1', 's2', 's3'])
      expect(output).toMatch(new RegExp(`agent │ {3}✓ ${step} verified`));
    const redis = new Redis(url);
    try {
      expect(await redis.keys(`${prefix}:*`)).toEqual([]);
    } finally {
      redis.disconnect();
    }
  }, 90_000);

  it('with --change-world: a dispatcher moves the delivery after the approval, before the agent checks its steps', async () => {
    const demo = startDemoProcess(['--once', '--change-world'], { REDIS_URL: redisUrl() });
    const [, pageUrl = ''] = await demo.waitFor(/Open (http:\/\/127\.0\.0\.1:\d+\/)/);
    await demo.waitFor(/agent │ submitted run/);
    await approveAsDana(pageUrl);
    expect(await demo.exited).toBe(0);
    const output = demo.output();
    expect(output).toContain('--change-world: after the approval a dispatcher moves the delivery');
    const decided = output.indexOf('agent │ decision: approved by U0OP1');
    const moved = output.indexOf(
      'world │ a dispatcher moved delivery dl_55120 to 2026-04-07 after the approval (version 7 → 8)',
    );
    expect(decided).toBeGreaterThan(0);
    expect(moved).toBeGreaterThan(decided);
    expect(output.indexOf('agent │   ✓ s1 verified')).toBeGreaterThan(moved);
    // The reschedule was approved at delivery version 7: the agent refuses to apply it at version 8.
    const refused = output.indexOf(
      'agent │   ✗ s2: not executing (world_changed: delivery dl_55120 changed since it was approved (version 7 → 8)',
    );
    expect(refused).toBeGreaterThan(moved);
    expect(output).not.toContain('✓ s2 verified');
  }, 90_000);

  it('with DEMO_EXIT_AFTER_DECISION=1 and no REDIS_URL: runs its own redis-server and removes it', async () => {
    const demo = startDemoProcess([], { DEMO_EXIT_AFTER_DECISION: '1' });
    const [, pageUrl = ''] = await demo.waitFor(/Open (http:\/\/127\.0\.0\.1:\d+\/)/);
    const [, redisPort = ''] = await demo.waitFor(/private redis-server at redis:\/\/127\.0\.0\.1:(\d+)/);
    await demo.waitFor(/agent │ submitted run/);
    await approveAsDana(pageUrl);
    expect(await demo.exited).toBe(0);
    expect(demo.output()).toContain('agent │ decision: approved by U0OP1');
    const probe = new Redis(Number(redisPort), '127.0.0.1', { lazyConnect: true, retryStrategy: () => null });
    probe.on('error', () => {}); // the refusal is the point
    await expect(probe.connect()).rejects.toThrow();
    probe.disconnect();
  }, 90_000);

  it('with DEMO_EXPIRES_IN and DEMO_ESCALATE_AFTER: escalates and expires in seconds, and its audit command works as printed', async () => {
    const demo = startDemoProcess(['--once'], {
      REDIS_URL: redisUrl(),
      DEMO_EXPIRES_IN: '12s',
      DEMO_ESCALATE_AFTER: '2s',
    });
    const [command = ''] = await demo.waitFor(
      /REDIS_URL=\S+ COUNTERSIGN_PREFIX=\S+ npm run audit -- show \S+/,
    );
    const [, env = '', runId = ''] = /^(.*) npm run audit -- show (\S+)$/.exec(command) ?? [];
    const vars = Object.fromEntries(env.split(' ').map((pair) => pair.split('=') as [string, string]));
    let shown = '';
    for (let tries = 0; !/escalated/.test(shown) && tries < 40; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      shown = (await runAudit(['show', runId], vars)).stdout;
    }
    expect(shown).toMatch(/escalated/);
    expect(await demo.exited).toBe(0);
    expect(demo.output()).toContain('agent │ decision: expired');
  }, 90_000);

  it('refuses a DEMO_ESCALATE_AFTER that is not a duration, in its own terms', async () => {
    const demo = startDemoProcess(['--once'], { REDIS_URL: redisUrl(), DEMO_ESCALATE_AFTER: 'soon' });
    expect(await demo.exited).toBe(2);
    expect(demo.output()).toContain(
      'DEMO_ESCALATE_AFTER must be a duration of 1s or more, such as 1m or 30s; got "soon"',
    );
  }, 60_000);

  it('says how to install Redis when redis-server is missing', async () => {
    const demo = startDemoProcess(['--once'], { PATH: '/nonexistent' });
    expect(await demo.exited).toBe(1);
    expect(demo.output()).toContain('redis-server was not found on PATH');
    expect(demo.output()).toContain('apt-get install -y redis-server');
  }, 60_000);
});

/** `npm run audit` as the demo prints it: its arguments, with exactly these variables (and PATH). */
function runAudit(
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/audit.ts', ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 },
      (error, stdout) => resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout }),
    );
  });
}
