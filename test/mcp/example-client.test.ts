/**
 * examples/mcp/client.ts, the command-line MCP client the MCP docs' walkthroughs run: its stdout is the
 * answer alone — docs/mcp-server.md pipes it to a file and parses the JSON, and shows it as printed —
 * and a tool error is exit 1, said on stderr.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/mcp-client.ts';

const RECORDS = [process.execPath, '--import', 'tsx', 'examples/mcp/records-server.ts'];

function exampleClient(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'examples/mcp/client.ts', ...args, '--', ...RECORDS],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe('examples/mcp/client.ts', () => {
  it('prints a tool answer alone on stdout and exits 0', async () => {
    const done = await exampleClient('call', 'read_status', '{"id": "r1"}');
    expect(done).toMatchObject({ code: 0, stdout: 'read_status ran with {"id":"r1"}\n' });
  }, 30_000);

  it('keeps stdout the answer alone for a tool error too: exit 1, "(isError: true)" on stderr', async () => {
    const done = await exampleClient('call', 'no_such_tool', '{}');
    expect(done).toMatchObject({ code: 1, stdout: 'no tool no_such_tool\n' });
    expect(done.stderr).toContain('(isError: true)');
  }, 30_000);
});
