/**
 * Graceful shutdown. On SIGTERM readiness turns 503 at once, new API requests get 503 `Service Unavailable`,
 * in-flight requests get up to `drainSeconds` to finish, streams end through `started`, then servers close.
 */
import { Cause, Deferred, Duration, Effect, Fiber, identity, Option, Stream } from "effect"

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
  /**
   * Runs `effect` so that the drain interrupts it once the grace is over; `graceIsOver` then tells why it
   * stopped. The interruption ends the fiber `effect` runs on: use it through `bounded`, which gives the work a
   * fiber of its own and answers for it. Cheaper per call than racing it against `graceOver`: one watcher per
   * Shutdown stops them all, where a race forks fibers for every call.
   */
  readonly stopAtGraceOver: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** True once the grace is over. */
  readonly graceIsOver: Effect.Effect<boolean>
}

/** The part of `drainTimeout` work may use: all but a fifth of it, and at most 1 s, kept for answering and closing. */
export const graceOf = (drainTimeout: Duration.Duration): Duration.Duration => {
  const total = Duration.toMillis(drainTimeout)
  return Duration.millis(total - Math.min(1000, total / 5))
}

/** Completes when the work's grace is over: `grace` after draining started. */
export const graceOver = (shutdown: Pick<Shutdown, "started" | "grace">): Effect.Effect<void> =>
  Deferred.await(shutdown.started).pipe(Effect.zipRight(Effect.sleep(shutdown.grace)))

/**
 * Work under a deadline and, when a Shutdown is given, the drain's grace: fails with `onTimeout()` past `duration`
 * and with `onShutdown()` once the drain stopped it at the end of its grace. The timeout runs the work on a fiber of
 * its own, which is the one the drain interrupts; here that interruption is a cause to answer for. Interrupting the
 * caller still interrupts.
 */
export const bounded = <E2>(options: {
  readonly shutdown: Shutdown | undefined
  readonly duration: Duration.DurationInput
  readonly onTimeout: () => E2
  readonly onShutdown: () => E2
}) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | E2, R> => {
  const { shutdown } = options
  return effect.pipe(
    shutdown === undefined ? identity : shutdown.stopAtGraceOver,
    Effect.timeoutFail({ duration: options.duration, onTimeout: options.onTimeout }),
    Effect.catchAllCause((cause) =>
      shutdown !== undefined && Cause.isInterruptedOnly(cause)
        ? Effect.flatMap(shutdown.graceIsOver, (over) => (over ? Effect.fail(options.onShutdown()) : Effect.failCause(cause)))
        : Effect.failCause(cause)
    )
  )
}

type Watchers = Set<Fiber.RuntimeFiber<unknown, unknown>>

/**
 * A Shutdown whose stoppable work is interrupted by one watcher (started with the first such work) once the grace
 * is over, and refused outright after that. The watcher joins `watchers`, which the drain ends once it is done, so
 * its timer never holds the process up after a shutdown.
 */
const stopping = (started: Deferred.Deferred<void>, track: Shutdown["track"], grace: Duration.Duration, watchers: Watchers): Shutdown => {
  const running = new Set<Fiber.RuntimeFiber<unknown, unknown>>()
  let over = false
  let watching = false
  const watch = Effect.suspend(() => {
    if (watching) return Effect.void
    watching = true
    return Effect.forkDaemon(
      graceOver({ started, grace }).pipe(
        Effect.zipRight(Effect.suspend(() => {
          over = true
          return Effect.forEach(running, Fiber.interruptFork, { discard: true })
        }))
      )
    ).pipe(Effect.tap((fiber) => void watchers.add(fiber)))
  })
  const stopAtGraceOver = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.zipRight(
      watch,
      Effect.withFiberRuntime<A, E, R>((fiber) => {
        if (over) return Effect.interrupt
        running.add(fiber)
        return Effect.ensuring(effect, Effect.sync(() => running.delete(fiber)))
      })
    )
  return { started, track, grace, stopAtGraceOver, graceIsOver: Effect.sync(() => over) }
}

export class Drain extends Effect.Service<Drain>()("@kubemend/core/Drain", {
  effect: Effect.gen(function* () {
    const started = yield* Deferred.make<void>()
    const idle = yield* Deferred.make<void>()
    // A plain counter: every API request passes here, and nothing but the drain waits on it.
    let inflight = 0
    let draining = false
    const watchers: Watchers = new Set()
    const shutdowns = new Map<number, Shutdown>()

    const isDraining = Deferred.isDone(started)

    const release = Effect.suspend(() => --inflight <= 0 && draining ? Deferred.succeed(idle, undefined) : Effect.void)

    /** Counts an API request as in flight for the duration of `effect`. */
    const track = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.suspend(() => {
          inflight++
          return Effect.ensuring(restore(effect), release)
        })
      )

    /** Starts draining and waits until nothing is in flight or `timeout` passes; true when everything finished. */
    const drain = (timeout: Duration.Duration) =>
      Effect.gen(function* () {
        yield* Deferred.succeed(started, undefined)
        draining = true
        if (inflight <= 0) return true
        // Drains run inside finalizers, which are uninterruptible: the wait must opt back in so the timeout can end it.
        const finished = yield* Effect.timeoutOption(Effect.interruptible(Deferred.await(idle)), timeout)
        return Option.isSome(finished)
      }).pipe(
        Effect.ensuring(Effect.suspend(() => Effect.forEach(watchers, Fiber.interruptFork, { discard: true }))),
        Effect.withSpan("Drain.drain")
      )

    return {
      started,
      isDraining,
      inflight: Effect.sync(() => inflight),
      track,
      drain,
      /**
       * The drain as work under `drainTimeout` sees it. One per grace, however often asked for (A2A asks on every
       * request): each has a watcher, and watchers live until the drain.
       */
      shutdown: (drainTimeout: Duration.Duration): Shutdown => {
        const grace = graceOf(drainTimeout)
        const key = Duration.toMillis(grace)
        const known = shutdowns.get(key)
        if (known !== undefined) return known
        const made = stopping(started, track, grace, watchers)
        shutdowns.set(key, made)
        return made
      },
      /** Ends a stream when draining starts, so long-lived responses let the server close. */
      interruptOnDrain: <A, E, R>(stream: Stream.Stream<A, E, R>) => Stream.interruptWhen(stream, Deferred.await(started))
    } as const
  })
}) {}
