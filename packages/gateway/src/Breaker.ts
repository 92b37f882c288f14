/**
 * Circuit breakers for the gateway's downstream calls (agent, storage). After `failureThreshold` consecutive
 * failures the breaker opens: calls fail at once with `DependencyUnavailable` for `resetTimeout`, then one trial
 * call is let through (half-open); its success closes the breaker, its failure opens it again. Only failures the
 * caller marks as the dependency's fault count (a 404 or a validation error is an answer, not an outage).
 * State is published as `af_circuit_breaker_state{name}` and an opening is audited (`circuitbreaker.trip`).
 */
import { Cause, Clock, Duration, Effect, Option } from "effect"
import { DependencyUnavailable } from "@kubemend/core/Errors"
import { GatewayAudit } from "./GatewayAudit.ts"
import { type BreakerSettings, GatewayConfig } from "./GatewayConfig.ts"
import { GatewayMetrics } from "./GatewayMetrics.ts"

export type BreakerState = "closed" | "open" | "half_open"

export interface Breaker {
  readonly name: string
  /** Runs `effect` through the breaker; `isOutage` says which failures count against the dependency. */
  readonly run: <A, E, R>(
    effect: Effect.Effect<A, E, R>,
    isOutage: (e: E) => boolean
  ) => Effect.Effect<A, E | DependencyUnavailable, R>
  readonly state: Effect.Effect<BreakerState>
}

export const makeBreaker = (name: string, settings: BreakerSettings) =>
  Effect.gen(function* () {
    const metrics = yield* GatewayMetrics
    const audit = yield* GatewayAudit
    let state: BreakerState = "closed"
    let failures = 0
    let openedAt = 0
    let trialInFlight = false

    const publish = (next: BreakerState) =>
      Effect.suspend(() => {
        const opened = next === "open" && state !== "open"
        state = next
        return Effect.zipRight(
          metrics.breakerState(name, next),
          opened
            ? Effect.zipRight(
              Effect.logWarning("circuit breaker opened").pipe(Effect.annotateLogs({ breaker: name })),
              audit.emit({ type: "circuitbreaker.trip", outcome: "failure", data: { name, failures, state: "open" } })
            )
            : Effect.void
        )
      })

    const admit = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      if (state === "open" && now - openedAt >= Duration.toMillis(settings.resetTimeout)) {
        yield* publish("half_open")
      }
      if (state === "open" || (state === "half_open" && trialInFlight)) {
        return yield* new DependencyUnavailable({ dependency: name, detail: `${name} is unavailable (circuit open)` })
      }
      const trial = state === "half_open"
      if (trial) trialInFlight = true
      return trial
    })

    const onSuccess = (trial: boolean) =>
      Effect.suspend(() => {
        if (trial) trialInFlight = false
        failures = 0
        return state === "closed" ? Effect.void : publish("closed")
      })

    const onFailure = (trial: boolean) =>
      Effect.gen(function* () {
        if (trial) trialInFlight = false
        failures++
        if (trial || (state === "closed" && failures >= settings.failureThreshold)) {
          openedAt = yield* Clock.currentTimeMillis
          yield* publish("open")
        }
      })

    yield* metrics.breakerState(name, "closed")

    const breaker: Breaker = {
      name,
      run: (effect, isOutage) =>
        Effect.flatMap(admit, (trial) =>
          effect.pipe(
            Effect.onExit((exit) => {
              if (exit._tag === "Success") return onSuccess(trial)
              const failure = Option.getOrUndefined(Cause.failureOption(exit.cause))
              // Interruption (the caller went away, or its deadline passed) says nothing about the dependency; an
              // interrupted call's cause is often composite, so it is judged as a whole.
              if (failure === undefined && Cause.isInterruptedOnly(exit.cause)) {
                return Effect.sync(() => {
                  if (trial) trialInFlight = false
                })
              }
              return failure === undefined || isOutage(failure) ? onFailure(trial) : onSuccess(trial)
            })
          )),
      state: Effect.sync(() => state)
    }
    return breaker
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
