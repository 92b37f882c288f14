/**
 * Token buckets per key. Time is passed in so callers take it from Effect's Clock (tests drive it with TestClock).
 * The key map is bounded: a full map first forgets buckets that have refilled (they hold no state worth keeping),
 * then the oldest ones.
 */
interface Bucket {
  tokens: number
  updatedAt: number
}

export interface BucketSpec {
  /** Tokens added per millisecond. */
  readonly perMs: number
  /** Bucket size (burst). */
  readonly capacity: number
}

export type Take = { readonly ok: true } | { readonly ok: false; readonly retryAfterSeconds: number }

/** A keyed token bucket table; pure apart from its own map, time is passed in. */
export class Buckets {
  private readonly buckets = new Map<string, Bucket>()
  constructor(private readonly spec: BucketSpec, private readonly maxKeys = 100_000) {}

  take(key: string, now: number): Take {
    let b = this.buckets.get(key)
    if (b === undefined) {
      this.evict(now)
      b = { tokens: this.spec.capacity, updatedAt: now }
      this.buckets.set(key, b)
    } else {
      b.tokens = Math.min(this.spec.capacity, b.tokens + Math.max(0, now - b.updatedAt) * this.spec.perMs)
      b.updatedAt = now
    }
    if (b.tokens >= 1) {
      b.tokens -= 1
      return { ok: true }
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - b.tokens) / this.spec.perMs / 1000)) }
  }

  /** Puts back one token taken from `key` (up to the capacity): a take that turned out not to count. */
  giveBack(key: string, now: number): void {
    const b = this.buckets.get(key)
    // Forgotten: a new bucket starts full anyway.
    if (b === undefined) return
    b.tokens = Math.min(this.spec.capacity, b.tokens + Math.max(0, now - b.updatedAt) * this.spec.perMs + 1)
    b.updatedAt = now
  }

  get size(): number {
    return this.buckets.size
  }

  private evict(now: number) {
    if (this.buckets.size < this.maxKeys) return
    const refillMs = this.spec.capacity / this.spec.perMs
    for (const [k, b] of this.buckets) if (now - b.updatedAt >= refillMs) this.buckets.delete(k)
    for (const k of this.buckets.keys()) {
      if (this.buckets.size < this.maxKeys) break
      this.buckets.delete(k)
    }
  }
}

export const perSecond = (rate: number): BucketSpec => ({ perMs: rate / 1000, capacity: rate })
export const perMinute = (rate: number): BucketSpec => ({ perMs: rate / 60_000, capacity: rate })
