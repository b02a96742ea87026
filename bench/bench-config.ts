import { freightConfigInput } from '../examples/freight/countersign.config.ts';
import { defineConfig } from '../src/config/index.ts';

/**
 * The freight config with the agent's gateway rate limit raised out of the way: the default (600
 * requests a minute per agent) protects a deployment from a runaway agent, and a benchmark that
 * measures capacity would only measure that limit.
 */
export const benchConfig = defineConfig({
  ...freightConfigInput,
  defaults: { ...freightConfigInput.defaults, rateLimit: { requests: 10_000_000, per: '1m' } },
});

/** The freight agent's secret in every benchmark. */
export const BENCH_AGENT_SECRET = 'bench-freight-secret-0123456789';
/** Slack's signing secret in every benchmark. */
export const BENCH_SIGNING_SECRET = 'bench-signing-secret-0123456789abcdef';

/**
 * `benchConfig` without escalation: for a benchmark running longer than the first escalation (15
 * minutes), whose own storm would otherwise be joined by every pending run's escalation messages.
 */
export const benchConfigWithoutEscalation = defineConfig({
  ...freightConfigInput,
  escalation: {},
  defaults: { ...freightConfigInput.defaults, rateLimit: { requests: 10_000_000, per: '1m' } },
});

/** The configs `bench/bot-process.ts` can run with (env `BENCH_CONFIG`, default `freight`). */
export const BENCH_CONFIGS = {
  freight: benchConfig,
  'freight-without-escalation': benchConfigWithoutEscalation,
} as const;
