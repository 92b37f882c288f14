/**
 * Valkey with a memory fallback, as one store that never fails. The first failed call switches this replica to
 * its own memory (per-replica caps and limits, records only it wrote) and reports the state; from then on calls
 * do not wait on Valkey at all. A ping every `recoveryInterval` decides when Valkey is back, and calls go to it
 * again. Transitions are logged once each, not per call.
 */
import { type Duration, Effect, Option, Ref, Schedule, Stream } from "effect"
import type { SharedStateService, Store } from "./Store.ts"

export interface ResilientOptions {
  readonly recoveryInterval: Duration.Duration
  /** `host:port`, for messages. */
  readonly address: string
  /** Told of every transition: true when degraded. */
  readonly onChange: (degraded: boolean) => Effect.Effect<void>
}

const describe = (e: { readonly command: string; readonly cause: unknown }) => `${e.command}: ${e.cause instanceof Error ? e.cause.message : String(e.cause)}`

export const resilient = <E extends { readonly command: string; readonly cause: unknown }>(
  primary: Store<E>,
  fallback: Store<never>,
  options: ResilientOptions
) =>
  Effect.gen(function* () {
    const degraded = yield* Ref.make(Option.none<string>())
    const annotations = { valkey: options.address }

    const degrade = (e: E) =>
      Ref.modify(degraded, (d) => [Option.isNone(d), Option.orElse(d, () => Option.some(`Valkey at ${options.address} unreachable (${describe(e)})`))]).pipe(
        Effect.tap((changed) =>
          changed
            ? Effect.zipRight(
              Effect.logWarning("shared state: Valkey unreachable; sessions and rate limits are counted per replica until it is back").pipe(
                Effect.annotateLogs({ ...annotations, error: describe(e) })
              ),
              options.onChange(true)
            )
            : Effect.void
        )
      )

    const recover = Effect.gen(function* () {
      if (Option.isNone(yield* Ref.get(degraded))) return
      yield* primary.ping
      yield* Ref.set(degraded, Option.none())
      yield* Effect.logInfo("shared state: Valkey is back; sessions and rate limits are shared again").pipe(Effect.annotateLogs(annotations))
      yield* options.onChange(false)
    }).pipe(Effect.ignore)
    // Not only while degraded: a loop that always runs needs no start/stop bookkeeping, and a skipped ping is free.
    yield* recover.pipe(Effect.repeat(Schedule.spaced(options.recoveryInterval)), Effect.forkScoped)
    yield* options.onChange(false)

    const route = <A>(op: <F>(s: Store<F>) => Effect.Effect<A, F>): Effect.Effect<A> =>
      Effect.flatMap(Ref.get(degraded), (d) =>
        Option.isSome(d) ? op(fallback) : op(primary).pipe(Effect.catchAll((e) => Effect.zipRight(degrade(e), op(fallback)))))

    const service: SharedStateService = {
      backend: "valkey",
      degraded: Ref.get(degraded),
      get: (k) =>
        route((s) => s.get(k)),
      put: (k, v, ttl) => route((s) => s.put(k, v, ttl)),
      remove: (k) => route((s) => s.remove(k)),
      acquireSlot: (id, owner, limits, ttl) => route((s) => s.acquireSlot(id, owner, limits, ttl)),
      touchSlot: (id, owner, ttl) => route((s) => s.touchSlot(id, owner, ttl)),
      // Both: a slot taken in Valkey must not outlive its session because it was released while degraded, and
      // the reverse.
      releaseSlot: (id, owner) => Effect.zipRight(fallback.releaseSlot(id, owner), route((s) => s.releaseSlot(id, owner))),
      slotsInUse: route((s) => s.slotsInUse),
      take: (k, spec) => route((s) => s.take(k, spec)),
      takeAll: (takes) => route((s) => s.takeAll(takes)),
      giveBack: (k, spec) => route((s) => s.giveBack(k, spec)),
      announce: (topic, message) => route((s) => s.announce(topic, message)),
      // Valkey's while it answers, this replica's own while degraded; Valkey's say `Missed` once it is back.
      notices: (topic) => Stream.merge(primary.notices(topic), fallback.notices(topic)),
      ping: route((s) => s.ping)
    }
    return service
  })
