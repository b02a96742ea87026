/**
 * The module rules (.dependency-cruiser.cjs, run by `npm test` as `npm run deps`) hold for the code as
 * it is, and fail on each kind of forbidden import: a scratch copy of the layout with one bad import
 * per rule is checked with the same config.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DEPCRUISE = join(ROOT, 'node_modules', '.bin', 'depcruise');

async function cruise(cwd: string, paths: readonly string[]) {
  try {
    const { stdout } = await run(DEPCRUISE, [...paths, '--config', '.dependency-cruiser.cjs'], { cwd });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

describe('the module rules', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'countersign-deps-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('hold for the code as it is', async () => {
    const result = await cruise(ROOT, ['src', 'views', 'scripts', 'bench']);
    expect(result.output).toContain('no dependency violations found');
    expect(result.code).toBe(0);
  }, 60_000);

  it('fail on an import each rule forbids', async () => {
    cpSync(join(ROOT, '.dependency-cruiser.cjs'), join(scratch, '.dependency-cruiser.cjs'));
    cpSync(join(ROOT, 'tsconfig.json'), join(scratch, 'tsconfig.json'));
    symlinkSync(join(ROOT, 'node_modules'), join(scratch, 'node_modules'));
    const files: Record<string, string> = {
      'src/bot/app.ts': 'export const app = 1;\n',
      'src/queue/worker.ts': "import { app } from '../bot/app.ts';\nexport const worker = app;\n",
      'src/approvals/service.ts':
        "import { worker } from '../queue/worker.ts';\nexport const service = worker;\n",
      'src/pipeline/validate.ts':
        "import { Redis } from 'ioredis';\nimport { readFileSync } from 'node:fs';\nimport { service } from '../approvals/service.ts';\nexport const validate = [Redis, readFileSync, service];\n",
      'views/card.ts':
        "import { service } from '../src/approvals/service.ts';\nimport { Queue } from 'bullmq';\nexport const card = [service, Queue];\n",
      'src/client/agent-client.ts':
        "import { Redis } from 'ioredis';\nimport { worker } from '../queue/worker.ts';\nexport const client = [Redis, worker];\n",
      'src/protocol/wire.ts':
        "import { service } from '../approvals/service.ts';\nexport const wire = service;\n",
      'src/mcp/server.ts': "import { worker } from '../queue/worker.ts';\nexport const mcp = worker;\n",
      'src/queue/mcp-user.ts': "import { mcp } from '../mcp/server.ts';\nexport const user = mcp;\n",
      'src/approvals/a.ts': "import { b } from './b.ts';\nexport const a = () => b;\n",
      'src/approvals/b.ts': "import { a } from './a.ts';\nexport const b = () => a;\n",
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(scratch, path)), { recursive: true });
      writeFileSync(join(scratch, path), text);
    }
    const result = await cruise(scratch, ['src', 'views']);
    expect(result.code).not.toBe(0);
    for (const rule of [
      'pipeline-is-pure: src/pipeline/validate.ts → src/approvals/service.ts',
      'pipeline-is-pure: src/pipeline/validate.ts → ',
      'node_modules/ioredis/',
      'pipeline-no-node-io: src/pipeline/validate.ts → fs',
      'approvals-below-the-edges: src/approvals/service.ts → src/queue/worker.ts',
      'queue-below-bot: src/queue/worker.ts → src/bot/app.ts',
      'views-are-pure: views/card.ts → src/approvals/service.ts',
      'views-are-pure: views/card.ts → ',
      'client-needs-no-server: src/client/agent-client.ts → src/queue/worker.ts',
      'client-needs-no-server: src/client/agent-client.ts → ',
      'client-imports-protocol-and-pipeline: src/client/agent-client.ts → src/queue/worker.ts',
      'protocol-is-shared: src/protocol/wire.ts → src/approvals/service.ts',
      'mcp-is-an-agent: src/mcp/server.ts → src/queue/worker.ts',
      'nothing-imports-mcp: src/queue/mcp-user.ts → src/mcp/server.ts',
      'no-cycles: src/approvals/a.ts → ',
    ]) {
      expect(result.output).toContain(rule);
    }
  }, 60_000);
});
