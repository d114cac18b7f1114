// What `verifyIpa` reports: per bundle, its code, seal and profile checks; JSON-ready.
import type { SealProblem } from '../code-resources/index.ts';

export interface CodeVerification {
  path: string;
  identifier?: string;
  teamId?: string;
  /** Per slice: architecture, CodeDirectory hash types and primary cdhash. */
  slices: { arch: string; hashTypes: string[]; cdhash: string }[];
  signer?: string;
  problems: string[];
}

export interface BundleVerification {
  path: string;
  kind: string;
  bundleId: string;
  code: CodeVerification[];
  /** Files sealed in CodeResources files2. */
  sealedFiles: number;
  sealProblems: SealProblem[];
  profile?: { name: string; uuid: string; applicationIdentifier: string; type: string; expiresAt: string };
  entitlements?: unknown;
  problems: string[];
}

export interface IpaVerification {
  verified: boolean;
  app: { bundleId: string; name: string | null; version: string | null; build: string | null };
  teamId?: string;
  signer?: string;
  bundles: BundleVerification[];
  /** Problems not tied to one bundle (e.g. several team ids). */
  problems: string[];
}

/** Every problem, prefixed with where it was found. */
export function allProblems(report: IpaVerification): string[] {
  const out = [...report.problems];
  for (const bundle of report.bundles) {
    const where = bundle.path;
    out.push(...bundle.problems.map((p) => `${where}: ${p}`));
    for (const code of bundle.code) out.push(...code.problems.map((p) => `${code.path}: ${p}`));
    out.push(...bundle.sealProblems.map((s) => `${where}${s.path}: ${s.problem.replace('_', ' ')}`));
  }
  return out;
}

/** `signet verify` text output. */
export function describeIpaVerification(report: IpaVerification): string {
  const lines = [report.verified ? 'Verifies' : 'DOES NOT VERIFY'];
  lines.push(`App: ${report.app.bundleId} ${report.app.version ?? '?'} (${report.app.build ?? '?'})${report.app.name === null ? '' : ` "${report.app.name}"`}`);
  if (report.signer !== undefined) lines.push(`Signer: ${report.signer}`);
  if (report.teamId !== undefined) lines.push(`Team: ${report.teamId}`);
  for (const bundle of report.bundles) {
    lines.push(`Bundle ${bundle.path} (${bundle.kind}, ${bundle.bundleId}): ${bundle.code.length} Mach-O file(s), ${bundle.sealedFiles} sealed file(s)${bundle.profile ? `, profile "${bundle.profile.name}" until ${bundle.profile.expiresAt.slice(0, 10)}` : ''}`);
  }
  for (const problem of allProblems(report)) lines.push(`ERROR: ${problem}`);
  return `${lines.join('\n')}\n`;
}
