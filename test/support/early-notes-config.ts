/**
 * The freight config with notes that may run early: `add_note` is declared internal and the
 * `notes-auto` rule marks its steps `continue`, so a note is released as soon as the plan is
 * submitted (issue "Plans with dependencies").
 */
import { freightConfigInput } from '../../examples/freight/countersign.config.ts';
import { defineConfig } from '../../src/config/index.ts';

export function earlyNotesConfig() {
  return defineConfig({
    ...freightConfigInput,
    internalTools: ['add_note'],
    policy: freightConfigInput.policy.map((rule) =>
      rule.name === 'notes-auto' ? { ...rule, continue: true } : rule,
    ),
  });
}
