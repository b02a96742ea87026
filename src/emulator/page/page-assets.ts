/**
 * The page's static files, from `client/`: `index.html`, `styles.css`, and the browser modules, written
 * in TypeScript and served as JavaScript (types stripped with TypeScript's `transpileModule`, no
 * bundling: the browser loads each module by its own URL). Only plain file names in that folder are
 * served, never tests, and nothing outside it.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** A file ready to send. */
export interface PageAsset {
  readonly body: string;
  readonly contentType: string;
}

const CLIENT_DIR = new URL('./client/', import.meta.url);
const SERVED_NAME = /^[a-z0-9-]+\.(ts|css|html)$/;
const CONTENT_TYPES = {
  ts: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  html: 'text/html; charset=utf-8',
} as const;

/** Loads (and, for modules, transpiles) each file once. */
export class PageAssets {
  readonly #cache = new Map<string, Promise<PageAsset | undefined>>();

  /** The file `name` (e.g. `app.ts`), or undefined when there is no such file to serve. */
  get(name: string): Promise<PageAsset | undefined> {
    if (!SERVED_NAME.test(name) || name.endsWith('.test.ts')) return Promise.resolve(undefined);
    let asset = this.#cache.get(name);
    if (asset === undefined) {
      asset = load(name);
      this.#cache.set(name, asset);
      // A failure (say, TypeScript missing) is not cached: the next request tries again.
      asset.catch(() => this.#cache.delete(name));
    }
    return asset;
  }
}

async function load(name: string): Promise<PageAsset | undefined> {
  let source: string;
  try {
    source = await readFile(fileURLToPath(new URL(name, CLIENT_DIR)), 'utf8');
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
  const extension = name.slice(name.lastIndexOf('.') + 1) as keyof typeof CONTENT_TYPES;
  const body = extension === 'ts' ? await toJavaScript(source, name) : source;
  return { body, contentType: CONTENT_TYPES[extension] };
}

/**
 * Strips the types of one browser module. Imports keep their `./x.ts` paths, which this server answers
 * with JavaScript; `import type` lines disappear.
 */
async function toJavaScript(source: string, fileName: string): Promise<string> {
  const { default: ts } = await import('typescript');
  return ts.transpileModule(source, {
    fileName,
    compilerOptions: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      verbatimModuleSyntax: true,
      inlineSourceMap: true,
      inlineSources: true,
    },
  }).outputText;
}

function isNotFound(error: unknown): boolean {
  return error instanceof Error && 'code' in error && (error.code === 'ENOENT' || error.code === 'EISDIR');
}
