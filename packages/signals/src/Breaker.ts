/**
 * The circuit breaker in front of the Kubernetes API: after `breakerThreshold` consecutive outages it opens and
 * signals get 503 at once for `breakerResetTimeout` (Alertmanager retries); then one trial call goes through
 * (half-open) and its outcome closes or reopens it. Published as `gateway_circuit_breaker_state{name="kubernetes"}`
 * (0 closed, 1 half-open, 2 open). Only outages count: a 404 is an answer.
 */
import { DependencyUnavailable } from "@kubemend/core/Errors"
import { Clock, Duration, Effect } from "effect"
import { SignalsConfig } from "./SignalsConfig.ts"
import { SignalsMetrics } from "./SignalsMetrics.ts"

const name = "kubernetes"

export class Breaker extends Effect.Service<Breaker>()("@kubemend/signals/Breaker", {
  effect: Effect.gen(function* () {
    const config = yield* SignalsConfig
    const metrics = yield* SignalsMetrics
    let state: 0 | 1 | 2 = 0
    let failures = 0
    let openedAt = 0
    let trial = false
    const set = (next: 0 | 1 | 2) => Effect.suspend(() => ((state = next), metrics.breakerState(name, next)))
    yield* set(0)

    const admit = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      if (state === 2 && now - openedAt >= Duration.toMillis(config.breakerResetTimeout)) yield* set(1)
      if (state === 2 || (state === 1 && trial)) {
        return yield* new DependencyUnavailable({ dependency: name, detail: "the Kubernetes API is unavailable (circuit open); retry later" })
      }
      const isTrial = state === 1
      if (isTrial) trial = true
      return isTrial
    })

    const run = <A, E, R>(effect: Effect.Effect<A, E, R>, isOutage: (e: E) => boolean) =>
      Effect.flatMap(admit, (isTrial) =>
        effect.pipe(
          Effect.tapBoth({
            onSuccess: () => Effect.suspend(() => {
              if (isTrial) trial = false
              failures = 0
              return state === 0 ? Effect.void : set(0)
            }),
            onFailure: (e) => Effect.suspend(() => {
              if (isTrial) trial = false
              if (!isOutage(e)) return Effect.void
              failures++
              if (!isTrial && (state !== 0 || failures < config.breakerThreshold)) return Effect.void
              return Clock.currentTimeMillis.pipe(
                Effect.tap((now) => Effect.sync(() => (openedAt = now))),
                Effect.zipRight(set(2)),
                Effect.zipRight(Effect.logWarning("Kubernetes API circuit breaker opened"))
              )
            })
          }),
          Effect.onInterrupt(() => Effect.sync(() => { if (isTrial) trial = false }))
        ))

    return { run, state: Effect.sync(() => state) } as const
  })
}) {}
