// Ad-hoc signing must reproduce Apple's codesign (macOS 11.6.8) byte for byte: the hqtsm/mach
// `u` binaries signed by us equal the `us` binaries signed by Apple — CodeDirectory,
// requirements, SuperBlob, and the load-command/__LINKEDIT edits that the page hashes cover.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { signMachO } from '../../../../src/signing/ios/codesign/sign.ts';
import { verifyMachO } from '../../../../src/signing/ios/codesign/verify.ts';
import { needsSharedFixtures } from '../../../support/fixtures.ts';
import { hqtsmPairs } from '../macho/fixture-binaries.ts';

describe("ad-hoc signatures equal Apple codesign's", needsSharedFixtures(), () => {
  const pairs = hqtsmPairs();

  it('covers the thin and fat hqtsm fixtures', () => {
    assert.equal(pairs.length, 9);
  });

  for (const pair of pairs) {
    it(pair.name, () => {
      const apple = readFileSync(pair.apple);
      // Identifier derived as codesign does: file name + "-" + hex("UUID" + LC_UUID).
      const ours = signMachO(readFileSync(pair.unsigned), { fileName: path.basename(pair.unsigned) });
      assert.equal(ours.bytes.length, apple.length);
      const first = ours.bytes.findIndex((byte, i) => byte !== apple[i]);
      assert.equal(first, -1, `first difference at byte ${first}`);
      const report = verifyMachO(ours.bytes);
      assert.ok(report.valid, JSON.stringify(report.slices.map((s) => s.problems)));
      assert.ok(report.slices.every((s) => s.adhoc));
    });
  }

  it('re-signing an Apple-signed binary in place gives the same bytes again', () => {
    for (const pair of pairs) {
      const apple = readFileSync(pair.apple);
      assert.ok(signMachO(apple).bytes.equals(apple), pair.name);
    }
  });
});
