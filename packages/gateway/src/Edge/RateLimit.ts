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

    const check = (scope: keyof typeof specs, key: string) =>
      Effect.flatMap(shared.take(`rl:${scope}:${key}`, specs[scope]), (taken) =>
        taken.ok
          ? Effect.void
          : Effect.zipRight(metrics.rateLimited(scope), Effect.fail(new RateLimited({ scope, retryAfterSeconds: taken.retryAfterSeconds }))))

    return {
      /** Before authentication, per client address. */
      ip: (address: string) => check("ip", address),
      /** After authentication, per user. */
      user: (name: string) => check("user", name),
      /** Per user, for each `tools/call`. */
      toolCall: (name: string) => check("tool", name)
    } as const
  })
}) {}
