/**
 * A circuit breaker in front of a dependency. After `failureThreshold` consecutive outages it opens: calls fail at
 * once with `DependencyUnavailable` for `resetTimeout`; then one trial call is let through (half-open), whose
 * success closes it and whose failure opens it again. Only failures the caller marks as outages count: any other
 * answer (a 404, a validation error) shows the dependency is up. An interrupted call (the caller went away, or its
 * deadline passed) says nothing about the dependency. `onState` publishes every change (the services' gauges).
 */
import { Cause, Clock, Duration, Effect, Option } from "effect"
import { DependencyUnavailable } from "./Errors.ts"

export type BreakerState = "closed" | "open" | "half_open"

export interface CircuitBreakerOptions {
  readonly name: string
  readonly failureThreshold: number
  readonly resetTimeout: Duration.Duration
  /** `detail` of the DependencyUnavailable an open breaker answers. */
  readonly unavailableDetail: string
  /** Runs on every change of state (and once, for the initial closed state); `failures` is the count that opened it. */
  readonly onState: (state: BreakerState, failures: number) => Effect.Effect<void>
}

export interface CircuitBreaker {
  readonly name: string
  /** Runs `effect` through the breaker; `isOutage` says which failures count against the dependency. */
  readonly run: <A, E, R>(
    effect: Effect.Effect<A, E, R>,
    isOutage: (e: E) => boolean
  ) => Effect.Effect<A, E | DependencyUnavailable, R>
  readonly state: Effect.Effect<BreakerState>
  /** When an open breaker lets its trial through (epoch millis); None unless open. */
  readonly trialAt: Effect.Effect<Option.Option<number>>
}

export const make = (options: CircuitBreakerOptions): Effect.Effect<CircuitBreaker> =>
  Effect.gen(function* () {
    let state: BreakerState = "closed"
    let failures = 0
    let openedAt = 0
    let trialInFlight = false

    const publish = (next: BreakerState) =>
      Effect.suspend(() => {
        state = next
        return options.onState(next, failures)
      })

    const admit = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      if (state === "open" && now - openedAt >= Duration.toMillis(options.resetTimeout)) yield* publish("half_open")
      if (state === "open" || (state === "half_open" && trialInFlight)) {
        return yield* new DependencyUnavailable({ dependency: options.name, detail: options.unavailableDetail })
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
        if (trial || (state === "closed" && failures >= options.failureThreshold)) {
          openedAt = yield* Clock.currentTimeMillis
          yield* publish("open")
        }
      })

    yield* publish("closed")

    return {
      name: options.name,
      run: (effect, isOutage) =>
        Effect.flatMap(admit, (trial) =>
          effect.pipe(
            Effect.onExit((exit) => {
              if (exit._tag === "Success") return onSuccess(trial)
              const failure = Option.getOrUndefined(Cause.failureOption(exit.cause))
              // An interrupted call's cause is often composite, so it is judged as a whole.
              if (failure === undefined && Cause.isInterruptedOnly(exit.cause)) {
                return Effect.sync(() => {
                  if (trial) trialInFlight = false
                })
              }
              return failure === undefined || isOutage(failure) ? onFailure(trial) : onSuccess(trial)
            })
          )),
      state: Effect.sync(() => state),
      trialAt: Effect.sync(() => state === "open" ? Option.some(openedAt + Duration.toMillis(options.resetTimeout)) : Option.none())
    }
  })
