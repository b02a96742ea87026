/**
 * docs/http-api.md works when followed literally: its worked signing example is what the protocol
 * computes, and its `cs` shell function (openssl + curl) and walkthrough run against a server that
 * checks every signature.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/gateway/openapi.ts';
import { requestSignature, signingText } from '../../src/protocol/index.ts';
import { AGENT, type FakeCountersign, SECRET, startFakeCountersign } from './fake-countersign.ts';

const run = promisify(execFile);
const doc = readFileSync(new URL('../../docs/http-api.md', import.meta.url), 'utf8');
const shellBlocks = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);

/** Whether the tools the shell examples use are installed. */
async function have(...commands: string[]): Promise<boolean> {
  try {
    await run('bash', ['-c', commands.map((c) => `command -v ${c}`).join(' && ')]);
    return true;
  } catch {
    return false;
  }
}
const shellTools = await have('bash', 'curl', 'openssl');

describe('docs/http-api.md', () => {
  it('lists every endpoint the server serves, and no other, in its table and with a section each', () => {
    const paths = openApiDocument().paths as Record<string, Record<string, unknown>>;
    const served = Object.entries(paths)
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    const table = doc.slice(
      doc.indexOf('| method and path'),
      doc.indexOf('\n\n', doc.indexOf('| method and path')),
    );
    const listed = [...table.matchAll(/^\| `([A-Z]+ [^`?]+)(?:\?[^`]*)?` +\|/gm)].map((match) => match[1]!);
    expect(listed.sort()).toEqual(served);
    const sections = [...doc.matchAll(/^## .*`([A-Z]+ [^`?]+)(?:\?[^`]*)?`$/gm)].map((match) => match[1]!);
    expect(served.filter((endpoint) => !sections.includes(endpoint))).toEqual(['GET /v1/openapi.json']);
  });

  it('gives the signing text and signature the protocol computes in its worked example', () => {
    const secret = 'example-secret-do-not-use';
    const run = '019d47a8-6e00-7a3c-9f1e-4b2d8c0e1a77';
    for (const input of [
      { method: 'POST', pathWithQuery: `/v1/runs/${run}/steps/s2/outcome`, body: '{"status":"applying"}' },
      { method: 'GET', pathWithQuery: `/v1/runs/${run}/decision?wait=30`, body: '' },
    ]) {
      const signed = { ...input, timestamp: '1775124000' };
      expect(doc).toContain(`signing text:  ${signingText(signed)}\n`);
      expect(doc).toContain(`signature:     ${requestSignature(secret, signed)}\n`);
    }
  });

  describe.skipIf(!shellTools)('the shell examples (bash, curl, openssl)', () => {
    let server: FakeCountersign;
    beforeAll(async () => {
      server = await startFakeCountersign({ autoApprove: true });
    });
    afterAll(() => server.close());

    it('reproduce the worked example with openssl', async () => {
      const block = shellBlocks.find((b) => b.includes('openssl dgst') && !b.includes('cs()'))!;
      const { stdout } = await run('bash', ['-c', block]);
      expect(stdout).toContain('5eecbcc99ba89ba0ce70f6d6dafe0392004a5d1e8dd4b93f2ba36ac3200de802');
    });

    it('sign every request of the walkthrough so that the server accepts it', async () => {
      const cs = shellBlocks.find((b) => b.includes('cs() {'))!;
      const walkthrough = shellBlocks
        .find((b) => b.includes('RUN="run-'))!
        .replace('http://127.0.0.1:3000', server.url)
        .replace("'<the agent secret>'", `'${SECRET}'`);
      const { stdout } = await run('bash', ['-c', `set -e\n${cs}\n${walkthrough}`]);
      const statuses = [...stdout.matchAll(/^HTTP (\d{3})$/gm)].map((m) => m[1]);
      expect(statuses).toEqual(['202', '200', '200', '200', '200', '200']);
      expect(server.requests.every((r) => r.url === '/.well-known/jwks.json' || r.auth?.ok)).toBe(true);
      expect(
        server.requests.filter((r) => r.auth?.ok).every((r) => r.auth?.ok && r.auth.agent === AGENT),
      ).toBe(true);
      expect(stdout).toContain('"kty":"OKP"');
      expect([...server.outcomes.values()].map((o) => o.status)).toEqual(['applied']);
    });
  });
});
