/**
 * ServiceAccount bearer authentication: the token is checked with a TokenReview (K8s layer). Accepted tokens are
 * cached by their SHA-256 for `auth.tokenCacheTTL` (bounded), so a busy caller costs one review per TTL; rejections
 * are not cached, so a token registered a moment later works at once. Fails closed: a review that errors or times
 * out answers 503, a rejected or missing token 401.
 */
import { DependencyUnavailable, Unauthenticated } from "@kubemend/core/Errors"
import { K8s } from "@kubemend/core/K8s"
import { StorageAuth, type StorageCallerShape } from "@kubemend/core/StorageApi"
import { Clock, Duration, Effect, Layer, Option, Redacted } from "effect"
import { createHash } from "node:crypto"
import { StorageConfig } from "../StorageConfig.ts"
import { problem } from "./Problems.ts"

const maxTokenLength = 8192
const maxCached = 10_000

export const StorageAuthLive = Layer.effect(
  StorageAuth,
  Effect.gen(function* () {
    const k8s = yield* K8s
    const ttl = Duration.toMillis((yield* StorageConfig).tokenCacheTTL)
    const cache = new Map<string, { readonly caller: StorageCallerShape; readonly expiresAt: number }>()

    const review = (token: string, key: string, now: number) =>
      k8s.tokenReview(token).pipe(
        Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "timeout" as const }),
        Effect.catchAll(() => problem(new DependencyUnavailable({ dependency: "kubernetes", detail: "the token could not be reviewed; retry later" }))),
        Effect.flatMap(
          Option.match({
            onNone: () => problem(new Unauthenticated({ reason: "token_review_failed", detail: "the bearer token was not accepted" })),
            onSome: (user) => {
              const caller = { username: user.username, groups: user.groups }
              if (cache.size >= maxCached) cache.delete(cache.keys().next().value!)
              cache.set(key, { caller, expiresAt: now + ttl })
              return Effect.succeed(caller)
            }
          })
        )
      )

    return {
      serviceAccount: (bearer: Redacted.Redacted) =>
        Effect.gen(function* () {
          const token = Redacted.value(bearer).trim()
          if (token === "") return yield* problem(new Unauthenticated({ reason: "missing_header", detail: "a ServiceAccount bearer token is required" }))
          if (token.length > maxTokenLength) return yield* problem(new Unauthenticated({ reason: "token_too_large" }))
          const key = createHash("sha256").update(token).digest("hex")
          const now = yield* Clock.currentTimeMillis
          const hit = cache.get(key)
          if (hit !== undefined && hit.expiresAt > now) return hit.caller
          cache.delete(key)
          return yield* review(token, key, now)
        })
    }
  })
)
