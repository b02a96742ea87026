import { z } from 'zod';
import config from '../examples/freight/countersign.config.ts';
import { freightPlan5 } from '../examples/freight/plans.ts';
import { gatherHooks, sha256Hex, validateWith } from '../src/pipeline/index.ts';
import type { Benchmark } from './harness.ts';
import { compareThroughput } from './harness.ts';

/**
 * pipeline: plans/second through the pure phases (parse → resolve → type → authorize, digests, freeze:
 * `validateWith`, the hooks' results gathered once beforehand — the re-check a commit attempt runs) on
 * the 5-step freight plan, against a baseline of what any service would do anyway: `JSON.parse`, a
 * zod parse of an equivalent schema, and one SHA-256 of `JSON.stringify`. Hooks that wait on other
 * systems are measured by `pipeline_hooks` (hooks.bench.ts).
 */
export const pipelineBenchmark: Benchmark = {
  name: 'pipeline',
  async run({ quick, log }) {
    const now = Date.now();
    const text = JSON.stringify(freightPlan5({ now }));
    const ctx = { config: config.pipeline, now };
    const hooks = await gatherHooks(text, ctx);
    const check = validateWith(text, ctx, hooks);
    if (!check.ok) throw new Error(`benchmark plan does not validate: ${JSON.stringify(check.diagnostics)}`);

    const equivalentSchema = z.strictObject({
      runId: z.string(),
      agent: z.string(),
      summary: z.string().optional(),
      context: z.record(z.string(), z.json()).optional(),
      expiresAt: z.iso.datetime(),
      steps: z.array(
        z.strictObject({
          id: z.string(),
          tool: z.string(),
          args: z.union([...config.pipeline.tools.values()].map((tool) => tool.args)),
        }),
      ),
    });
    const baseline = () => {
      const parsed = equivalentSchema.parse(JSON.parse(text));
      sha256Hex(JSON.stringify(parsed));
    };
    const subject = () => {
      validateWith(text, ctx, hooks);
    };
    log('pipeline: measuring validate vs JSON.parse + zod + sha256 …');
    const result = compareThroughput(
      subject,
      baseline,
      quick ? { repetitions: 6, durationMs: 150 } : { repetitions: 20, durationMs: 250 },
    );
    const { ratio } = result;
    return [
      {
        name: 'pipeline',
        unit: 'plans/s',
        value: Math.round(result.subject.median),
        baseline: Math.round(result.baseline.median),
        ratio,
        spread: result.subject.spread,
        target: '≥ 0.5 × baseline',
        pass: ratio >= 0.5,
      },
    ];
  },
};
