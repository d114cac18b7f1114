// Turns a signing identity into what signMachO needs: team id (leaf subject OU, as codesign
// takes it), the designated requirement for the chain, and the CMS producer (src/signing/cms
// builds the SignedData with Apple's attributes; ios-signing.md §9).
import { SigningError } from '../../errors.ts';
import { estimateCodeSignatureSize, isIssuedBy, isSelfSigned, signCodeDirectory, x509Of, type CodeDirectoryHash } from '../../cms/index.ts';
import type { Identity } from '../../cms/index.ts';
import { designatedRequirementFor } from './designated-requirement.ts';
import type { HashType } from './digest.ts';
import type { CodeSigner } from './sign.ts';

export interface IdentitySignerOptions {
  /** signingTime attribute; one value for every slice of a file. Default: now. */
  signingTime?: Date;
  /** Override the team id (default: the leaf certificate's subject OU). */
  teamId?: string;
}

export function identityCodeSigner(identity: Identity, options: IdentitySignerOptions = {}): CodeSigner {
  const leaf = x509Of(identity.certificate);
  const chain = orderedChain(identity);
  const signingTime = options.signingTime ?? new Date();
  const teamId = options.teamId ?? subjectField(leaf.subject, 'OU');
  // Apple's kCMSCertificateChainWithRootOrFail: the CMS must carry the chain up to the root.
  const top = x509Of(chain[chain.length - 1]!);
  if (!isSelfSigned(chain[chain.length - 1]!)) {
    throw new SigningError('certificate_chain_incomplete', `The chain of "${subjectField(leaf.subject, 'CN') ?? leaf.subject}" stops at "${subjectField(top.subject, 'CN') ?? top.subject}"; add the intermediate and root certificates`);
  }
  const cmsChain = chain.slice(1);
  const hashesFor = (types: readonly HashType[]): CodeDirectoryHash[] =>
    types.map((t) => ({ digestAlgorithm: t.algorithm, hash: Buffer.alloc(t.algorithm === 'sha1' ? 20 : t.algorithm === 'sha256' ? 32 : 48) }));
  return {
    teamId,
    designatedRequirement: (identifier) => designatedRequirementFor(identifier, chain),
    cms: {
      maxSize: (types) => estimateCodeSignatureSize({ codeDirectoryHashes: hashesFor(types), signer: identity, chain: cmsChain, signingTime }),
      sign: (codeDirectory, directories) =>
        signCodeDirectory({
          codeDirectory,
          codeDirectoryHashes: directories.map((d) => ({ digestAlgorithm: d.hashType.algorithm, hash: d.digest })),
          signer: identity,
          chain: cmsChain,
          signingTime,
        }),
    },
  };
}

/** Leaf first, then each issuer found among the identity's other certificates. */
function orderedChain(identity: Identity): Buffer[] {
  const out = [identity.certificate];
  const pool = identity.chain.filter((c) => !c.equals(identity.certificate));
  let current = identity.certificate;
  while (!isSelfSigned(current) && out.length < 10) {
    const index = pool.findIndex((der) => isIssuedBy(current, der));
    if (index < 0) break;
    current = pool.splice(index, 1)[0]!;
    out.push(current);
  }
  return out;
}

function subjectField(subject: string, key: string): string | undefined {
  for (const line of subject.split('\n')) if (line.startsWith(`${key}=`)) return line.slice(key.length + 1);
  return undefined;
}
