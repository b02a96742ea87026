/** Durations in a config (`'15m'`, `'24h'`) read to milliseconds, and the defaults that use them. */
import { parseDuration } from '../pipeline/duration.ts';
import type { ConfigInput, CountersignConfig, RateLimit, RateLimitInput } from './config-types.ts';

/** Milliseconds of the duration at `where` (`fallback` when absent), or 0 after recording a problem. */
export type DurationReader = (where: string, text: string | undefined, fallback: string) => number;

/** A reader that records unreadable and zero durations into `problems`. */
export function durationReader(problems: string[]): DurationReader {
  return (where, text, fallback) => {
    const ms = parseDuration(text ?? fallback);
    if (ms === undefined) {
      problems.push(
        `${where}: ${JSON.stringify(text)} is not a duration (write it like '15m', '24h' or '1h30m')`,
      );
      return 0;
    }
    if (ms === 0) problems.push(`${where}: must be longer than zero`);
    return ms;
  };
}

/** Each agent's gateway rate unless configured: 600 requests a minute (10 a second), per process. */
export const DEFAULT_RATE_LIMIT: RateLimit = { requests: 600, perMs: 60_000 };

/** `defaults` and each agent's own `expiresIn`, resolved; none may be longer than `maxExpiresIn`. */
export function resolveDefaults(
  input: ConfigInput,
  duration: DurationReader,
  problems: string[],
): CountersignConfig['defaults'] {
  const defaults = {
    expiresInMs: duration('defaults.expiresIn', input.defaults?.expiresIn, '24h'),
    maxExpiresInMs: duration('defaults.maxExpiresIn', input.defaults?.maxExpiresIn, '7d'),
    uncertainAfterMs: duration('defaults.uncertainAfter', input.defaults?.uncertainAfter, '15m'),
  };
  if (defaults.expiresInMs > defaults.maxExpiresInMs) {
    problems.push('defaults: expiresIn is longer than maxExpiresIn');
  }
  const agentExpiresInMs: Record<string, number> = {};
  for (const [agent, spec] of Object.entries(input.agents)) {
    if (spec.expiresIn === undefined) continue;
    const ms = duration(`agents.${agent}.expiresIn`, spec.expiresIn, '');
    if (ms > defaults.maxExpiresInMs) problems.push(`agents.${agent}.expiresIn: is longer than maxExpiresIn`);
    agentExpiresInMs[agent] = ms;
  }
  const rate = (where: string, input: RateLimitInput | undefined): RateLimit =>
    input === undefined
      ? DEFAULT_RATE_LIMIT
      : { requests: input.requests, perMs: duration(`${where}.per`, input.per, '') };
  const agentRateLimits: Record<string, RateLimit> = {};
  for (const [agent, spec] of Object.entries(input.agents)) {
    if (spec.rateLimit !== undefined)
      agentRateLimits[agent] = rate(`agents.${agent}.rateLimit`, spec.rateLimit);
  }
  return {
    ...defaults,
    agentExpiresInMs,
    rateLimit: rate('defaults.rateLimit', input.defaults?.rateLimit),
    agentRateLimits,
  };
}
