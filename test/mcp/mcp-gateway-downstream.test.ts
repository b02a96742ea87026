/**
 * `npm run mcp -- --gateway <command…>` when the command is not an MCP server it can start: a typo, or
 * a program that exits at once. The gateway says so in one line on stderr and exits 1 (docs/mcp-gateway.md).
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { MCP_SCRIPT, ROOT } from '../support/mcp-client.ts';

function gateway(...downstream: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MCP_SCRIPT, '--gateway', ...downstream], {
    cwd: ROOT,
    env: {
      ...process.env,
      COUNTERSIGN_URL: 'http://127.0.0.1:1',
      COUNTERSIGN_AGENT: 'mcp-gateway',
      COUNTERSIGN_AGENT_SECRET: 'secret',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

describe('the gateway in front of a command that is not an MCP server', () => {
  it('names a command that does not exist, exit 1, no stack trace', async () => {
    const { code, stderr } = await gateway('no-such-mcp-server-command');
    expect(code).toBe(1);
    expect(stderr.trim()).toBe(
      'countersign mcp: the downstream MCP server (no-such-mcp-server-command) did not start: no such command',
    );
  }, 30_000);

  it('says when the command exits before answering initialize, exit 1', async () => {
    const { code, stderr } = await gateway(process.execPath, '-e', '');
    expect(code).toBe(1);
    expect(stderr.trim()).toBe(
      `countersign mcp: the downstream MCP server (${process.execPath} -e ) did not start: it exited before answering initialize`,
    );
  }, 30_000);
});
