import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { installShutdownHandlers } from '../../src/queue/index.ts';

function harness() {
  const emitter = new EventEmitter();
  const calls: string[] = [];
  const exits: number[] = [];
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const uninstall = installShutdownHandlers(
    [
      async () => {
        calls.push('worker:start');
        await gate;
        calls.push('worker:closed');
      },
      async () => {
        calls.push('redis:quit');
      },
    ],
    {
      emitter: emitter as unknown as Pick<NodeJS.Process, 'on' | 'off'>,
      exit: (code) => exits.push(code),
      log: () => {},
    },
  );
  return { emitter, calls, exits, release, uninstall };
}

describe('graceful shutdown', () => {
  it('closes the worker before the connections on SIGTERM, then exits 0', async () => {
    const { emitter, calls, exits, release } = harness();
    emitter.emit('SIGTERM', 'SIGTERM');
    expect(calls).toEqual(['worker:start']);
    release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(calls).toEqual(['worker:start', 'worker:closed', 'redis:quit']);
    expect(exits).toEqual([0]);
  });

  it('exits at once with 1 on a second signal while closing', () => {
    const { emitter, exits } = harness();
    emitter.emit('SIGINT', 'SIGINT');
    emitter.emit('SIGTERM', 'SIGTERM');
    expect(exits).toEqual([1]);
  });

  it('does nothing once uninstalled', () => {
    const { emitter, calls, uninstall } = harness();
    uninstall();
    expect(emitter.listenerCount('SIGTERM')).toBe(0);
    expect(calls).toEqual([]);
  });
});
