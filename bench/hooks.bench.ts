import config from '../examples/freight/countersign.config.ts';
import { freightPlan5 } from '../examples/freight/plans.ts';
import { type ChangeSet, type ToolDefinition, validate } from '../src/pipeline/index.ts';
import type { Benchmark } from './harness.ts';
import { median } from './harness.ts';

const SOURCE_MS = 20;

/** A data source that answers after 20 ms (a freight API read), as a hook would await it. */
const slowRead = () => new Promise<void>((resolve) => setTimeout(resolve, SOURCE_MS));

/** Each freight tool with a `preview` and a `checks` that first wait on the slow data source. */
function withSlowHooks(tool: ToolDefinition): ToolDefinition {
  const checks = tool.checks;
  return {
    ...tool,
    checks: async (args, ctx) => {
      await slowRead();
      return checks === undefined ? [] : checks(args, ctx);
    },
    preview: async (_args, ctx): Promise<ChangeSet> => {
      await slowRead();
      return {
        target: { type: 'ticket', id: ctx.stepId, version: '1' },
        changes: [],
        related: [],
        invariants: [],
      };
    },
  };
}

/**
 * pipeline_hooks: wall time of one `validate` of the 5-step freight plan when every step's `checks`
 * and `preview` each await a 20 ms data source (issue 19). The hooks run in parallel, so the plan
 * costs about one read, not ten; the baseline is what the reads would cost one after another.
 */
export const hooksBenchmark: Benchmark = {
  name: 'pipeline_hooks',
  async run({ quick, log }) {
    const now = Date.now();
    const text = JSON.stringify(freightPlan5({ now }));
    const pipeline = {
      ...config.pipeline,
      tools: new Map([...config.pipeline.tools].map(([name, tool]) => [name, withSlowHooks(tool)])),
    };
    const ctx = { config: pipeline, now };
    const steps = freightPlan5({ now }).steps.length;
    const check = await validate(text, ctx);
    if (!check.ok || check.plan.steps.some((step) => step.unverified !== undefined)) {
      throw new Error(`benchmark plan does not validate cleanly: ${JSON.stringify(check)}`);
    }
    log(`pipeline_hooks: validate with a ${SOURCE_MS} ms data source per hook, ${steps} steps …`);
    const times: number[] = [];
    for (let i = 0; i < (quick ? 10 : 30); i++) {
      const start = performance.now();
      await validate(text, ctx);
      times.push(performance.now() - start);
    }
    const value = median(times);
    const serial = steps * 2 * SOURCE_MS;
    return [
      {
        name: 'pipeline_hooks',
        unit: 'ms',
        value: Math.round(value * 10) / 10,
        baseline: serial,
        ratio: Math.round((value / serial) * 100) / 100,
        spread: (Math.max(...times) - Math.min(...times)) / value,
        target: '< 60 ms',
        pass: value < 60,
      },
    ];
  },
};
