// Per-API-key token buckets (SIGNET_RATE_LIMIT). A bucket refills continuously at `perSecond`
// tokens up to `burst`; each request takes one. Buckets live in this process: behind several API
// nodes the effective limit is per node, which the README states.
export interface RateLimitSettings {
  perSecond: number;
  burst: number;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private readonly settings: RateLimitSettings;
  private readonly now: () => number;

  constructor(settings: RateLimitSettings, now: () => number = () => performance.now()) {
    this.settings = settings;
    this.now = now;
  }

  /** Takes a token for `key`: 0 when allowed, else the seconds until one is available. */
  take(key: string): number {
    const now = this.now();
    const { perSecond, burst } = this.settings;
    const bucket = this.buckets.get(key) ?? { tokens: burst, updatedMs: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.updatedMs) / 1000) * perSecond);
    bucket.updatedMs = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      this.prune(now);
      return 0;
    }
    return perSecond > 0 ? (1 - bucket.tokens) / perSecond : Number.POSITIVE_INFINITY;
  }

  /** Full buckets carry no information; dropping them keeps the map bounded by active keys. */
  private prune(now: number): void {
    if (this.buckets.size < 10_000) return;
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.updatedMs) / 1000) * this.settings.perSecond >= this.settings.burst) this.buckets.delete(key);
    }
  }
}
