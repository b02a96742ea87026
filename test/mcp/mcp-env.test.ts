/** What `npm run mcp` reads from its environment (src/mcp/mcp-env.ts). */
import { describe, expect, it } from 'vitest';
import { readMcpSettings } from '../../src/mcp/index.ts';

const SERVER_ENV = {
  COUNTERSIGN_URL: 'http://127.0.0.1:3000',
  COUNTERSIGN_AGENT: 'freight-ops',
  COUNTERSIGN_AGENT_SECRET: 'secret',
  COUNTERSIGN_CONFIG: 'examples/freight/countersign.config.ts',
};

describe('readMcpSettings', () => {
  it('names every missing variable at once', () => {
    const result = readMcpSettings({ COUNTERSIGN_AGENT: ' ' });
    expect(result.ok).toBe(false);
    const problems = result.ok ? [] : result.problems.map((problem) => problem.split(' ')[0]);
    expect(problems).toEqual([
      'COUNTERSIGN_URL',
      'COUNTERSIGN_AGENT',
      'COUNTERSIGN_AGENT_SECRET',
      'COUNTERSIGN_CONFIG',
    ]);
  });

  it('needs no config for the gateway, and reads its wait (default ten minutes)', () => {
    const { COUNTERSIGN_CONFIG: _config, ...gatewayEnv } = SERVER_ENV;
    expect(readMcpSettings(gatewayEnv, 'gateway')).toMatchObject({
      ok: true,
      settings: { configPath: '', gatewayWaitMs: 600_000 },
    });
    expect(readMcpSettings({ ...gatewayEnv, COUNTERSIGN_GATEWAY_WAIT: '90s' }, 'gateway')).toMatchObject({
      ok: true,
      settings: { gatewayWaitMs: 90_000 },
    });
  });

  it('refuses a URL that is not one and a wait that is not a duration', () => {
    const result = readMcpSettings({
      ...SERVER_ENV,
      COUNTERSIGN_URL: 'localhost 3000',
      COUNTERSIGN_GATEWAY_WAIT: 'soon',
    });
    expect(result.ok ? [] : result.problems).toEqual([
      expect.stringMatching(/^COUNTERSIGN_URL must be a URL/),
      expect.stringMatching(/^COUNTERSIGN_GATEWAY_WAIT must be a duration/),
    ]);
  });
});
