// `signet inspect FILE [--json]`: what an .ipa or .apk is — platform (from the content, not the
// name), identity, versions, OS/SDK levels and icon — without a server. Same reader as uploads.
import type { Command } from 'commander';
import { FileSource, SIGNING_READS } from '../../signing/data-source.ts';
import { inspectPackage, packageInfoJson, type PackageInfo } from '../../signing/inspect/index.ts';

const DEVICE_FAMILIES: Record<number, string> = { 1: 'iPhone', 2: 'iPad', 3: 'Apple TV', 4: 'Apple Watch', 6: 'Mac', 7: 'Apple Vision' };

export function register(program: Command): void {
  program
    .command('inspect')
    .description('Show what an .ipa or .apk is: identity, versions, OS/SDK levels and icon')
    .argument('<file>', 'the package to read')
    .option('--json', 'print JSON')
    .action(async (file: string, options: { json?: boolean }) => {
      let source: FileSource;
      try {
        source = await FileSource.open(file, SIGNING_READS);
      } catch (error) {
        process.stderr.write(`signet: cannot open ${file}: ${(error as Error).message}\n`);
        process.exitCode = 1;
        return;
      }
      try {
        const info = await inspectPackage(source);
        process.stdout.write(options.json === true ? `${JSON.stringify(packageInfoJson(info), null, 2)}\n` : describe(info));
      } finally {
        await source.close();
      }
    });
}

function describe(info: PackageInfo): string {
  const rows: Array<[string, string]> = [['Platform', info.platform === 'ios' ? 'iOS' : 'Android']];
  const version = `${info.version ?? '(none)'} (${info.platform === 'ios' ? 'build' : 'versionCode'} ${info.build ?? 'none'})`;
  if (info.platform === 'ios') {
    rows.push(['Bundle ID', info.bundleId], ['Name', info.name ?? '(none)'], ['Version', version], ['Minimum iOS', info.minOs ?? '(not set)']);
    if (info.deviceFamily.length > 0) rows.push(['Devices', info.deviceFamily.map((f) => DEVICE_FAMILIES[f] ?? `family ${f}`).join(', ')]);
    rows.push(['App', info.appPath]);
  } else {
    const sdk = (level: number | null, codename: string | null): string => (codename ?? (level === null ? '(not set)' : String(level)));
    rows.push(['Package', info.bundleId], ['Label', info.name ?? `(none: ${info.labelIssue ?? 'unknown'})`], ['Version', version],
      ['Min SDK', sdk(info.minSdk, info.minSdkCodename)], ['Target SDK', sdk(info.targetSdk, info.targetSdkCodename)]);
    const others = Object.entries(info.labels).filter(([locale]) => locale !== '');
    if (others.length > 0) rows.push(['Labels', others.map(([locale, label]) => `${locale}: ${label}`).join('; ')]);
    rows.push(['Native ABIs', info.nativeAbis.length > 0 ? info.nativeAbis.join(', ') : '(none: runs on every ABI)']);
    if (info.debuggable) rows.push(['Debuggable', 'yes']);
  }
  if (info.icon === null) {
    rows.push(['Icon', `none — ${info.iconIssue ?? 'not found'}`]);
  } else {
    const facts = [info.icon.cgbi ? 'Apple CgBI PNG' : info.icon.source === 'asset-catalog' ? 'PNG decoded from the asset catalog' : info.icon.format.toUpperCase()];
    if (info.icon.width !== null) facts.push(`${info.icon.width}×${info.icon.height}`);
    if (info.icon.density !== null) facts.push(`${info.icon.density} dpi`);
    if (info.icon.source === 'adaptive-foreground') facts.push('adaptive icon foreground only');
    if (info.icon.bytes !== null) facts.push(`${info.icon.bytes.length} bytes`);
    rows.push(['Icon', `${info.icon.path} (${facts.join(', ')})`]);
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}\n`).join('');
}
