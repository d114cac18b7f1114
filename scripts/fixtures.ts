// `npm run fixtures -- OUTDIR [--bundle-id ID] [--password PW]`: writes the generated test PKI
// (test/support/pki.ts) to a folder for trying Signet by hand: a CA directory, Apple-style and
// Android-style identities as PKCS#12 (modern and legacy), PEM and AOSP-style .pk8 + .x509.pem,
// and ad-hoc and enterprise provisioning profiles. Keys are fresh on every run.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { testPki, type TestIdentity } from '../test/support/pki.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { 'bundle-id': { type: 'string', default: 'com.signet.demo' }, password: { type: 'string', default: 'signet' } },
});
const outDir = positionals[0];
if (outDir === undefined) {
  console.error('usage: npm run fixtures -- OUTDIR [--bundle-id com.example.app] [--password secret]');
  process.exit(2);
}
const bundleId = values['bundle-id'] as string;
const password = values.password as string;
const pki = testPki();

const write = (rel: string, data: Buffer | string): void => {
  const file = path.join(outDir, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, data);
};

write('ca/root.cer', pki.root.certificate);
write('ca/intermediate.cer', pki.intermediate.certificate);
write('ca/root.pem', pki.root.certificatePem);

const exportIdentity = (name: string, identity: TestIdentity, withChain: boolean): void => {
  write(`${name}/${name}.p12`, pki.p12(identity, { password, includeChain: withChain }));
  write(`${name}/${name}-legacy.p12`, pki.p12(identity, { password, legacy: true, includeChain: withChain }));
  write(`${name}/${name}.pem`, identity.privateKeyPem + identity.certificatePem);
  write(`${name}/${name}.pk8`, identity.privateKey.export({ format: 'der', type: 'pkcs8' }));
  write(`${name}/${name}.x509.pem`, identity.certificatePem);
  write(`${name}/${name}.cer`, identity.certificate);
};
exportIdentity('ios-rsa', pki.leaf, true);
exportIdentity('ios-ec', pki.ecLeaf, true);
exportIdentity('ios-expired', pki.expiredLeaf, true);
exportIdentity('android-rsa', pki.androidRsa, false);
exportIdentity('android-ec', pki.androidEc, false);

const udids = ['00008030-001A2B3C4D5E6F70', '00008101-000A1B2C3D4E5F60'];
write('profiles/adhoc.mobileprovision', pki.mobileprovision({ bundleId, devices: udids }));
write('profiles/enterprise.mobileprovision', pki.mobileprovision({ bundleId }));
write('profiles/wildcard.mobileprovision', pki.mobileprovision({ bundleId: '*' }));
// Profiles per bundle: the app's explicit App ID with push, and its share extension's with an app group.
write('profiles/enterprise-push.mobileprovision', pki.mobileprovision({ bundleId, apsEnvironment: 'production', name: `Signet Test Enterprise ${bundleId} (push)` }));
write('profiles/enterprise-extension.mobileprovision', pki.mobileprovision({ bundleId: `${bundleId}.share`, applicationGroups: [`group.${bundleId}`] }));
write('profiles/ec-adhoc.mobileprovision', pki.mobileprovision({ bundleId, devices: udids, certificate: pki.ecLeaf.certificate }));
write('profiles/expired.mobileprovision', pki.mobileprovision({ bundleId, createdAt: new Date('2020-01-01T00:00:00Z'), expiresAt: new Date('2021-01-01T00:00:00Z') }));

write(
  'README.txt',
  [
    'Signet test PKI (generated; NOT trusted by any device).',
    '',
    `PKCS#12 password for every .p12: ${password}`,
    `Team id: ${pki.teamId}   bundle id in profiles: ${bundleId} (wildcard.mobileprovision: *)`,
    '',
    'ca/                       root + intermediate ("Signet Test WWDR"): use as SIGNET_APPLE_CA_DIR',
    'ios-rsa/, ios-ec/         iPhone Distribution identities (RSA-2048, EC P-256); .p12 include the chain',
    'ios-expired/              an identity that expired on 2021-01-01',
    'android-rsa/, android-ec/ self-signed Android keys (.p12, .pem, AOSP-style .pk8 + .x509.pem)',
    'profiles/                 ad-hoc (2 UDIDs), enterprise, wildcard, EC-certificate and expired profiles,',
    `                          enterprise-push (push) and enterprise-extension (${bundleId}.share, app group),`,
    '                          CMS-signed by the test intermediate; all but ec-adhoc name ios-rsa',
    '',
  ].join('\n'),
);
console.log(`wrote the test PKI to ${path.resolve(outDir)} (p12 password: ${password})`);
