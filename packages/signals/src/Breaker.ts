/**
 * The circuit breaker in front of the Kubernetes API (core's CircuitBreaker): after `breakerThreshold` consecutive
 * outages signals get 503 at once for `breakerResetTimeout` (Alertmanager retries); then one trial call decides.
 * Published as `gateway_circuit_breaker_state{name="kubernetes"}` (0 closed, 1 half-open, 2 open).
 */
import * as CircuitBreaker from "@kubemend/core/CircuitBreaker"
import { Effect } from "effect"
import { SignalsConfig } from "./SignalsConfig.ts"
import { SignalsMetrics } from "./SignalsMetrics.ts"

const name = "kubernetes"
const gauge = { closed: 0, half_open: 1, open: 2 } as const

export class Breaker extends Effect.Service<Breaker>()("@kubemend/signals/Breaker", {
  effect: Effect.gen(function* () {
    const config = yield* SignalsConfig
    const metrics = yield* SignalsMetrics
    return yield* CircuitBreaker.make({
      name,
      failureThreshold: config.breakerThreshold,
      resetTimeout: config.breakerResetTimeout,
      unavailableDetail: "the Kubernetes API is unavailable (circuit open); retry later",
      onState: (state) =>
        Effect.zipRight(
          metrics.breakerState(name, gauge[state]),
          state === "open" ? Effect.logWarning("Kubernetes API circuit breaker opened") : Effect.void
        )
    })
  })
}) {}
