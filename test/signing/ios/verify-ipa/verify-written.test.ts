// verifyWritten: the re-signer's output proved from its proof (copied entries by their bytes
// against the input, rewritten ones in full) reaches the same verdict and report as the full
// verifier on a good output, and catches every kind of damage the proof is meant to cover.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { MemorySink } from '../../../../src/signing/data-sink.ts';
import { BufferSource } from '../../../../src/signing/data-source.ts';
import { SigningError } from '../../../../src/signing/errors.ts';
import { parseProvisioningProfile, type ProvisioningProfile } from '../../../../src/signing/ios/profile/index.ts';
import { resignIpaProved, type ResignProof } from '../../../../src/signing/ios/resign/index.ts';
import { allProblems, verifyIpa, verifyWritten } from '../../../../src/signing/ios/verify-ipa/index.ts';
import { ZipReader } from '../../../../src/signing/zip/index.ts';
import { generatedApp, type GeneratedApp } from '../../../support/ios-app.ts';
import { needsToolchain } from '../../../support/macho-build.ts';
import { testPki } from '../../../support/pki.ts';

const SIGNING_TIME = new Date('2026-03-01T12:00:00Z');

describe('verifyWritten', needsToolchain(), () => {
  let app: GeneratedApp;
  let profiles: ProvisioningProfile[];
  let output: Buffer;
  let proof: ResignProof;
  before(async () => {
    const pki = testPki();
    app = generatedApp('verify-written');
    profiles = [app.bundleId, app.extensionId].map((id) => parseProvisioningProfile(pki.mobileprovision({ bundleId: id })));
    const sink = new MemorySink();
    ({ proof } = await resignIpaProved(new BufferSource(app.bytes), sink, { identity: pki.leaf, profiles, signingTime: SIGNING_TIME, workers: 0 }));
    output = sink.toBuffer();
  });

  /** The verdict, or the refusal for output that cannot even be read as a zip. */
  async function problems(bytes: Buffer, withProof: ResignProof = proof): Promise<string[]> {
    try {
      return allProblems(await verifyWritten(new BufferSource(bytes), new BufferSource(app.bytes), withProof));
    } catch (error) {
      if (!(error instanceof SigningError)) throw error;
      return [`${error.code}: ${error.message}`];
    }
  }

  async function entryOf(bytes: Buffer, pick: (name: string) => boolean) {
    const zip = await ZipReader.open(new BufferSource(bytes));
    const entry = zip.entriesInFileOrder().find((e) => pick(e.name) && e.compressedSize > 0);
    assert.ok(entry, 'no such entry');
    return entry;
  }

  it('gives the full verifier\'s report on a good output, proving copied entries from the input', async () => {
    const full = await verifyIpa(new BufferSource(output));
    const written = await verifyWritten(new BufferSource(output), new BufferSource(app.bytes), proof);
    assert.deepEqual(allProblems(written), []);
    assert.deepEqual(written, full);
    // The proof covers what was copied; code, seals, profiles and plists were written.
    assert.ok(proof.copied.size > 0 && [...proof.copied.values()].every((c) => c.record !== undefined || !c.unsignedMachO));
    for (const name of app.machO) assert.ok(proof.written.has(name), name);
    assert.ok([...proof.written].some((n) => n.endsWith('_CodeSignature/CodeResources')));
    assert.ok([...proof.written].some((n) => n.endsWith('embedded.mobileprovision')));
  });

  it('finds a copied entry whose bytes changed', async () => {
    // Not an Info.plist: those are read (and their CRC checked) before any proof is looked at.
    const entry = await entryOf(output, (n) => proof.copied.has(n) && !n.endsWith('/') && !n.endsWith('Info.plist'));
    const damaged = Buffer.from(output);
    damaged[entry.dataOffset + Math.floor(entry.compressedSize / 2)]! ^= 0x01;
    const found = await problems(damaged);
    assert.ok(found.some((p) => p.includes(entry.name) && p.includes('compressed bytes differ')), found.join('\n'));
  });

  it('finds damage in what was written: signed code and the seal', async () => {
    // The last Mach-O file is inflated ahead, while the one before it is checked: its damage
    // must still be found (and not surface as an unhandled rejection).
    assert.ok(app.machO.length > 1);
    for (const pick of [(n: string) => n === app.machO[0], (n: string) => n === app.machO.at(-1), (n: string) => n.endsWith('_CodeSignature/CodeResources')]) {
      const entry = await entryOf(output, pick);
      const damaged = Buffer.from(output);
      damaged[entry.dataOffset + Math.floor(entry.compressedSize / 2)]! ^= 0x01;
      assert.notDeepEqual(await problems(damaged), [], entry.name);
    }
  });

  it('does not take a proof whose digests are not the content\'s', async () => {
    // A sealed resource (Info.plist is sealed through the executable's special slot instead).
    const [name, copied] = [...proof.copied].find(([n, c]) => c.record?.kind === 'file' && n.endsWith('data.bin'))!;
    const wrong = new Map(proof.copied);
    wrong.set(name, { ...copied, record: { kind: 'file', sha1: Buffer.alloc(20), sha256: Buffer.alloc(32) } });
    const found = await problems(output, { ...proof, copied: wrong });
    assert.ok(found.length > 0, 'a seal that does not match the digests must fail');
  });

  it('finds entries missing from the proof or from the output', async () => {
    const [first] = [...proof.copied.keys()];
    const fewer = new Map(proof.copied);
    fewer.delete(first!);
    assert.ok((await problems(output, { ...proof, copied: fewer })).some((p) => p.includes(first!) && p.includes('neither copied nor wrote')));
    const more = new Set(proof.written).add('Payload/Signet.app/ghost');
    assert.ok((await problems(output, { ...proof, written: more })).some((p) => p.includes('ghost') && p.includes('not in the output')));
    assert.ok((await problems(output, { ...proof, inputSize: proof.inputSize + 1 })).some((p) => p.includes('bytes, not the')));
  });
});
