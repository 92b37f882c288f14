/**
 * Graceful shutdown. On SIGTERM readiness turns 503 at once, new API requests get 503 `Service Unavailable`,
 * in-flight requests get up to `drainSeconds` to finish, streams end through `started`, then servers close.
 */
import { Deferred, Duration, Effect, Option, Stream, SubscriptionRef } from "effect"

/**
 * In-flight work as the drain lets it run: it counts through `track`, and once draining has `started` it has
 * `grace` to finish; the rest of the drain time is for sending its last answer and closing the connection.
 */
export interface Shutdown {
  /** Completed when draining starts. */
  readonly started: Deferred.Deferred<void>
  /** Counts `effect` as in-flight work the drain waits for. */
  readonly track: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** How long work may still run once draining starts. */
  readonly grace: Duration.Duration
}

/** The part of `drainTimeout` work may use: all but a fifth of it, and at most 1 s, kept for answering and closing. */
export const graceOf = (drainTimeout: Duration.Duration): Duration.Duration => {
  const total = Duration.toMillis(drainTimeout)
  return Duration.millis(total - Math.min(1000, total / 5))
}

/** Completes when the work's grace is over: `grace` after draining started. */
export const graceOver = (shutdown: Shutdown): Effect.Effect<void> =>
  Deferred.await(shutdown.started).pipe(Effect.zipRight(Effect.sleep(shutdown.grace)))

export class Drain extends Effect.Service<Drain>()("@kubemend/core/Drain", {
  effect: Effect.gen(function* () {
    const started = yield* Deferred.make<void>()
    const inflight = yield* SubscriptionRef.make(0)

    const isDraining = Deferred.isDone(started)

    /** Counts an API request as in flight for the duration of `effect`. */
    const track = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.acquireUseRelease(
        SubscriptionRef.update(inflight, (n) => n + 1),
        () => effect,
        () => SubscriptionRef.update(inflight, (n) => n - 1)
      )

    /** Starts draining and waits until nothing is in flight or `timeout` passes; true when everything finished. */
    const drain = (timeout: Duration.Duration) =>
      Effect.gen(function* () {
        yield* Deferred.succeed(started, undefined)
        const idle = inflight.changes.pipe(Stream.takeUntil((n) => n <= 0), Stream.runDrain)
        // Drains run inside finalizers, which are uninterruptible: the wait must opt back in so the timeout can end it.
        const finished = yield* Effect.timeoutOption(Effect.interruptible(idle), timeout)
        return Option.isSome(finished)
      }).pipe(Effect.withSpan("Drain.drain"))

    return {
      started,
      isDraining,
      inflight: SubscriptionRef.get(inflight),
      track,
      drain,
      /** The drain as work under `drainTimeout` sees it. */
      shutdown: (drainTimeout: Duration.Duration): Shutdown => ({ started, track, grace: graceOf(drainTimeout) }),
      /** Ends a stream when draining starts, so long-lived responses let the server close. */
      interruptOnDrain: <A, E, R>(stream: Stream.Stream<A, E, R>) => Stream.interruptWhen(stream, Deferred.await(started))
    } as const
  })
}) {}
