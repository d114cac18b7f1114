// App Store Connect API tokens (Apple, "Generating Tokens for API Requests";
// distribution-protocols.md §3.2.1): ES256 JWTs signed with the team's .p8 key, header
// { alg: ES256, kid, typ: JWT }, claims { iss: issuer id, iat, exp, aud: "appstoreconnect-v1" }.
// Apple refuses tokens that expire more than 20 minutes ahead, so a token lives 15 minutes and is
// reused until 2 minutes before it expires (minting one per request is wasteful, and Node's
// default DER-encoded ECDSA signature is what trips hand-rolled signers: jose writes the JWS
// (IEEE P1363) form). iat is backdated 60 s against clock skew, as fastlane does.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { AppError } from '../errors.ts';

export const ASC_AUDIENCE = 'appstoreconnect-v1';
const LIFETIME_SECONDS = 15 * 60;
const RENEW_BEFORE_SECONDS = 2 * 60;
const BACKDATE_SECONDS = 60;

export interface AscKey {
  /** Issuer id (a UUID) of the team's API keys. */
  issuerId: string;
  /** Key id (10 characters) shown next to the key in App Store Connect. */
  keyId: string;
  /** The .p8 file: PKCS#8 PEM of an EC P-256 private key. */
  privateKeyPem: string;
}

/** Reads a .p8 key, refusing anything that is not an EC P-256 private key. */
export function importAscKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch (cause) {
    throw new AppError('invalid_request', 'The .p8 file is not a PEM private key.', { cause, details: { field: 'p8' } });
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new AppError('invalid_request', 'The .p8 key must be an EC P-256 key (App Store Connect API keys are).', { details: { field: 'p8' } });
  }
  return key;
}

export class AscTokenSource {
  readonly #key: AscKey;
  readonly #privateKey: KeyObject;
  readonly #now: () => number;
  #cached: { token: string; expiresAt: number } | null = null;

  constructor(key: AscKey, now: () => number = Date.now) {
    this.#key = key;
    this.#privateKey = importAscKey(key.privateKeyPem);
    this.#now = now;
  }

  /** A valid bearer token, minted when the cached one is missing or about to expire. */
  async token(): Promise<string> {
    const now = Math.floor(this.#now() / 1000);
    if (this.#cached && this.#cached.expiresAt - RENEW_BEFORE_SECONDS > now) return this.#cached.token;
    const expiresAt = now + LIFETIME_SECONDS;
    const { SignJWT } = await import('jose'); // loaded on the first token, not at server start
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: this.#key.keyId, typ: 'JWT' })
      .setIssuer(this.#key.issuerId)
      .setAudience(ASC_AUDIENCE)
      .setIssuedAt(now - BACKDATE_SECONDS)
      .setExpirationTime(expiresAt)
      .sign(this.#privateKey);
    this.#cached = { token, expiresAt };
    return token;
  }

  /** Forgets the cached token (after a 401, in case the clock or key changed). */
  invalidate(): void {
    this.#cached = null;
  }
}
