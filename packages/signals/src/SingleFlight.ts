/**
 * Concurrent misses for one key share one call: a burst of identical signals resolves its target and reviews its
 * sender once, not once per request. Only the call in flight is shared; its result is the caller's to cache.
 */
import { Deferred, Effect, Exit, FiberId } from "effect"

export const makeSingleFlight = <A, E>() => {
  const inFlight = new Map<string, Deferred.Deferred<A, E>>()
  return <R>(key: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      const pending = inFlight.get(key)
      if (pending !== undefined) return Deferred.await(pending)
      const deferred = Deferred.unsafeMake<A, E>(FiberId.none)
      inFlight.set(key, deferred)
      return effect.pipe(
        Effect.onExit((exit) => {
          inFlight.delete(key)
          return Deferred.done(deferred, Exit.isInterrupted(exit) ? Exit.die("the shared call was interrupted") : exit)
        })
      )
    })
}
