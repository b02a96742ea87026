/**
 * verifyStep, the gate in front of each effect: receipts are Countersign's Ed25519 signatures, checked
 * with its public keys (the JWKS, fetched once and again on a rotation, or pinned); nothing an agent
 * holds — its secret included — can make one.
 */
import { createHmac, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freightSteps } from '../../examples/freight/plans.ts';
import { AgentClient, type AgentClientOptions, type Decision } from '../../src/client/index.ts';
import { generateSigningKey } from '../../src/config/signing-key.ts';
import {
  canonicalJson,
  createReceiptSigner,
  type JsonObject,
  jwksOf,
  type ReceiptSigner,
} from '../../src/pipeline/index.ts';
import {
  AGENT,
  type FakeCountersign,
  makeDecision,
  OTHER_AGENT,
  SECRET,
  startFakeCountersign,
} from './fake-countersign.ts';

const steps = freightSteps.map((step) => ({ ...step, args: { ...step.args } as JsonObject }));
const s2 = steps[1]!;

let server: FakeCountersign;
const clients: AgentClient[] = [];

function client(options: Partial<AgentClientOptions> = {}): AgentClient {
  const created = new AgentClient({
    url: server.url,
    agent: AGENT,
    secret: SECRET,
    retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
    onError: () => {},
    ...options,
  });
  clients.push(created);
  return created;
}

/** A plan submitted and decided by the server. */
async function decided(agent = client(), status: Decision['status'] = 'approved'): Promise<Decision> {
  const { runId } = await agent.submit({ steps, expiresIn: '2h' });
  return server.decide(runId, { status });
}

/** A decision for the freight plan signed by `signer`, as if Countersign had made it. */
function signedBy(signer: ReceiptSigner, agent = AGENT): Decision {
  const expiresAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 3_600_000).toISOString();
  return makeDecision({ runId: `run-${agent}`, agent, expiresAt, steps, signer });
}

const otherSigner = () => createReceiptSigner(generateSigningKey().privateKey);

beforeEach(async () => {
  server = await startFakeCountersign();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server.close();
});

describe('verifyStep with the JWKS Countersign serves', () => {
  it('passes each approved step, with its provenance, fetching the JWKS once', async () => {
    const agent = client();
    const decision = await decided(agent);
    for (const step of steps) {
      expect(await agent.verifyStep(decision, step)).toMatchObject({
        ok: true,
        step: { id: step.id },
        provenance: { by: 'agent', userId: null },
      });
    }
    expect(server.jwksFetches).toBe(1);
    // Unauthenticated: the JWKS is public.
    expect(server.requestsTo('GET', '/.well-known/jwks.json')[0]?.headers).not.toHaveProperty(
      'x-countersign-signature',
    );
  });

  it('refuses tampered args (digest_mismatch)', async () => {
    const agent = client();
    const decision = await decided(agent);
    expect(
      await agent.verifyStep(decision, { ...s2, args: { ...s2.args, delivery_id: 'dl_99999' } }),
    ).toMatchObject({ ok: false, reason: 'digest_mismatch' });
  });

  it('refuses a decision whose contents were changed under its receipt (bad_receipt)', async () => {
    const agent = client();
    const decision = await decided(agent);
    const widened = { ...decision, plan: { ...decision.plan!, expiresAt: '2099-01-01T00:00:00Z' } };
    expect(await agent.verifyStep(widened, s2)).toMatchObject({ ok: false, reason: 'bad_receipt' });
  });

  it('refuses a receipt forged with the agent’s own secret, the old HMAC way (bad_receipt)', async () => {
    const agent = client();
    const { receipt: _receipt, ...unsigned } = await decided(agent);
    const hmac = createHmac('sha256', SECRET)
      .update(canonicalJson(unsigned as unknown as JsonObject))
      .digest('hex');
    const forged = { ...unsigned, receipt: hmac } as unknown as Decision;
    const check = await agent.verifyStep(forged, s2);
    expect(check).toMatchObject({ ok: false, reason: 'bad_receipt' });
    expect(check.ok === false && check.message).toContain('HMAC');
    const hs256 = {
      ...unsigned,
      receipt: {
        alg: 'HS256',
        kid: server.signer.kid,
        signature: Buffer.from(hmac, 'hex').toString('base64url'),
      },
    } as unknown as Decision;
    expect(await agent.verifyStep(hs256, s2)).toMatchObject({ ok: false, reason: 'bad_receipt' });
  });

  it('refuses a decision signed by another key, under its own kid or under Countersign’s (bad_receipt)', async () => {
    const agent = client();
    const other = otherSigner();
    const ownKid = signedBy(other);
    expect(await agent.verifyStep(ownKid, s2)).toMatchObject({ ok: false, reason: 'bad_receipt' });
    const impostor = { ...other, kid: server.signer.kid };
    expect(await agent.verifyStep(signedBy(impostor), s2)).toMatchObject({
      ok: false,
      reason: 'bad_receipt',
    });
  });

  it('refuses every step of a rejected run (not_approved) and an approval that has expired (expired)', async () => {
    const agent = client();
    const rejected = await decided(agent, 'rejected');
    expect(await agent.verifyStep(rejected, s2)).toMatchObject({ ok: false, reason: 'not_approved' });
    const approved = await decided(agent);
    const later = Date.parse(approved.plan!.expiresAt) + 1000;
    expect(await agent.verifyStep(approved, s2, { now: later })).toMatchObject({
      ok: false,
      reason: 'expired',
    });
  });

  it('refuses, as expired, a signed approval whose expiry is not a date (fails closed)', async () => {
    const odd = makeDecision({
      runId: 'run-odd-expiry',
      agent: AGENT,
      expiresAt: 'next Tuesday',
      steps,
      signer: server.signer,
    });
    expect(await client().verifyStep(odd, s2)).toMatchObject({ ok: false, reason: 'expired' });
  });

  it('refuses a genuine decision made for another agent: Countersign’s keys sign every agent’s', async () => {
    const check = await client().verifyStep(signedBy(server.signer, OTHER_AGENT), s2);
    expect(check).toMatchObject({ ok: false, reason: 'not_approved' });
    expect(check.ok === false && check.message).toContain(OTHER_AGENT);
  });
});

