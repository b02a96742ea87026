import { describe, expect, it } from 'vitest';
import { periodicWork } from '../../src/composition.ts';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('periodicWork', () => {
  it('never runs a task beside itself, and close() waits for the one running', async () => {
    const errors: string[] = [];
    const work = periodicWork((_error, context) => errors.push(context));
    let running = 0;
    let most = 0;
    let finished = 0;
    let release: () => void = () => {};
    work.every(5, 'sweep', async () => {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      running--;
      finished++;
    });
    await tick(40); // eight intervals while the first run is still busy
    expect(most).toBe(1);
    let closed = false;
    const closing = work.close().then(() => {
      closed = true;
    });
    await tick(10);
    expect(closed).toBe(false); // still waiting for the running sweep
    expect(work.closed()).toBe(true);
    release();
    await closing;
    expect(finished).toBe(1);
    await tick(20);
    expect(finished).toBe(1); // no run after close
    expect(errors).toEqual([]);
  });

  it('reports a failing task with its name and runs it again next time', async () => {
    const errors: string[] = [];
    const work = periodicWork((error, context) =>
      errors.push(`${context}: ${error instanceof Error ? error.message : String(error)}`),
    );
    let calls = 0;
    work.every(5, 'expiry sweep', async () => {
      calls++;
      throw new Error('Redis is down');
    });
    await tick(30);
    await work.close();
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(errors[0]).toBe('expiry sweep: Redis is down');
    work.run('expiry sweep', async () => {
      calls += 100;
    });
    expect(calls).toBeLessThan(100); // closed: nothing new starts
  });
});
