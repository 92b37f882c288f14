/**
 * A controller work queue with client-go's semantics: a key is queued at most once (dedup), a key being processed
 * is never handed to a second worker (an add during processing is remembered and queued when it is done), failed
 * keys come back after a capped exponential backoff per key, and `addAfter` schedules a key for later (the
 * `requeueAfter` of a reconcile). Bounded: adds wait when `capacity` distinct keys are already queued.
 *
 * Delays run on Effect's Clock, so TestClock drives them in tests.
 */
import { Clock, Duration, Effect, FiberMap, Queue, Schedule, type Scope } from "effect"

export interface WorkQueueOptions {
  readonly name: string
  /** Distinct keys that can wait in the queue. */
  readonly capacity: number
  readonly backoffBase: Duration.DurationInput
  readonly backoffMax: Duration.DurationInput
  /** Called on every change of depth, add and retry (metrics). */
  readonly observer?: WorkQueueObserver
}

export interface WorkQueueObserver {
  readonly depth: (name: string, depth: number) => void
  readonly added: (name: string) => void
  readonly retried: (name: string) => void
  /** How long the key waited in the queue before a worker took it. */
  readonly waited: (name: string, seconds: number) => void
}

export interface WorkQueue {
  readonly name: string
  /** Queue `key` now (no-op when already queued; remembered when in flight). */
  readonly add: (key: string) => Effect.Effect<void>
  /** Queue `key` after `delay`; an earlier pending schedule for the key wins over a later one. */
  readonly addAfter: (key: string, delay: Duration.DurationInput) => Effect.Effect<void>
  /** Queue `key` after its next backoff delay (one more failure of this key). */
  readonly addRateLimited: (key: string) => Effect.Effect<void>
  /** Forget the failures of `key` (its next backoff starts again from the base). */
  readonly forget: (key: string) => Effect.Effect<void>
  /** Failures recorded for `key` since it last succeeded. */
  readonly retries: (key: string) => Effect.Effect<number>
  /** The next key to process (waits while the queue is empty); the key is now in flight. */
  readonly take: Effect.Effect<string>
  /** Processing of `key` finished: if it was added meanwhile, it is queued again. */
  readonly done: (key: string) => Effect.Effect<void>
  readonly depth: Effect.Effect<number>
}

/** Capped exponential delays: base, 2·base, 4·base … up to `max` (the union takes the shorter delay of the two). */
export const backoffSchedule = (base: Duration.DurationInput, max: Duration.DurationInput) =>
  Schedule.exponential(base, 2).pipe(Schedule.union(Schedule.spaced(max)))

/** The delay after the `failures`-th failure (1-based), as the backoff schedule computes it. */
export const backoffDelay = (
  base: Duration.DurationInput,
  max: Duration.DurationInput,
  failures: number
): Effect.Effect<Duration.Duration> =>
  Schedule.run(Schedule.delays(backoffSchedule(base, max)), 0, Array.from({ length: failures }, () => undefined)).pipe(
    Effect.map((delays) => [...delays].at(-1) ?? Duration.zero)
  )

export const make = (options: WorkQueueOptions): Effect.Effect<WorkQueue, never, Scope.Scope> =>
  Effect.gen(function* () {
    const queue = yield* Effect.acquireRelease(Queue.bounded<string>(options.capacity), Queue.shutdown)
    const timers = yield* FiberMap.make<string>()
    // Plain mutable state: every access below is synchronous, so no two fibers interleave inside one update.
    const dirty = new Set<string>()
    const processing = new Set<string>()
    const failures = new Map<string, number>()
    const dueAt = new Map<string, number>()
    const queuedAt = new Map<string, number>()
    const obs = options.observer
    // Queue.size counts waiting takers as negative items: idle workers are not negative depth.
    const depth = Effect.map(Queue.size(queue), (n) => Math.max(0, n))
    const report = Effect.flatMap(depth, (n) => Effect.sync(() => obs?.depth(options.name, n)))

    const add = (key: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (dirty.has(key)) return Effect.void
        dirty.add(key)
        obs?.added(options.name)
        if (processing.has(key)) return Effect.void
        return Clock.currentTimeMillis.pipe(
          Effect.tap((now) => Effect.sync(() => queuedAt.set(key, now))),
          Effect.zipRight(Queue.offer(queue, key)),
          Effect.zipRight(report)
        )
      })

    const addAfter = (key: string, delay: Duration.DurationInput): Effect.Effect<void> =>
      Effect.gen(function* () {
        const millis = Duration.toMillis(Duration.decode(delay))
        if (millis <= 0) return yield* add(key)
        const due = (yield* Clock.currentTimeMillis) + millis
        const pending = dueAt.get(key)
        if (pending !== undefined && pending <= due) return
        dueAt.set(key, due)
        // Replacing the key's fiber cancels the later schedule it held.
        yield* FiberMap.run(
          timers,
          key,
          Effect.sleep(Duration.millis(millis)).pipe(
            Effect.zipRight(Effect.sync(() => dueAt.delete(key))),
            Effect.zipRight(add(key))
          )
        )
      })

    const addRateLimited = (key: string): Effect.Effect<void> =>
      Effect.gen(function* () {
        const n = (failures.get(key) ?? 0) + 1
        failures.set(key, n)
        obs?.retried(options.name)
        yield* addAfter(key, yield* backoffDelay(options.backoffBase, options.backoffMax, n))
      })

    const take = Effect.gen(function* () {
      const key = yield* Queue.take(queue)
      processing.add(key)
      dirty.delete(key)
      const since = queuedAt.get(key)
      queuedAt.delete(key)
      if (since !== undefined) {
        const now = yield* Clock.currentTimeMillis
        obs?.waited(options.name, (now - since) / 1000)
      }
      yield* report
      return key
    })

    const done = (key: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        processing.delete(key)
        if (!dirty.has(key)) return Effect.void
        return Clock.currentTimeMillis.pipe(
          Effect.tap((now) => Effect.sync(() => queuedAt.set(key, now))),
          Effect.zipRight(Queue.offer(queue, key)),
          Effect.zipRight(report)
        )
      })

    return {
      name: options.name,
      add,
      addAfter,
      addRateLimited,
      forget: (key) => Effect.sync(() => void failures.delete(key)),
      retries: (key) => Effect.sync(() => failures.get(key) ?? 0),
      take,
      done,
      depth
    } satisfies WorkQueue
  })
