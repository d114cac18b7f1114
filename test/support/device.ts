// A simulated iPhone for UDID-capture tests: its own key and self-signed "device" certificate
// (real devices chain to Apple's iPhone Device CA, which Signet does not pin), and the
// CMS-signed attribute plist iOS POSTs to a Profile Service URL (distribution-protocols.md §3.1.3),
// made by the openssl CLI so the code under test does not sign its own inputs. `ber: true` uses
// `openssl cms -stream` (indefinite lengths, chunked content) like some device answers.
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { certificateToPem, selfSignedCertificate } from './pki.ts';

export interface SimulatedDevice {
  udid: string;
  product: string;
  version: string;
  name: string;
}

/** A device with a fresh random UDID in the modern 8-16 format. */
export function newDevice(product = 'iPhone15,2'): SimulatedDevice {
  return { udid: `00008120-${randomBytes(8).toString('hex').toUpperCase()}`, product, version: '21F90', name: 'Test iPhone' };
}

let identity: { certPem: string; keyPem: string } | undefined;
function deviceIdentity() {
  if (!identity) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    identity = {
      certPem: certificateToPem(selfSignedCertificate([['CN', 'Test iPhone Device'], ['O', 'Signet Test Devices']], privateKey)),
      keyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    };
  }
  return identity;
}

/** The plaintext attribute plist, keys in upper case and sorted, tab-indented like iOS writes it. */
export function deviceAttributesPlist(device: SimulatedDevice, challenge: string | null): string {
  const entries: Array<[string, string]> = [
    ...(challenge === null ? [] : [['CHALLENGE', challenge] as [string, string]]),
    ['DEVICE_NAME', device.name],
    ['PRODUCT', device.product],
    ['UDID', device.udid],
    ['VERSION', device.version],
  ];
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
${entries.map(([k, v]) => `\t<key>${k}</key>\n\t<string>${esc(v)}</string>`).join('\n')}
</dict>
</plist>
`;
}

/** The body iOS POSTs: CMS SignedData (attached) over the attribute plist, signed by the device. */
export function deviceResponse(device: SimulatedDevice, challenge: string | null, options: { ber?: boolean } = {}): Buffer {
  const { certPem, keyPem } = deviceIdentity();
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-device-'));
  try {
    const write = (name: string, data: string) => {
      const file = path.join(dir, name);
      writeFileSync(file, data);
      return file;
    };
    const out = path.join(dir, 'response.p7');
    const args = ['cms', '-sign', '-binary', '-nodetach', '-outform', 'DER', '-md', 'sha256', '-in', write('attrs.plist', deviceAttributesPlist(device, challenge)), '-signer', write('device.pem', certPem), '-inkey', write('device.key', keyPem), '-out', out];
    if (options.ber) args.push('-stream');
    const result = spawnSync('openssl', args);
    if (result.status !== 0) throw new Error(`openssl cms -sign failed: ${result.stderr.toString()}`);
    return readFileSync(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A copy of `signed` with one byte of the signed plist changed (the signature no longer matches). */
export function tamper(signed: Buffer, device: SimulatedDevice): Buffer {
  const copy = Buffer.from(signed);
  const at = copy.indexOf(Buffer.from(device.udid));
  if (at < 0) throw new Error('UDID not found in the signed body (BER-chunked?)');
  copy[at + device.udid.length - 1] = copy[at + device.udid.length - 1] === 0x30 ? 0x31 : 0x30;
  return copy;
}
