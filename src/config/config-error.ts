import { CountersignError } from '../pipeline/errors.ts';

/** Raised at start for a configuration that cannot work; lists every problem, not only the first. */
export class ConfigError extends CountersignError {
  override readonly name = 'ConfigError';
  declare readonly code: 'invalid_config';
  constructor(readonly problems: readonly string[]) {
    super('invalid_config', `invalid Countersign config:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export function isConfigError(error: unknown): error is ConfigError {
  return error instanceof ConfigError;
}