describe('key rotation', () => {
  it('fetches the JWKS again when a receipt names a kid it does not list, once a minute at most', async () => {
    const agent = client();
    expect((await agent.verifyStep(await decided(agent), s2)).ok).toBe(true);
    expect(server.jwksFetches).toBe(1);

    server.rotate();
    const afterRotation = await decided(agent);
    expect(afterRotation.receipt.kid).toBe(server.signer.kid);
    expect(await agent.verifyStep(afterRotation, s2)).toMatchObject({ ok: true });
    expect(server.jwksFetches).toBe(2);

    // Unknown kids that stay unknown (forgeries) do not make the client fetch again and again.
    expect(await agent.verifyStep(signedBy(otherSigner()), s2)).toMatchObject({
      ok: false,
      reason: 'bad_receipt',
    });
    expect(await agent.verifyStep(signedBy(otherSigner()), s2)).toMatchObject({
      ok: false,
      reason: 'bad_receipt',
    });
    expect(server.jwksFetches).toBe(2);
  });

  it('keeps verifying decisions signed by the previous key while the JWKS lists it', async () => {
    const agent = client();
    const before = await decided(agent);
    server.rotate();
    expect((await agent.verifyStep(before, s2)).ok).toBe(true);
    expect((await client().verifyStep(before, s2)).ok).toBe(true);
  });
});

describe('pinned keys', () => {
  it('verify with PEM public keys or a JWKS and never fetch the JWKS', async () => {
    const pem = server.signer.publicKey.export({ format: 'pem', type: 'spki' }).toString();
    const decision = await decided();
    expect((await client({ publicKeys: [pem] }).verifyStep(decision, s2)).ok).toBe(true);
    expect(
      (await client({ publicKeys: jwksOf([server.signer.publicKey]) }).verifyStep(decision, s2)).ok,
    ).toBe(true);
    expect((await client({ publicKeys: [server.signer.publicKey] }).verifyStep(decision, s2)).ok).toBe(true);
    expect(server.jwksFetches).toBe(0);
  });

  it('stay as given: a rotated key is unknown until the agent pins it (bad_receipt)', async () => {
    const agent = client({ publicKeys: [server.signer.publicKey] });
    server.rotate();
    expect(await agent.verifyStep(await decided(), s2)).toMatchObject({ ok: false, reason: 'bad_receipt' });
    expect(server.jwksFetches).toBe(0);
  });

  it('refuse a private key, another key type and an empty list at construction', () => {
    const { pem, privateKey } = generateSigningKey();
    const options = { url: 'http://127.0.0.1:1', agent: AGENT, secret: SECRET };
    expect(() => new AgentClient({ ...options, publicKeys: [pem] })).toThrow(/private key/);
    expect(() => new AgentClient({ ...options, publicKeys: [privateKey] })).toThrow(/private key/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
    expect(() => new AgentClient({ ...options, publicKeys: [rsa] })).toThrow(/Ed25519/);
    expect(() => new AgentClient({ ...options, publicKeys: [] })).toThrow(/empty/);
    expect(() => new AgentClient({ ...options, publicKeys: [createPublicKey(privateKey)] })).not.toThrow();
  });
});

describe('when the JWKS cannot be fetched', () => {
  it('throws a RequestError rather than answering about the decision, and tries again next time', async () => {
    const agent = client();
    const decision = await decided(agent);
    server.fail({ match: (_m, path) => path === '/.well-known/jwks.json', status: 503 }, 2);
    await expect(agent.verifyStep(decision, s2)).rejects.toMatchObject({ code: 'unavailable' });
    expect((await agent.verifyStep(decision, s2)).ok).toBe(true);
  });
});
