/**
 * Token buckets per key (client IP, user, user's tool calls). Time comes from Effect's Clock so tests drive it with
 * TestClock. The key maps are bounded: a full map first forgets buckets that have refilled (they hold no state
 * worth keeping), then the oldest ones.
 */
import { Clock, Effect } from "effect"
import { RateLimited } from "@kubemend/core/Errors"
import { GatewayConfig } from "../GatewayConfig.ts"
import { GatewayMetrics } from "../GatewayMetrics.ts"

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

export class RateLimits extends Effect.Service<RateLimits>()("@kubemend/gateway/RateLimits", {
  effect: Effect.gen(function* () {
    const { rateLimit } = yield* GatewayConfig
    const metrics = yield* GatewayMetrics
    const ip = new Buckets(perSecond(rateLimit.ipRequestsPerSec))
    const user = new Buckets(perSecond(rateLimit.userRequestsPerSec))
    const tool = new Buckets(perMinute(rateLimit.toolCallsPerMinute))

    const check = (buckets: Buckets, scope: "ip" | "user" | "tool", key: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const taken = buckets.take(key, now)
        return taken.ok
          ? Effect.void
          : Effect.zipRight(metrics.rateLimited(scope), Effect.fail(new RateLimited({ scope, retryAfterSeconds: taken.retryAfterSeconds })))
      })

    return {
      /** Before authentication, per client address. */
      ip: (address: string) => check(ip, "ip", address),
      /** After authentication, per user. */
      user: (name: string) => check(user, "user", name),
      /** Per user, for each `tools/call`. */
      toolCall: (name: string) => check(tool, "tool", name)
    } as const
  })
}) {}
