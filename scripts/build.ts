/**
 * `npm run build`: compiles src/, views/, examples/, scripts/ (and a `countersign.config.ts` at the
 * project root, if there is one) to `dist/`, as plain JavaScript for `node` — `npm start` runs
 * `dist/src/main.js` — and copies the files the code reads at run time (the commit Lua script, the
 * Slack stand-in's page). Starts from an empty `dist/`.
 */
import { compile } from './compile.ts';

const copied = compile('tsconfig.build.json', 'dist');
console.log(`built dist/ (${copied} assets copied); start it with: npm start`);
