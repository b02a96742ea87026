/**
 * A small benchmark harness: warm-up, repetitions, median and spread, a baseline measured in the same
 * process, and the ratio. Each benchmark returns rows; `run.ts` prints them and writes JSON.
 */

export interface BenchRow {
  readonly name: string;
  readonly unit: string;
  readonly value: number;
  readonly baseline: number | null;
  /** value / baseline (for throughput: higher is better; for latency: lower is better). */
  readonly ratio: number | null;
  readonly spread: number;
  readonly target: string;
  readonly pass: boolean;
}

export interface BenchOptions {
  readonly quick: boolean;
  readonly log: (line: string) => void;
}

export interface Benchmark {
  readonly name: string;
  run(options: BenchOptions): Promise<BenchRow[]>;
}

export interface Sample {
  readonly median: number;
  /** (max - min) / median over the repetitions. */
  readonly spread: number;
}

/** Median of a list of numbers. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** The p-th percentile (0..100) by nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? 0;
}

/**
 * Operations per second of a synchronous function against a baseline: a warm-up round each, then
 * `repetitions` short rounds alternating subject and baseline. The ratio is the median of the ratios of
 * adjacent rounds, so drift and noise from other processes (2 shared cores) hit both sides of a pair.
 */
export function compareThroughput(
  subject: () => void,
  baseline: () => void,
  options: { repetitions: number; durationMs: number },
): { subject: Sample; baseline: Sample; ratio: number } {
  const round = (fn: () => void, durationMs: number) => {
    let ops = 0;
    const start = performance.now();
    let elapsed = 0;
    while (elapsed < durationMs) {
      for (let i = 0; i < 50; i++) fn();
      ops += 50;
      elapsed = performance.now() - start;
    }
    return (ops / elapsed) * 1000;
  };
  round(subject, options.durationMs);
  round(baseline, options.durationMs);
  const subjectRates: number[] = [];
  const baselineRates: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < options.repetitions; i++) {
    // Alternate which side goes first so neither always follows the other's garbage.
    const first = i % 2 === 0 ? round(subject, options.durationMs) : round(baseline, options.durationMs);
    const second = i % 2 === 0 ? round(baseline, options.durationMs) : round(subject, options.durationMs);
    const [s, b] = i % 2 === 0 ? [first, second] : [second, first];
    subjectRates.push(s);
    baselineRates.push(b);
    ratios.push(s / b);
  }
  return { subject: sample(subjectRates), baseline: sample(baselineRates), ratio: median(ratios) };
}

function sample(values: readonly number[]): Sample {
  const mid = median(values);
  return { median: mid, spread: mid === 0 ? 0 : (Math.max(...values) - Math.min(...values)) / mid };
}

/** Runs `task` `count` times with at most `width` at once. */
export async function pool(count: number, width: number, task: () => Promise<void>): Promise<void> {
  let started = 0;
  const lane = async () => {
    while (started < count) {
      started++;
      await task();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, count) }, lane));
}
