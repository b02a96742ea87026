import { existsSync } from 'node:fs';
import { extname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ConfigError } from './config-error.ts';
import type { CountersignConfig } from './config-types.ts';

/**
 * Imports a `countersign.config.ts` and checks that its default export came from `defineConfig`.
 * Relative paths resolve against the working directory. In the compiled build (`npm run build`, then
 * `npm start` runs plain JavaScript) a `.ts` config inside the project is loaded from its compiled
 * copy under `dist/`.
 */
export async function loadConfig(path: string): Promise<CountersignConfig> {
  const url = pathToFileURL(compiledPathOf(path)).href;
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

/** Where this module runs from: `dist/src/config/load.js` in the compiled build, else the source. */
const HERE = fileURLToPath(import.meta.url);
const COMPILED = HERE.endsWith('.js');

/** The file to import for `path`: itself, or in the compiled build the `.js` that `npm run build` made of it. */
function compiledPathOf(path: string): string {
  const absolute = resolve(path);
  if (!COMPILED || extname(absolute) !== '.ts') return absolute;
  const dist = resolve(HERE, '../../..');
  const project = resolve(dist, '..');
  const inProject = relative(project, absolute);
  const compiled = join(dist, inProject.replace(/\.ts$/, '.js'));
  if (!inProject.startsWith('..') && !isAbsolute(inProject) && existsSync(compiled)) return compiled;
  throw new ConfigError([
    `${path} is TypeScript, and npm start runs the compiled build: keep the config inside the project (examples/ or ./countersign.config.ts) and run npm run build, which compiles it to ${relative(process.cwd(), compiled) || compiled}; or write it as JavaScript (.js)`,
  ]);
}
