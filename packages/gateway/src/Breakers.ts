/**
 * Circuit breakers for the gateway's downstream calls (agent, storage): core's CircuitBreaker, `circuitBreaker.*`
 * config. State is published as `af_circuit_breaker_state{name}` and an opening is audited (`circuitbreaker.trip`).
 */
import * as CircuitBreaker from "@kubemend/core/CircuitBreaker"
import { Effect } from "effect"
import { GatewayAudit } from "./GatewayAudit.ts"
import { type BreakerSettings, GatewayConfig } from "./GatewayConfig.ts"
import { GatewayMetrics } from "./GatewayMetrics.ts"

export type { BreakerState, CircuitBreaker as Breaker } from "@kubemend/core/CircuitBreaker"

export const makeBreaker = (name: string, settings: BreakerSettings) =>
  Effect.gen(function* () {
    const metrics = yield* GatewayMetrics
    const audit = yield* GatewayAudit
    let previous: CircuitBreaker.BreakerState = "closed"
    return yield* CircuitBreaker.make({
      name,
      failureThreshold: settings.failureThreshold,
      resetTimeout: settings.resetTimeout,
      unavailableDetail: `${name} is unavailable (circuit open)`,
      onState: (state, failures) =>
        Effect.suspend(() => {
          const opened = state === "open" && previous !== "open"
          previous = state
          return Effect.zipRight(
            metrics.breakerState(name, state),
            opened
              ? Effect.zipRight(
                Effect.logWarning("circuit breaker opened").pipe(Effect.annotateLogs({ breaker: name })),
                audit.emit({ type: "circuitbreaker.trip", outcome: "failure", data: { name, failures, state: "open" } })
              )
              : Effect.void
          )
        })
    })
  })

/** The agent's and storage's breakers, built from `circuitBreaker.*` config. */
export class Breakers extends Effect.Service<Breakers>()("@kubemend/gateway/Breakers", {
  effect: Effect.gen(function* () {
    const { breaker } = yield* GatewayConfig
    return {
      agent: yield* makeBreaker("agent", breaker),
      storage: yield* makeBreaker("storage", breaker)
    } as const
  })
}) {}
