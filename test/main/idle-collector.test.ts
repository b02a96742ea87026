import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startIdleCollector } from '../../src/composition.ts';

const MiB = 2 ** 20;

describe('startIdleCollector', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  /** A process whose CPU and heap the test moves by hand; `gc` drops the heap to `live`. */
  function fakeProcess() {
    const state = { cpu: 0, heap: 30 * MiB, live: 30 * MiB, collections: 0 };
    const stop = startIdleCollector({
      gc: () => {
        state.collections++;
        state.heap = state.live;
        state.cpu += 40; // a full collection takes CPU of its own
      },
      heapUsed: () => state.heap,
      cpuMs: () => state.cpu,
      everyMs: 1000,
    });
    /** One second passes with `cpuMs` used and `allocated` bytes allocated. */
    const second = (cpuMs: number, allocated = 0) => {
      state.cpu += cpuMs;
      state.heap += allocated;
      vi.advanceTimersByTime(1000);
    };
    return { state, stop, second };
  }

  it('collects twice once a burst is over, then not again while idle', () => {
    const { state, stop, second } = fakeProcess();
    for (let i = 0; i < 10; i++) second(600, 8 * MiB); // busy: 80 MiB allocated
    expect(state.collections).toBe(0);
    second(20); // the first quiet second
    expect(state.collections).toBe(1);
    expect(state.heap).toBe(30 * MiB);
    second(20); // the follow-up, for what finalizers freed
    expect(state.collections).toBe(2);
    for (let i = 0; i < 30; i++) second(20, 100_000); // idle, slow growth: 3 MiB
    expect(state.collections).toBe(2);
    stop();
  });

  it('never collects while busy, however much the heap grows', () => {
    const { state, stop, second } = fakeProcess();
    for (let i = 0; i < 60; i++) second(300, 16 * MiB);
    expect(state.collections).toBe(0);
    stop();
  });

  it('does not collect when the heap grew less than the threshold', () => {
    const { state, stop, second } = fakeProcess();
    for (let i = 0; i < 3; i++) second(600, 4 * MiB); // 12 MiB < 16
    for (let i = 0; i < 5; i++) second(10);
    expect(state.collections).toBe(0);
    stop();
  });

  it('a busy second between the two collections postpones the second to the next quiet one', () => {
    const { state, stop, second } = fakeProcess();
    second(600, 40 * MiB);
    second(10);
    expect(state.collections).toBe(1);
    second(500);
    expect(state.collections).toBe(1);
    second(10);
    expect(state.collections).toBe(2);
    stop();
  });

  it('stops looking once stopped', () => {
    const { state, stop, second } = fakeProcess();
    stop();
    second(600, 40 * MiB);
    second(10);
    expect(state.collections).toBe(0);
  });
});
