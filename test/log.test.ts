import { generateKeyPairSync } from 'node:crypto';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, type LoggerSettings } from '../src/log.ts';

/** A logger writing into an array; the lines parsed. */
function capture(settings: Omit<LoggerSettings, 'destination'>) {
  const written: string[] = [];
  const logger = createLogger({
    pretty: false,
    ...settings,
    destination: { write: (line) => written.push(line) },
  });
  return { logger, written, lines: () => written.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('createLogger', () => {
  it('writes one JSON object a line with level, time, msg and the fields given; nothing below its level', () => {
    const { logger, written, lines } = capture({ level: 'info' });
    logger.debug('not shown');
    logger
      .child({ runId: 'r1', agent: 'freight-ops' })
      .info({ jobId: 'render-r1-r2', user: 'U0OP1' }, 'rendered');
    expect(written).toHaveLength(1);
    expect(written[0]?.endsWith('\n')).toBe(true);
    expect(lines()[0]).toMatchObject({
      level: 30,
      time: expect.any(Number),
      msg: 'rendered',
      runId: 'r1',
      agent: 'freight-ops',
      jobId: 'render-r1-r2',
      user: 'U0OP1',
    });
  });

  it('redacts fields named like credentials, and replaces every configured secret wherever it appears', () => {
    const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const { logger, written } = capture({ level: 'debug', secrets: ['xoxb-bot-token-1234', pem] });
    logger.info({ token: 'xoxb-other', headers: { authorization: 'Bearer abc' } }, 'a call');
    logger.info({ options: { signingSecret: 'shh-1234', botToken: 'xoxb-2' } }, 'options');
    logger.warn('the token xoxb-bot-token-1234 in a message');
    logger.error({ key: pem }, 'a key');
    const output = written.join('');
    for (const secret of ['xoxb-other', 'Bearer abc', 'shh-1234', 'xoxb-2', 'xoxb-bot-token-1234']) {
      expect(output).not.toContain(secret);
    }
    const body = pem.replace(/-----[A-Z ]+-----/g, '').trim();
    expect(output).not.toContain(body);
    expect(output.match(/\[redacted\]/g)?.length).toBe(6);
  });

  it('writes an error as its type, message and code — its stack only at debug, never its other properties', () => {
    const failure = Object.assign(new Error('ECONNREFUSED 127.0.0.1:6379'), {
      code: 'ECONNREFUSED',
      // What a Slack client error carries: the request, its Authorization header included.
      original: { config: { headers: { Authorization: 'Bearer xoxb-leak' } } },
    });
    const atInfo = capture({ level: 'info' });
    atInfo.logger.error({ err: failure, runId: 'r1' }, 'rendering');
    expect(atInfo.lines()[0]).toMatchObject({
      msg: 'rendering',
      runId: 'r1',
      err: { type: 'Error', message: 'ECONNREFUSED 127.0.0.1:6379', code: 'ECONNREFUSED' },
    });
    expect(atInfo.written[0]).not.toMatch(/stack|xoxb-leak/);

    const atDebug = capture({ level: 'debug' });
    atDebug.logger.error({ err: new Error('outer', { cause: failure }) }, 'rendering');
    const line = atDebug.lines()[0] as { err: { stack: string; cause: Record<string, unknown> } };
    expect(line.err.stack).toMatch(/^Error: outer\n\s+at /);
    expect(line.err.cause).toMatchObject({ message: 'ECONNREFUSED 127.0.0.1:6379', code: 'ECONNREFUSED' });
    expect(atDebug.written[0]).not.toContain('xoxb-leak');
  });

  it('pretty: lines for people through pino-pretty (a dev dependency), not JSON', () => {
    const written: string[] = [];
    const logger = createLogger({
      level: 'info',
      pretty: true,
      secrets: ['s3cret-value'],
      // pino-pretty writes into a stream of Node's.
      destination: new Writable({
        write(chunk: Buffer, _encoding, done) {
          written.push(chunk.toString('utf8'));
          done();
        },
      }),
    });
    logger.info({ runId: 'r1' }, 'run approved by s3cret-value');
    const output = written.join('');
    expect(output).toContain('run approved by [redacted]');
    expect(output).toContain('runId: "r1"');
    expect(() => JSON.parse(output)).toThrow();
  });
});
