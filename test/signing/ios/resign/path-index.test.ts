// PathIndex answers "which paths are under this folder" as a scan of every path would, for
// neighbours that sort around the folder's run (characters below and above "/", a longer name
// sharing the prefix, non-ASCII names) and for folders with no paths.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { PathIndex } from '../../../../src/signing/ios/resign/path-index.ts';

const PATHS = [
  'Payload/A.app/Info.plist',
  'Payload/A.app/Frameworks/F.framework/F',
  'Payload/A.app/Frameworks/F.framework/Info.plist',
  'Payload/A.app/Frameworks/F.frameworkX/data',
  'Payload/A.app/Frameworks/F-framework/data',
  'Payload/A.app/Frameworks/F.framework0',
  'Payload/A.app/Résumé.strings',
  'Payload/A.app/日本語/Localizable.strings',
  'Payload/A.app/PlugIns/E.appex/E',
  'Payload/A.apps/x',
  'Payload/A.ap',
  'Payload/B.app/Info.plist',
];

const scan = (dir: string): string[] => PATHS.filter((p) => p.startsWith(dir)).sort();

it('finds exactly the paths under each folder, as a scan of every path does', () => {
  const index = new PathIndex([...PATHS].reverse());
  for (const dir of ['Payload/', 'Payload/A.app/', 'Payload/A.app/Frameworks/F.framework/', 'Payload/A.app/Frameworks/', 'Payload/A.app/PlugIns/E.appex/', 'Payload/A.app/日本語/', 'Payload/B.app/', 'Payload/C.app/', 'Payload/A.app/Frameworks/G.framework/']) {
    assert.deepEqual(index.under(dir), scan(dir), dir);
  }
});

it('answers for an empty set and for a folder past every path', () => {
  assert.deepEqual(new PathIndex([]).under('Payload/'), []);
  assert.deepEqual(new PathIndex(PATHS).under('Zzz/'), []);
});
