// Parsers that a hostile file could make expensive run with bounds: DER nesting depth, plist
// size, JKS entry and chain counts. Each refusal is a catalogue error, never a stack overflow.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { it } from 'node:test';
import { loadIdentity } from '../../src/signing/cms/index.ts';
import { MAX_DER_DEPTH } from '../../src/signing/cms/der.ts';
import { SigningError } from '../../src/signing/errors.ts';
import { MAX_PLIST_BYTES, parsePlist } from '../../src/signing/plist/index.ts';
import { parseProvisioningProfile } from '../../src/signing/ios/profile/index.ts';

/** `depth` nested SEQUENCEs around an INTEGER (headers computed inside out, joined once). */
function nested(depth: number): Buffer {
  const headers: Buffer[] = [];
  let size = 3;
  for (let i = 0; i < depth; i += 1) {
    const n = size;
    const header = n < 0x80 ? Buffer.from([0x30, n]) : n < 0x10000 ? Buffer.from([0x30, 0x82, n >> 8, n & 0xff]) : Buffer.from([0x30, 0x83, n >> 16, (n >> 8) & 0xff, n & 0xff]);
    headers.push(header);
    size += header.length;
  }
  return Buffer.concat([...headers.reverse(), Buffer.from([0x02, 0x01, 0x00])]);
}

const refusal = (code: string) => (error: unknown) => {
  assert.ok(error instanceof SigningError, String(error));
  assert.equal(error.code, code, error.message);
  return true;
};

it('refuses DER nested deeper than the limit with a catalogue code, not a stack overflow', async () => {
  const pairs = Buffer.concat(Array.from({ length: MAX_DER_DEPTH + 1 }, () => Buffer.from([0x30, 0x80])));
  // BER indefinite lengths count the same way as definite ones.
  const indefinite = Buffer.concat([pairs, Buffer.alloc(2 * (MAX_DER_DEPTH + 1))]);
  for (const der of [nested(MAX_DER_DEPTH + 1), nested(5_000), nested(100_000), indefinite]) {
    assert.throws(() => parseProvisioningProfile(der), refusal('profile_invalid'));
    await assert.rejects(loadIdentity(der), (error: unknown) => error instanceof SigningError && /^keystore_/.test(error.code));
  }
  assert.throws(() => parseProvisioningProfile(nested(100_000)), (error: unknown) => /nesting deeper than 64 levels/.test(String((error as Error).cause)));
  assert.throws(() => parseProvisioningProfile(nested(MAX_DER_DEPTH - 1)), (error: unknown) => error instanceof SigningError && !/nesting/.test(error.message));
});

it('refuses plists over the size limit before parsing them', () => {
  const big = Buffer.alloc(MAX_PLIST_BYTES + 1, 0x20);
  assert.throws(() => parsePlist(big), refusal('plist_invalid'));
});

it('refuses a JKS that declares more entries or a longer chain than any real keystore', async () => {
  const jks = (body: Buffer, password = 'pw') => {
    const head = Buffer.concat([Buffer.from('feedfeed00000002', 'hex'), body]);
    const mac = createHash('sha1').update(Buffer.from(password, 'utf16le').swap16()).update('Mighty Aphrodite').update(head).digest();
    return Buffer.concat([head, mac]);
  };
  const u32 = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);
  await assert.rejects(loadIdentity(jks(u32(0xffffffff)), { password: 'pw' }), (error: unknown) => refusal('keystore_invalid')(error) && /4294967295 entries/.test((error as Error).message));
  const entry = Buffer.concat([u32(1), u32(1), Buffer.from([0, 1, 0x61]), Buffer.alloc(8), u32(2), Buffer.from([0x30, 0x00]), u32(1_000_000)]);
  await assert.rejects(loadIdentity(jks(entry), { password: 'pw' }), (error: unknown) => refusal('keystore_invalid')(error) && /chain of 1000000/.test((error as Error).message));
});
