// Keystores and CMS blobs are untrusted uploads: every corruption must end in a SigningError with
// a catalogue code, never a TypeError, a hang or an unhandled rejection. Seeded, so repeatable.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadIdentity, signCodeDirectory, verifySignedData } from '../../../src/signing/cms/index.ts';
import { SigningError } from '../../../src/signing/errors.ts';
import { testPki } from '../../support/pki.ts';
import { buildJks } from './jks-build.ts';

function rng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function mutate(input: Buffer, random: () => number): Buffer {
  const out = Buffer.from(input);
  const kind = random();
  if (kind < 0.6) {
    for (let i = 0, n = 1 + Math.floor(random() * 4); i < n; i++) out[Math.floor(random() * out.length)] = Math.floor(random() * 256);
    return out;
  }
  if (kind < 0.8) return out.subarray(0, Math.floor(random() * out.length));
  const at = Math.floor(random() * out.length);
  return Buffer.concat([out.subarray(0, at), Buffer.from([Math.floor(random() * 256)]), out.subarray(at)]);
}

describe('corrupted inputs fail with catalogue codes', () => {
  const pki = testPki();
  const inputs: Array<[string, Buffer, { password?: string; keyPassword?: string }]> = [
    ['modern p12', pki.p12(pki.leaf, { password: 'pw' }), { password: 'pw' }],
    ['legacy p12', pki.p12(pki.ecLeaf, { password: 'pw', legacy: true }), { password: 'pw' }],
    ['jks', buildJks('pw', [{ alias: 'a', pkcs8: pki.androidRsa.privateKey.export({ format: 'der', type: 'pkcs8' }), chain: [pki.androidRsa.certificate], keyPassword: 'pw' }]), { password: 'pw' }],
    ['pem', Buffer.from(pki.leaf.privateKeyPem + pki.leaf.certificatePem), {}],
  ];
  for (const [label, bytes, options] of inputs) {
    it(`loadIdentity: 150 mutations of a ${label}`, async () => {
      const random = rng(label.length * 7919);
      for (let i = 0; i < 150; i++) {
        const mutated = mutate(bytes, random);
        try {
          await loadIdentity(mutated, options);
        } catch (error) {
          assert.ok(error instanceof SigningError, `${label} mutation ${i}: ${String(error)}`);
        }
      }
    });
  }

  it('verifySignedData: 300 mutations of a code signature', () => {
    const cd = Buffer.from('code directory');
    const cms = signCodeDirectory({ codeDirectory: cd, codeDirectoryHashes: [{ digestAlgorithm: 'sha256', hash: Buffer.alloc(32, 1) }], signer: pki.ecLeaf, chain: pki.ecLeaf.chain });
    const random = rng(42);
    const original = verifySignedData(cms, { detachedContent: cd, trustedRoots: [pki.root.certificate] });
    for (let i = 0; i < 300; i++) {
      const mutated = mutate(cms, random);
      try {
        const verified = verifySignedData(mutated, { detachedContent: cd, trustedRoots: [pki.root.certificate] });
        // What may survive: damage to the embedded root copy (the trusted one is used), or to
        // certificate bytes outside the key (then the chain is reported untrusted). The signed
        // facts never change, and a trusted chain means the certificates are intact.
        assert.deepEqual(verified.signedAttributes?.messageDigest, original.signedAttributes?.messageDigest);
        if (verified.chain?.trusted) {
          assert.deepEqual(verified.signerCertificate, pki.ecLeaf.certificate, `mutation ${i}`);
          assert.ok(mutated.includes(pki.intermediate.certificate), `mutation ${i}: trusted through a damaged intermediate`);
        }
      } catch (error) {
        if (!(error instanceof SigningError)) assert.fail(`mutation ${i}: ${String(error)}`);
      }
    }
  });
});
