import config from '../../examples/freight/countersign.config.ts';
import { freightPlan } from '../../examples/freight/plans.ts';
import type { ValidationContext } from '../../src/pipeline/index.ts';

/** A fixed instant for tests: 1 April 2026, 10:00 UTC. */
export const NOW = Date.parse('2026-04-01T10:00:00Z');

export const freightConfig = config;

/** The validation context of the freight example at NOW. */
export function freightContext(overrides: Partial<ValidationContext> = {}): ValidationContext {
  return { config: config.pipeline, now: NOW, ...overrides };
}

/** A fresh copy of the 3-step freight plan envelope. */
export function plan(overrides: Record<string, unknown> = {}) {
  return { ...freightPlan({ now: NOW }), ...overrides };
}
