/**
 * Lease semantics over a small store (live: coordination.k8s.io/v1 through client-node; memory: the in-memory store),
 * so both layers decide alike. Every write carries the resourceVersion it read: two contenders cannot both win, the
 * loser sees 409, reads again and decides again. Expiry is judged with Effect's Clock (TestClock in tests):
 * a lease is free once `renewTime + leaseDurationSeconds` has passed.
 */
import { Clock, Duration, Effect, Option, Schedule } from "effect"
import { K8sLeaseHeld, K8sNotFound, type K8sUnavailable, type Lease } from "../K8s.ts"
import type { K8sSettings } from "./Config.ts"
import { type HttpFailure, unavailable } from "./Retry.ts"

export interface LeaseRecord {
  readonly name: string
  /** `""` when nobody holds it. */
  readonly holder: string
  readonly durationSeconds: number
  readonly acquireTime: Date | undefined
  readonly renewTime: Date | undefined
  /** Absent on records about to be created. */
  readonly resourceVersion?: string
}

/** Raw operations; each already runs under the request policy. 409 from `replace`/`remove` means a stale version. */
export interface LeaseStore {
  readonly get: (name: string) => Effect.Effect<Option.Option<LeaseRecord>, HttpFailure>
  readonly create: (record: LeaseRecord) => Effect.Effect<LeaseRecord, HttpFailure>
  readonly replace: (record: LeaseRecord) => Effect.Effect<LeaseRecord, HttpFailure>
  readonly remove: (name: string, resourceVersion: string | undefined) => Effect.Effect<void, HttpFailure>
  readonly list: Effect.Effect<ReadonlyArray<LeaseRecord>, HttpFailure>
}

export interface LeaseOps {
  readonly acquire: (name: string, holder: string, ttl: Duration.Duration) => Effect.Effect<Lease, K8sLeaseHeld | K8sUnavailable>
  readonly takeover: (name: string, holder: string, ttl: Duration.Duration) => Effect.Effect<Lease, K8sUnavailable>
  readonly renew: (name: string, holder: string) => Effect.Effect<Lease, K8sLeaseHeld | K8sNotFound | K8sUnavailable>
  readonly release: (name: string, holder: string) => Effect.Effect<void, K8sUnavailable>
  readonly list: (prefix: string) => Effect.Effect<ReadonlyArray<Lease>, K8sUnavailable>
}

export const toLease = (r: LeaseRecord): Lease => {
  const acquiredAt = r.acquireTime ?? r.renewTime ?? new Date(0)
  return {
    name: r.name,
    holder: r.holder,
    acquiredAt,
    renewedAt: r.renewTime ?? acquiredAt,
    ttl: Duration.seconds(r.durationSeconds)
  }
}

export const isExpired = (r: LeaseRecord, now: number): boolean => {
  const last = r.renewTime ?? r.acquireTime
  return last === undefined || last.getTime() + r.durationSeconds * 1000 <= now
}

/** leaseDurationSeconds is an integer; round up so a lease never lives shorter than asked. */
const seconds = (ttl: Duration.Duration): number => Math.max(1, Math.ceil(Duration.toMillis(ttl) / 1000))

/** A write lost a race (409): read again and decide again. */
class Raced {
  readonly _tag = "Raced"
  constructor(readonly failure: HttpFailure) {}
}

export const make = (store: LeaseStore, settings: K8sSettings): LeaseOps => {
  const raced = (e: HttpFailure) => (e.status === 409 ? new Raced(e) : unavailable(e))
  const write = <A>(eff: Effect.Effect<A, HttpFailure>) => Effect.mapError(eff, raced)
  const read = (name: string) => Effect.mapError(store.get(name), unavailable)

  // client-go's conflict schedule; when it runs out the lease is too contended to say who holds it.
  const retryRaces = <A, E>(eff: Effect.Effect<A, E | Raced>): Effect.Effect<A, E | K8sUnavailable> =>
    eff.pipe(
      Effect.retry(
        Schedule.exponential(settings.conflictBaseDelay).pipe(
          Schedule.jittered,
          Schedule.intersect(Schedule.recurs(Math.max(0, settings.conflictTries - 1))),
          Schedule.whileInput((e: E | Raced) => e instanceof Raced)
        )
      ),
      Effect.catchIf((e): e is Raced => e instanceof Raced, (e) => Effect.fail(unavailable(e.failure)))
    )

  /** Create, re-take our own, or take over; `blocked` says whether the current holder keeps it. */
  const claim = <E>(
    name: string,
    holder: string,
    ttl: Duration.Duration,
    blocked: (current: LeaseRecord, now: number) => Option.Option<E>
  ) =>
    retryRaces(
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const current = yield* read(name)
        const fresh = { name, holder, durationSeconds: seconds(ttl), acquireTime: new Date(now), renewTime: new Date(now) }
        if (Option.isNone(current)) return toLease(yield* write(store.create(fresh)))
        const c = current.value
        const versioned = c.resourceVersion === undefined ? {} : { resourceVersion: c.resourceVersion }
        if (c.holder === holder) {
          return toLease(yield* write(store.replace({ ...c, durationSeconds: fresh.durationSeconds, renewTime: fresh.renewTime })))
        }
        const refusal = blocked(c, now)
        if (Option.isSome(refusal)) return yield* Effect.fail(refusal.value)
        return toLease(yield* write(store.replace({ ...fresh, ...versioned })))
      })
    )

  const renew = (name: string, holder: string) =>
    retryRaces(
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const current = yield* read(name)
        if (Option.isNone(current) || current.value.holder === "") return yield* new K8sNotFound({ kind: "Lease", name })
        if (current.value.holder !== holder) return yield* new K8sLeaseHeld({ name, holder: current.value.holder })
        return toLease(yield* write(store.replace({ ...current.value, renewTime: new Date(now) })))
      })
    )

  const release = (name: string, holder: string) =>
    retryRaces(
      Effect.gen(function* () {
        const current = yield* read(name)
        // Not ours (or already gone): releasing must never free someone else's lease.
        if (Option.isNone(current) || current.value.holder !== holder) return
        yield* store.remove(name, current.value.resourceVersion).pipe(
          Effect.catchIf((e) => e.status === 404, () => Effect.void),
          write
        )
      })
    )

  const list = (prefix: string) =>
    store.list.pipe(
      Effect.map((all) => all.filter((r) => r.name.startsWith(prefix) && r.holder !== "").map(toLease)),
      Effect.mapError(unavailable)
    )

  return {
    acquire: (name, holder, ttl) =>
      claim(name, holder, ttl, (c, now) => c.holder !== "" && !isExpired(c, now) ? Option.some(new K8sLeaseHeld({ name, holder: c.holder })) : Option.none()),
    takeover: (name, holder, ttl) => claim(name, holder, ttl, () => Option.none<never>()),
    renew,
    release,
    list
  }
}
