/** Groups configured as Slack user groups: accepted, checked, digested by id, empty until read. */
import { describe, expect, it } from 'vitest';
import { freightConfigInput } from '../../examples/freight/countersign.config.ts';
import { defineConfig, isConfigError } from '../../src/config/define-config.ts';
import type { ConfigInput } from '../../src/config/index.ts';

const withOperators = (operators: ConfigInput['groups'][string]): ConfigInput => ({
  ...freightConfigInput,
  groups: { ...freightConfigInput.groups, operators },
});

function problemsOf(input: ConfigInput): readonly string[] {
  try {
    defineConfig(input);
  } catch (error) {
    if (isConfigError(error)) return error.problems;
    throw error;
  }
  return [];
}

describe('groups from Slack user groups', () => {
  it('starts such a group empty, one list shared by approvals, the pipeline and escalation levels naming it', () => {
    const config = defineConfig(withOperators({ usergroup: 'S0OPS' }));
    expect(config.usergroups).toEqual({ operators: 'S0OPS' });
    expect(config.groups.operators).toEqual([]);
    expect(config.pipeline.groups.operators).toBe(config.groups.operators);
    // Other groups stay the configured ids.
    expect(config.groups.finance).toEqual(['U0FIN1', 'U0FIN2', 'U0FIN3']);
  });

  it('refuses an id that is not a user group id, in the config’s words', () => {
    expect(problemsOf(withOperators({ usergroup: 'U0OP1' })).join('\n')).toMatch(
      /groups\.operators.*must be a Slack user group id such as S0FIN/,
    );
  });

  it('digests the user group id, not members it does not know yet', () => {
    const a = defineConfig(withOperators({ usergroup: 'S0OPS' }));
    const b = defineConfig(withOperators({ usergroup: 'S0OTHER' }));
    expect(a.digest).not.toBe(b.digest);
    expect(defineConfig(withOperators({ usergroup: 'S0OPS' })).digest).toBe(a.digest);
  });
});
