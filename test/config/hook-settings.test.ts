/**
 * The config's hook settings: `defaults.hookTimeout` (a human duration, default 2 s, in the digest) and
 * who reviews a step whose hooks could not verify it (`defaults.unverifiedApprovers`, else the first
 * group that may write its tool) — a config where nobody could is refused at start.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ConfigInput, defineConfig, isConfigError } from '../../src/config/index.ts';
import { defineTool, text } from '../../src/pipeline/index.ts';

const lookup = defineTool({
  name: 'lookup',
  title: 'Look up delivery',
  effect: 'read',
  args: z.strictObject({ id: text() }),
  checks: async () => [],
});

const input: ConfigInput = {
  tools: [lookup],
  agents: { ops: { tools: ['lookup'], channel: 'C0OPS', secret: 'ops-secret-0123456789abcdef' } },
  groups: { operators: ['U0OP1'], leads: ['U0LEAD1'] },
  policy: [{ name: 'lookups', tool: 'lookup', route: 'auto' }],
  authoring: { operators: '*' },
};

function problems(config: ConfigInput): readonly string[] {
  try {
    defineConfig(config);
    return [];
  } catch (error) {
    if (!isConfigError(error)) throw error;
    return error.problems;
  }
}

describe('defaults.hookTimeout', () => {
  it('is 2 s unless set, and read as a human duration', () => {
    expect(defineConfig(input).pipeline.hookTimeoutMs).toBe(2_000);
    expect(defineConfig({ ...input, defaults: { hookTimeout: '500ms' } }).pipeline.hookTimeoutMs).toBe(500);
  });

  it('refuses at start a value that is not a duration, zero, or over a minute', () => {
    expect(problems({ ...input, defaults: { hookTimeout: 'soon' } })).toEqual([
      `defaults.hookTimeout: "soon" is not a duration (write it like '15m', '24h' or '1h30m')`,
    ]);
    expect(problems({ ...input, defaults: { hookTimeout: '0s' } })).toEqual([
      'defaults.hookTimeout: must be longer than zero',
    ]);
    expect(problems({ ...input, defaults: { hookTimeout: '5m' } })).toEqual([
      'defaults.hookTimeout: "5m" is longer than 1m (a plan waits for its slowest hook)',
    ]);
  });

  it('is in the config digest when set, and leaves the digest of configs that do not set it alone', () => {
    const plain = defineConfig(input).digest;
    expect(defineConfig({ ...input, defaults: {} }).digest).toBe(plain);
    const slow = defineConfig({ ...input, defaults: { hookTimeout: '5s' } }).digest;
    const fast = defineConfig({ ...input, defaults: { hookTimeout: '1s' } }).digest;
    expect(new Set([plain, slow, fast]).size).toBe(3);
  });
});

describe('who reviews an unverified step', () => {
  it('is defaults.unverifiedApprovers when set, which must be a known group', () => {
    expect(
      defineConfig({ ...input, defaults: { unverifiedApprovers: 'leads' } }).pipeline.unverifiedApprovers,
    ).toBe('leads');
    expect(problems({ ...input, defaults: { unverifiedApprovers: 'nobody' } })).toEqual([
      'defaults.unverifiedApprovers: unknown group "nobody"',
    ]);
  });

  it('is refused at start when an auto rule covers a hooked tool nobody may write and none is named', () => {
    expect(problems({ ...input, authoring: {} })).toEqual([
      'defaults.unverifiedApprovers: name the group that reviews a step whose hooks failed or timed out — rule lookups lets lookup (checks) through, and no group in authoring may write it (an unverified step is never let through)',
    ]);
    expect(problems({ ...input, authoring: {}, defaults: { unverifiedApprovers: 'leads' } })).toEqual([]);
    expect(
      problems({
        ...input,
        authoring: {},
        policy: [{ tool: 'lookup', route: 'review', approvers: 'leads' }],
      }),
    ).toEqual([]);
  });
});
