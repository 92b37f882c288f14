/**
 * The request rate limits: token buckets per client IP, per user, and per user's tool calls, kept in the shared
 * state (`SharedState`): with Valkey configured they count across every gateway replica, else (and while Valkey is
 * unreachable) per replica.
 */
import { Effect } from "effect"
import { RateLimited } from "@kubemend/core/Errors"
import { GatewayConfig } from "../GatewayConfig.ts"
import { GatewayMetrics } from "../GatewayMetrics.ts"
import { SharedState } from "../SharedState.ts"
import { type BucketSpec, perMinute, perSecond } from "./Buckets.ts"

export class RateLimits extends Effect.Service<RateLimits>()("@kubemend/gateway/RateLimits", {
  effect: Effect.gen(function* () {
    const { rateLimit } = yield* GatewayConfig
    const metrics = yield* GatewayMetrics
    const shared = yield* SharedState
    const specs = {
      ip: perSecond(rateLimit.ipRequestsPerSec),
      user: perSecond(rateLimit.userRequestsPerSec),
      tool: perMinute(rateLimit.toolCallsPerMinute)
    } satisfies Record<string, BucketSpec>

    type Scope = keyof typeof specs
    /** Takes from the buckets of `checks` in one round trip, in order; the first refusal fails the request. */
    const check = (...checks: ReadonlyArray<readonly [Scope, string]>) =>
      Effect.flatMap(shared.takeAll(checks.map(([scope, key]) => [`rl:${scope}:${key}`, specs[scope]] as const)), (taken) => {
        if (taken.ok) return Effect.void
        const scope = checks[taken.refused]![0]
        return Effect.zipRight(metrics.rateLimited(scope), Effect.fail(new RateLimited({ scope, retryAfterSeconds: taken.retryAfterSeconds })))
      })

    return {
      /** Before authentication, per client address. */
      ip: (address: string) => check(["ip", address]),
      /** After authentication, per user. */
      user: (name: string) => check(["user", name]),
      /**
       * Per client address, then per user, in one round trip of the shared state: for a request whose token needs
       * no verification (so nothing is gained by limiting per address first). Refused per address, it takes no
       * user token, as `ip` then `user` would.
       */
      ipAndUser: (address: string, name: string) => check(["ip", address], ["user", name]),
      /** Per user, for each `tools/call`. */
      toolCall: (name: string) => check(["tool", name])
    } as const
  })
}) {}
