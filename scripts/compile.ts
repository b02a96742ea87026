/**
 * Compiles the TypeScript project `project` (a tsconfig that emits) to plain JavaScript for `node`,
 * starting from an empty `outDir`, and copies the files the code reads at run time (the commit Lua
 * script, the Slack stand-in's page) beside the modules that read them. `npm run build` compiles the
 * product to `dist/`; the benchmarks compile the product with their own entry points to
 * `bench/.build/`, so what they measure is the process as deployed.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Files read at run time beside the modules that read them. */
const ASSETS = /\.(lua|html|css)$/;
const ASSET_DIRS = ['src', 'views', 'examples'];

/** Returns how many asset files were copied. Throws (with tsc's output on stderr) when tsc fails. */
export function compile(project: string, outDir: string): number {
  const out = join(PROJECT_ROOT, outDir);
  rmSync(out, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [
      join(PROJECT_ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      join(PROJECT_ROOT, project),
      '--outDir',
      out,
    ],
    { stdio: 'inherit' },
  );
  let copied = 0;
  for (const dir of ASSET_DIRS) {
    for (const file of walk(join(PROJECT_ROOT, dir))) {
      if (!ASSETS.test(file)) continue;
      cpSync(file, join(out, relative(PROJECT_ROOT, file)));
      copied++;
    }
  }
  return copied;
}

function* walk(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}
