/**
 * `npm run build`: compiles src/, views/, examples/, scripts/ (and a `countersign.config.ts` at the
 * project root, if there is one) to `dist/`, as plain JavaScript for `node` — `npm start` runs
 * `dist/src/main.js` — and copies the files the code reads at run time (the commit Lua script, the
 * Slack stand-in's page). Starts from an empty `dist/`.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
/** Files read at run time beside the modules that read them. */
const ASSETS = /\.(lua|html|css)$/;

rmSync(DIST, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json')],
  {
    stdio: 'inherit',
  },
);
let copied = 0;
for (const dir of ['src', 'views', 'examples']) {
  for (const file of walk(join(ROOT, dir))) {
    if (!ASSETS.test(file)) continue;
    cpSync(file, join(DIST, relative(ROOT, file)));
    copied++;
  }
}
console.log(`built dist/ (${copied} assets copied); start it with: npm start`);

function* walk(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}
