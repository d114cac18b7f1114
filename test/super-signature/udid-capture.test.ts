// The UDID-capture wire formats: the Profile Service request profile (built, signed, checked by
// openssl as iOS would) and the device's CMS-signed answer (DER, BER, tampered, incomplete).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildProfileServiceRequest } from '../../src/super-signature/mobileconfig.ts';
import { readDeviceResponse } from '../../src/super-signature/device-response.ts';
import { identityFromPem, profileSigner } from '../../src/super-signature/profile-signer.ts';
import { AppError } from '../../src/errors.ts';
import { verifySignedData } from '../../src/signing/cms/index.ts';
import { parsePlist, plistToJs } from '../../src/signing/plist/index.ts';
import { deviceResponse, newDevice, tamper } from '../support/device.ts';
import { opensslCmsVerify } from '../support/openssl.ts';
import { certificateToPem, testPki } from '../support/pki.ts';

const request = { callbackUrl: 'https://signet.test/d/abc/udid?challenge=xyz', challenge: 'xyz', appName: 'Demo', organization: 'Signet Test Inc', identifier: 'dev.signet.udid.abc' };

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof AppError, String(error));
    return error.code;
  }
  assert.fail('expected an AppError');
}

describe('Profile Service request profile', () => {
  it('is an XML plist starting with <?xml, with the callback, challenge and requested attributes', () => {
    const bytes = buildProfileServiceRequest(request);
    assert.ok(bytes.subarray(0, 5).equals(Buffer.from('<?xml')));
    const plist = plistToJs(parsePlist(bytes).value) as any;
    assert.equal(plist.PayloadType, 'Profile Service');
    assert.equal(plist.PayloadVersion, 1);
    assert.equal(plist.PayloadContent.URL, request.callbackUrl);
    assert.equal(plist.PayloadContent.Challenge, 'xyz');
    assert.deepEqual(plist.PayloadContent.DeviceAttributes, ['UDID', 'PRODUCT', 'VERSION', 'DEVICE_NAME']);
    assert.match(plist.PayloadUUID, /^[0-9A-F-]{36}$/);
  });

  it('gets a fresh PayloadUUID per download', () => {
    const uuid = (b: Buffer) => (plistToJs(parsePlist(b).value) as any).PayloadUUID;
    assert.notEqual(uuid(buildProfileServiceRequest(request)), uuid(buildProfileServiceRequest(request)));
  });

  it('is signed with the full chain and verifies with openssl against the root (iOS "Verified")', () => {
    const pki = testPki();
    const identity = identityFromPem([pki.leaf.certificatePem, ...pki.leaf.chain.map((c) => certificateToPem(c))].join(''), pki.leaf.privateKeyPem);
    const payload = buildProfileServiceRequest(request);
    const signed = profileSigner(identity).sign(payload);
    const verified = verifySignedData(signed);
    assert.ok(verified.content.equals(payload));
    assert.equal(verified.certificates.length, 3, 'leaf, intermediate and root embedded');
    const oracle = opensslCmsVerify(signed, { caPem: certificateToPem(pki.root.certificate) });
    assert.equal(oracle.status, 0, oracle.stderr);
  });
});

describe('device response', () => {
  it('reads UDID, PRODUCT, VERSION, name and CHALLENGE from a DER answer', () => {
    const device = newDevice();
    const attributes = readDeviceResponse(deviceResponse(device, 'c1'));
    assert.deepEqual(attributes, { udid: device.udid, challenge: 'c1', product: device.product, version: '21F90', deviceName: 'Test iPhone', deviceClass: 'IPHONE' });
  });

  it('reads an indefinite-length BER answer with chunked content', () => {
    const device = newDevice('iPad13,4');
    const body = deviceResponse(device, 'c2', { ber: true });
    assert.equal(body[1], 0x80, 'indefinite length');
    const attributes = readDeviceResponse(body);
    assert.equal(attributes.udid, device.udid);
    assert.equal(attributes.deviceClass, 'IPAD');
  });

  it('normalises a lower-case UDID', () => {
    const device = { ...newDevice(), udid: 'abcdef0123456789abcdef0123456789abcdef01' };
    assert.equal(readDeviceResponse(deviceResponse(device, 'c')).udid, device.udid.toUpperCase());
  });

  it('refuses tampered, unsigned, incomplete and malformed answers with catalogue codes', () => {
    const device = newDevice();
    assert.equal(code(() => readDeviceResponse(tamper(deviceResponse(device, 'c3'), device))), 'device_response_invalid');
    assert.equal(code(() => readDeviceResponse(Buffer.from('<?xml version="1.0"?><plist><dict><key>UDID</key><string>x</string></dict></plist>'))), 'device_response_invalid');
    assert.equal(code(() => readDeviceResponse(Buffer.alloc(0))), 'device_response_invalid');
    assert.equal(code(() => readDeviceResponse(deviceResponse(device, null))), 'udid_challenge_invalid');
    assert.equal(code(() => readDeviceResponse(deviceResponse({ ...device, udid: 'not-a-udid' }, 'c'))), 'device_udid_invalid');
  });
});
