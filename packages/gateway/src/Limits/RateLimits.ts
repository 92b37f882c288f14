/**
 * The request rate limits: token buckets per client IP, per user, and per user's tool calls, kept in the shared
 * state (`SharedState`): with Valkey configured they count across every gateway replica, else (and while Valkey is
 * unreachable) per replica.
 *
 * A `tools/call` takes its tool-call token together with its request's IP and user tokens, in one round trip of the
 * shared state, before it is known whether the call gets as far as the tool limit (it may be refused first: console
 * gate, unknown session, permission denied). So the tool token's verdict is not answered at once but handed to the
 * call (`PrepaidToolCall`), which claims it where it would have taken its token; a token the call never claimed is
 * given back when its request ends. Clients see what taking each token in its place would have shown them.
 */
import { Effect, type Scope } from "effect"
import { RateLimited } from "@kubemend/core/Errors"
import { GatewayConfig } from "../GatewayConfig.ts"
import { GatewayMetrics } from "../GatewayMetrics.ts"
import { SharedState } from "../SharedState.ts"
import { type BucketSpec, perMinute, perSecond, type Take } from "./Buckets.ts"

/** The tool-call token taken with a request's own limits, for the call in it to claim once. */
export interface PrepaidToolCall {
  /** The tool limit's verdict, to the first claim only; none after it, nor once the token went back. */
  readonly claim: () => Take | undefined
}

const prepaid = (verdict: Take): PrepaidToolCall => {
  let left: Take | undefined = verdict
  return {
    claim: () => {
      const v = left
      left = undefined
      return v
    }
  }
}

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

    type Limit = keyof typeof specs
    type Check = readonly [Limit, string]
    const bucket = ([scope, key]: Check) => [`rl:${scope}:${key}`, specs[scope]] as const
    const refuse = (scope: Limit, retryAfterSeconds: number) =>
      Effect.zipRight(metrics.rateLimited(scope), Effect.fail(new RateLimited({ scope, retryAfterSeconds })))
    /** Takes from the buckets of `checks` in one round trip, in order; the first refusal fails the request. */
    const check = (...checks: ReadonlyArray<Check>) =>
      Effect.flatMap(shared.takeAll(checks.map(bucket)), (taken) => taken.ok ? Effect.void : refuse(checks[taken.refused]![0], taken.retryAfterSeconds))

    /**
     * Per client address (unless `address` is undefined: limited before authentication), then per user, then the
     * user's tool-call token, in one round trip. Refused per address or user, it fails as those limits alone would
     * (the tool token untouched); the tool token's verdict goes to the call. Taken and not claimed by the time the
     * scope closes (the request ended), the token goes back.
     */
    const withToolCall = (address: string | undefined, name: string): Effect.Effect<PrepaidToolCall, RateLimited, Scope.Scope> => {
      const checks: ReadonlyArray<Check> = [...(address === undefined ? [] : [["ip", address] as const]), ["user", name], ["tool", name]]
      return Effect.acquireRelease(
        Effect.flatMap(shared.takeAll(checks.map(bucket)), (taken) => {
          if (taken.ok) return Effect.succeed(prepaid({ ok: true }))
          const scope = checks[taken.refused]![0]
          return scope === "tool"
            ? Effect.succeed(prepaid({ ok: false, retryAfterSeconds: taken.retryAfterSeconds }))
            : refuse(scope, taken.retryAfterSeconds)
        }),
        (token) => token.claim()?.ok === true ? shared.giveBack(...bucket(["tool", name])) : Effect.void
      )
    }

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
      withToolCall,
      /**
       * Per user, for each `tools/call`: the verdict `prepaid` with its request when there is one still to claim,
       * else a token taken now.
       */
      toolCall: (name: string, prepaid?: PrepaidToolCall) =>
        Effect.suspend(() => {
          const verdict = prepaid?.claim()
          if (verdict === undefined) return check(["tool", name])
          return verdict.ok ? Effect.void : refuse("tool", verdict.retryAfterSeconds)
        })
    } as const
  })
}) {}
