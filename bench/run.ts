/**
 * `npm run bench [-- --quick] [-- names…]`: runs the benchmarks, prints a markdown table and writes
 * bench/results/latest.json. See bench/README.md for what each figure means.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { endToEndBenchmark } from './end-to-end.bench.ts';
import { gatewayBenchmark } from './gateway.bench.ts';
import { gatewayLatencyBenchmark } from './gateway-latency.bench.ts';
import type { Benchmark, BenchRow } from './harness.ts';
import { hooksBenchmark } from './hooks.bench.ts';
import { interactionBenchmark } from './interaction.bench.ts';
import { pipelineBenchmark } from './pipeline.bench.ts';
import { slackBackpressureBenchmark } from './slack-backpressure.bench.ts';
import { timersBenchmark } from './timers.bench.ts';

const benchmarks: readonly Benchmark[] = [
  pipelineBenchmark,
  hooksBenchmark,
  gatewayBenchmark,
  interactionBenchmark,
  timersBenchmark,
  endToEndBenchmark,
  slackBackpressureBenchmark,
  gatewayLatencyBenchmark,
];

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const only = args.filter((arg) => !arg.startsWith('--'));
  const unknown = only.filter((name) => !benchmarks.some((b) => b.name === name));
  if (unknown.length > 0) {
    console.error(
      `unknown benchmark(s): ${unknown.join(', ')}; known: ${benchmarks.map((b) => b.name).join(', ')}`,
    );
    process.exitCode = 2;
    return;
  }
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const rows: BenchRow[] = [];
  for (const benchmark of benchmarks) {
    if (only.length > 0 && !only.includes(benchmark.name)) continue;
    rows.push(...(await benchmark.run({ quick, log })));
  }
  console.log(table(rows));
  const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'latest.json');
  await mkdir(dirname(out), { recursive: true });
  await writeFile(
    out,
    `${JSON.stringify({ at: new Date().toISOString(), quick, node: process.version, rows }, null, 2)}\n`,
  );
  log(`wrote ${out}`);
}

function table(rows: readonly BenchRow[]): string {
  const fmt = (n: number | null, digits = 0) =>
    n === null ? '—' : n.toLocaleString('en-US', { maximumFractionDigits: digits });
  const lines = [
    '| benchmark | value | baseline | ratio | spread | target | pass |',
    '| --- | ---: | ---: | ---: | ---: | --- | :---: |',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${fmt(r.value, 2)} ${r.unit} | ${fmt(r.baseline, 2)} | ${fmt(r.ratio, 2)} | ±${(r.spread * 50).toFixed(0)}% | ${r.target} | ${r.pass ? '✅' : '❌'} |`,
    ),
  ];
  return lines.join('\n');
}

await main();
