import { readFileSync } from 'node:fs';
const { openPkcs12 } = await import('/work/main/src/signing/cms/pkcs12.ts');
const b = readFileSync('/work/main/test-output/bench-ipa/dist.p12');
for (let i = 0; i < 4; i++) { const t = performance.now(); await openPkcs12(b, 'bench'); console.log('openPkcs12', (performance.now() - t).toFixed(1), 'ms'); }
