// The Signer for Android APKs with the account's own ("enterprise") key: the stored credential
// becomes a signing request for the one pipeline (src/signing/pipeline), which signs v1+v2+v3 with
// apksigner's defaults and verifies the output before anything leaves. Engine failures keep their
// catalogue codes (keystore_password_incorrect, apk_invalid, verification_failed …), which the
// worker writes to task.error.code.
import { AppError } from '../../errors.ts';
import type { RunSignPackage } from '../signer-pool.ts';
import type { CertType, Platform, Signer, SignRequest, SignResult } from '../signer.ts';
import { inProcessSigning } from './in-process.ts';

export class AndroidSigner implements Signer {
  readonly platform: Platform = 'android';
  readonly certTypes: readonly CertType[] = ['enterprise'];
  readonly #run: RunSignPackage;

  constructor(run: RunSignPackage = inProcessSigning()) {
    this.#run = run;
  }

  async sign(request: SignRequest): Promise<SignResult> {
    const { credential } = request;
    if (credential.kind !== 'android') throw new AppError('cert_type_unsupported', 'An Android task needs an Android signing key.');
    // No key file name reaches the service: without an alias the v1 files are META-INF/CERT.*.
    const summary = await this.#run(
      { platform: 'android', keystore: credential.keystore, password: credential.password, keyPassword: credential.keyPassword, alias: credential.alias, certificate: credential.certificate },
      request.inputPath,
      request.outputPath,
      request.signal,
    );
    return { app: summary.app, verification: summary.verification };
  }
}
