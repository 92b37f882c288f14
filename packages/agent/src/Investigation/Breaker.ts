/**
 * A circuit breaker for a dependency (the LLM, the storage service): after `threshold` consecutive failures calls
 * fail fast for `cooldown`, then one probe is let through (half-open); its outcome closes or re-opens the circuit.
 * The state is reported as 0 closed, 1 half-open, 2 open (the platform's gauge convention).
 */
import { Clock, Data, Duration, Effect, Ref } from "effect"

export class BreakerOpen extends Data.TaggedError("BreakerOpen")<{ readonly dependency: string }> {}

type State =
  | { readonly _tag: "Closed"; readonly failures: number }
  | { readonly _tag: "Open"; readonly until: number }
  | { readonly _tag: "HalfOpen" }

export interface BreakerOptions {
  readonly dependency: string
  readonly threshold: number
  readonly cooldown: Duration.Duration
  /** Called with 0, 1 or 2 on every change (the gauge). */
  readonly report: (state: 0 | 1 | 2) => void
}

export interface Breaker {
  /** Runs `effect` unless the circuit is open; failures for which `counts` is true move it towards open. */
  readonly guard: <A, E, R>(effect: Effect.Effect<A, E, R>, counts?: (e: E) => boolean) => Effect.Effect<A, E | BreakerOpen, R>
  readonly isOpen: Effect.Effect<boolean>
}

const gauge = (s: State): 0 | 1 | 2 => (s._tag === "Closed" ? 0 : s._tag === "HalfOpen" ? 1 : 2)

export const makeBreaker = (options: BreakerOptions): Effect.Effect<Breaker> =>
  Effect.gen(function* () {
    const state = yield* Ref.make<State>({ _tag: "Closed", failures: 0 })
    const set = (s: State) => Effect.zipRight(Ref.set(state, s), Effect.sync(() => options.report(gauge(s))))
    options.report(0)

    // Admission: closed lets everyone through; open lets the first caller after the cooldown probe (half-open).
    const admit = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      return yield* Ref.modify(state, (s): [boolean, State] => {
        if (s._tag === "Closed") return [true, s]
        if (s._tag === "Open" && now >= s.until) return [true, { _tag: "HalfOpen" }]
        return [false, s]
      })
    })

    const onSuccess = Effect.flatMap(Ref.get(state), (s) =>
      s._tag === "Closed" && s.failures === 0 ? Effect.void : set({ _tag: "Closed", failures: 0 }))

    const onFailure = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const s = yield* Ref.get(state)
      const failures = s._tag === "Closed" ? s.failures + 1 : options.threshold
      yield* failures >= options.threshold
        ? set({ _tag: "Open", until: now + Duration.toMillis(options.cooldown) })
        : Ref.set(state, { _tag: "Closed", failures })
    })

    const guard = <A, E, R>(effect: Effect.Effect<A, E, R>, counts: (e: E) => boolean = () => true) =>
      Effect.gen(function* () {
        const before = yield* Ref.get(state)
        if (!(yield* admit)) return yield* new BreakerOpen({ dependency: options.dependency })
        const after = yield* Ref.get(state)
        if (after._tag !== before._tag) options.report(gauge(after))
        return yield* effect.pipe(
          Effect.tapBoth({
            onFailure: (e) => (counts(e) ? onFailure : onSuccess),
            onSuccess: () => onSuccess
          })
        )
      })

    return { guard, isOpen: Effect.map(Ref.get(state), (s) => s._tag === "Open") }
  })
