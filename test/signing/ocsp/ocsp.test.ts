// The OCSP engine against a real responder (openssl ocsp): requests openssl can read, answers
// for good, revoked and unlisted certificates, and the checks that make an answer trustworthy.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { buildOcspRequest, ocspResponderUrls, readOcspResponse } from '../../../src/signing/ocsp/index.ts';
import { startOcspResponder, type TestOcspResponder } from '../../support/ocsp-responder.ts';
import { openssl, scratchFile } from '../../support/openssl.ts';
import { issueTestIdentity, testPki, type TestIdentity } from '../../support/pki.ts';

const day = 86400_000;

/** POSTs with node:http (openssl's responder answers HTTP/1.0-style, which undici's fetch waits on). */
async function ask(url: string, body: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/ocsp-request', 'content-length': body.length } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.once('end', () => (response.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`HTTP ${response.statusCode}`))));
    });
    request.once('error', reject);
    request.end(body);
  });
}

describe('OCSP engine (RFC 6960) against openssl ocsp', () => {
  let responder: TestOcspResponder;
  let good: TestIdentity;
  let revoked: TestIdentity;
  let unlisted: TestIdentity;
  const revokedAt = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));

  before(async () => {
    responder = await startOcspResponder();
    const issue = (label: string) => issueTestIdentity(label, { issuer: testPki().intermediate, commonName: `iPhone Distribution: ${label}`, notBefore: new Date(Date.now() - day), notAfter: new Date(Date.now() + 300 * day), ocspUrl: responder.url });
    good = issue('good');
    revoked = issue('revoked');
    unlisted = issue('unlisted');
    await responder.setIndex([{ identity: good }, { identity: revoked, revokedAt }]);
  });
  after(async () => {
    await responder?.close();
  });

  it('finds the responder URL in the AIA extension, and none in a certificate without one', () => {
    assert.deepEqual(ocspResponderUrls(good.certificate), [responder.url]);
    assert.deepEqual(ocspResponderUrls(testPki().androidRsa.certificate), []);
  });

  it('builds a request openssl reads, naming the serial and the nonce', () => {
    const request = buildOcspRequest(good.certificate, responder.issuer.certificate, Buffer.alloc(16, 0xab));
    const text = openssl(['ocsp', '-reqin', scratchFile('req.der', request.der), '-req_text']);
    assert.equal(text.status, 0, text.stderr);
    const serial = BigInt(`0x${request.certId.serial.toString('hex')}`).toString(16).toUpperCase();
    assert.match(text.stdout.toString().replace(/\s/g, ''), new RegExp(`SerialNumber:0*${serial}`, 'i'));
    assert.match(text.stdout.toString(), /OCSP Nonce/);
    assert.match(text.stdout.toString().replace(/[\s:]/g, '').toUpperCase(), /0410ABABABABABABABABABABABABABABABAB/);
  });

  it('reads good, revoked (with time and reason) and unknown answers', async () => {
    for (const [identity, expected] of [[good, 'good'], [revoked, 'revoked'], [unlisted, 'unknown']] as const) {
      const request = buildOcspRequest(identity.certificate, responder.issuer.certificate);
      const answer = readOcspResponse(await ask(responder.url, request.der), { certId: request.certId, issuer: responder.issuer.certificate, nonce: request.nonce });
      assert.equal(answer.status, expected, identity.label);
      assert.ok(answer.nextUpdate !== null && answer.nextUpdate.getTime() > Date.now(), 'openssl -nmin sets nextUpdate');
      assert.ok(answer.thisUpdate.getTime() <= Date.now() + 1000);
      if (expected === 'revoked') {
        assert.equal(answer.revokedAt?.toISOString(), revokedAt.toISOString());
        assert.equal(answer.revocationReason, 'keyCompromise');
      }
    }
  });

  it('refuses an answer about another certificate, with another nonce, or not signed for this issuer', async () => {
    const request = buildOcspRequest(good.certificate, responder.issuer.certificate);
    const body = await ask(responder.url, request.der);
    const other = buildOcspRequest(revoked.certificate, responder.issuer.certificate);
    assert.throws(() => readOcspResponse(body, { certId: other.certId, issuer: responder.issuer.certificate }), { code: 'ocsp_response_invalid', message: /no answer for the certificate/ });
    assert.throws(() => readOcspResponse(body, { certId: request.certId, issuer: responder.issuer.certificate, nonce: Buffer.alloc(16) }), { code: 'ocsp_response_invalid', message: /nonce/ });
    // The root did not delegate this responder: an answer that verifies only under another CA is refused.
    assert.throws(() => readOcspResponse(body, { certId: request.certId, issuer: testPki().root.certificate }), { code: 'ocsp_response_invalid' });
    // One flipped byte inside the signed data breaks the signature.
    const tampered = Buffer.from(body);
    const at = tampered.indexOf(request.certId.issuerKeyHash);
    tampered[at] = (tampered[at] ?? 0) ^ 1;
    assert.throws(() => readOcspResponse(tampered, { certId: request.certId, issuer: responder.issuer.certificate }), { code: 'ocsp_response_invalid' });
  });

  it('refuses a stale answer (nextUpdate passed) and garbage', async () => {
    const request = buildOcspRequest(good.certificate, responder.issuer.certificate);
    const body = await ask(responder.url, request.der);
    assert.throws(() => readOcspResponse(body, { certId: request.certId, issuer: responder.issuer.certificate, now: new Date(Date.now() + 2 * 3600_000) }), { code: 'ocsp_response_invalid', message: /stale/ });
    assert.throws(() => readOcspResponse(Buffer.from('not der'), { certId: request.certId, issuer: responder.issuer.certificate }), { code: 'ocsp_response_invalid' });
  });
});
