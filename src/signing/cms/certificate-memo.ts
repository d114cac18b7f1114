// A bounded memo keyed by certificate bytes (chain.ts's CertificateCache is something else: the
// downloaded issuers). The same few certificates (the signer, its chain, Apple's CAs) are parsed
// and checked again and again in one signing run — by the chain completion, by each code
// signature's signing and checks, and by the summary. A server keeps these for good, and old
// signatures of uploaded apps carry certificates of any size, so only ordinary keys are kept
// (real certificates are 1-2 KiB), and at most `kept` of them, the oldest leaving first.
export class CertificateMemo<T> {
  readonly #entries = new Map<string, T>();
  readonly #kept: number;
  readonly #maxKey: number;

  /** `maxKey`: the longest key kept, in characters (a latin1 key has one per byte). */
  constructor(kept: number, maxKey: number) {
    this.#kept = kept;
    this.#maxKey = maxKey;
  }

  /** The value for `key`, made by `make` (and kept, if the key is ordinary) when there is none. */
  get(key: string, make: () => T): T {
    if (this.#entries.has(key)) return this.#entries.get(key)!;
    const value = make();
    if (key.length > this.#maxKey) return value;
    if (this.#entries.size >= this.#kept) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, value);
    return value;
  }
}
