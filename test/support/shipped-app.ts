// A generated app (test/support/ios-app.ts: main bundle + widget extension) as another team
// shipped it: each bundle already signed with entitlements of its own, from development profiles
// of team OLDTEAM001 — the app with push and associated domains, the extension with an app
// group. What a re-signer must carry over, bundle by bundle.
import { MemorySink } from '../../src/signing/data-sink.ts';
import { BufferSource } from '../../src/signing/data-source.ts';
import { parseProvisioningProfile } from '../../src/signing/ios/profile/index.ts';
import { resignIpa } from '../../src/signing/ios/resign/index.ts';
import { generatedApp, type GeneratedApp } from './ios-app.ts';
import { testPki } from './pki.ts';

export const SHIPPED_TEAM = 'OLDTEAM001';
export const SHIPPED_GROUP = 'group.com.signet.generated';

export async function shippedApp(name: string): Promise<{ app: GeneratedApp; bytes: Buffer }> {
  const app = generatedApp(name);
  const pki = testPki();
  const common = { teamId: SHIPPED_TEAM, getTaskAllow: true };
  const main = pki.mobileprovision({ ...common, bundleId: app.bundleId, apsEnvironment: 'development', entitlements: { 'com.apple.developer.associated-domains': ['applinks:example.com'] } });
  const widget = pki.mobileprovision({ ...common, bundleId: app.extensionId, applicationGroups: [SHIPPED_GROUP] });
  const sink = new MemorySink();
  await resignIpa(new BufferSource(app.bytes), sink, { identity: pki.leaf, profiles: [parseProvisioningProfile(main), parseProvisioningProfile(widget)], workers: 0 });
  return { app, bytes: sink.toBuffer() };
}
