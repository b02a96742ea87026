import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from './config-error.ts';
import type { CountersignConfig } from './config-types.ts';

/**
 * Imports a `countersign.config.ts` and checks that its default export came from `defineConfig`.
 * Relative paths resolve against the working directory.
 */
export async function loadConfig(path: string): Promise<CountersignConfig> {
  const url = pathToFileURL(resolve(path)).href;
  let module: { default?: unknown };
  try {
    module = (await import(url)) as { default?: unknown };
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConfigError([`could not load ${path}: ${reason}`]);
  }
  const config = module.default;
  if (typeof config !== 'object' || config === null || !('pipeline' in config) || !('digest' in config)) {
    throw new ConfigError([`${path} must \`export default defineConfig({ … })\``]);
  }
  return config as CountersignConfig;
}
