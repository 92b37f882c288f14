/**
 * Authorization through SubjectAccessReview: per tool and console (`check`: verb `use` on `tools`/`console` in the
 * platform's API group) and per endpoint (`allows`: any verb/group/resource/name, e.g. `create` on the core
 * `services/kubemend-storage`). Answers are cached per (user, sorted groups, attributes) for `cacheTTL`. Fail closed:
 * a review error or timeout answers `false` and is not cached, so the next call asks again.
 */
import { Clock, Config, Context, Deferred, Duration, Effect, Exit, Layer } from "effect"
import { duration } from "./Config.ts"
import { type AccessReview, K8s } from "./K8s.ts"
import type { SarResource, SarRule, SarSubject } from "./Sar/Table.ts"
import { rulesAllow } from "./Sar/Table.ts"

export type { SarResource, SarRule, SarSubject } from "./Sar/Table.ts"
export { rulesAllow } from "./Sar/Table.ts"

export interface SarConfigShape {
  /** How long an allow or deny answer is reused (document 3 `apiFrontend.rbac.sarCacheTTL`). */
  readonly cacheTTL: Duration.Duration
  /** Deadline of one review; past it the call is denied. */
  readonly timeout: Duration.Duration
  /** Cap on cached answers; expired then oldest entries are dropped first. */
  readonly maxEntries: number
}

const sarConfig: Config.Config<SarConfigShape> = Config.map(
  duration("sarCacheTTL").pipe(Config.withDefault(Duration.seconds(30))),
  (cacheTTL) => ({ ...SarConfig.defaults, cacheTTL })
)

export class SarConfig extends Context.Tag("@kubemend/core/SarConfig")<SarConfig, SarConfigShape>() {
  static readonly defaults: SarConfigShape = {
    cacheTTL: Duration.seconds(30),
    timeout: Duration.seconds(2),
    maxEntries: 10_000
  }
  static readonly layer = (overrides: Partial<SarConfigShape> = {}) => Layer.succeed(SarConfig, { ...SarConfig.defaults, ...overrides })
  /** Reads document 3's `sarCacheTTL` (Go duration) relative to where the caller nests it (e.g. `rbac`). */
  static readonly layerConfig = (config: Config.Config<SarConfigShape> = sarConfig) => Layer.effect(SarConfig, config)
  /** `rbac.sarCacheTTL`, where the services' config files keep it. */
  static readonly layerRbac = Layer.effect(SarConfig, Config.nested(sarConfig, "rbac"))
}

/** Cache counters for the gateway's metrics. `coalesced` counts calls that joined a review already in flight. */
export interface SarStats {
  readonly hits: number
  readonly misses: number
  readonly coalesced: number
}

type Entry =
  | { readonly _tag: "Done"; readonly allowed: boolean; readonly expiresAt: number }
  | { readonly _tag: "Pending"; readonly deferred: Deferred.Deferred<boolean> }

/** What one check does: answer from the cache, wait for a review in flight, or start the review. */
type Step =
  | { readonly _tag: "Hit"; readonly allowed: boolean }
  | { readonly _tag: "Wait" | "Review"; readonly deferred: Deferred.Deferred<boolean> }

/** What is asked about, besides who asks (a SubjectAccessReview's `resourceAttributes`). */
export type SarAttributes = Omit<AccessReview, "user" | "groups">

const cacheKey = (s: SarSubject, a: SarAttributes) =>
  JSON.stringify([s.user, [...s.groups].sort(), a.verb, a.group, a.resource, a.namespace ?? "", a.name ?? ""])

const makeCached = Effect.gen(function* () {
  const k8s = yield* K8s
  const config = yield* SarConfig
  const scope = yield* Effect.scope
  const ttl = Duration.toMillis(config.cacheTTL)
  const entries = new Map<string, Entry>()
  const counters = { hits: 0, misses: 0, coalesced: 0 }

  const evict = (now: number) => {
    if (entries.size < config.maxEntries) return
    for (const [k, e] of entries) if (e._tag === "Done" && e.expiresAt <= now) entries.delete(k)
    for (const [k, e] of entries) {
      if (entries.size < config.maxEntries) break
      if (e._tag === "Done") entries.delete(k)
    }
  }

  // Runs detached in the service scope so one caller's interruption does not fail the others waiting on the
  // same review; every exit path settles the Deferred, so no waiter hangs.
  const review = (key: string, deferred: Deferred.Deferred<boolean>, s: SarSubject, a: SarAttributes) =>
    k8s.subjectAccessReview({ user: s.user, groups: s.groups, ...a }).pipe(
      Effect.timeout(config.timeout),
      Effect.onExit((exit) =>
        Exit.isSuccess(exit)
          ? Clock.currentTimeMillis.pipe(
            Effect.tap((now) => Effect.sync(() => entries.set(key, { _tag: "Done", allowed: exit.value, expiresAt: now + ttl }))),
            Effect.zipRight(Deferred.succeed(deferred, exit.value))
          )
          : Effect.logWarning("SubjectAccessReview failed; denying", exit.cause).pipe(
            Effect.zipRight(Effect.sync(() => {
              if (entries.get(key)?._tag === "Pending") entries.delete(key)
            })),
            Effect.zipRight(Deferred.succeed(deferred, false))
          )
      ),
      Effect.ignore,
      Effect.forkIn(scope)
    )

  const allows = Effect.fn("Sar.allows")(function* (principal: SarSubject, attributes: SarAttributes) {
    const key = cacheKey(principal, attributes)
    const now = yield* Clock.currentTimeMillis
    const fiberId = yield* Effect.fiberId
    const step = yield* Effect.sync((): Step => {
      const e = entries.get(key)
      if (e?._tag === "Done" && e.expiresAt > now) {
        counters.hits++
        return { _tag: "Hit", allowed: e.allowed }
      }
      if (e?._tag === "Pending") {
        counters.coalesced++
        return { _tag: "Wait", deferred: e.deferred }
      }
      entries.delete(key)
      evict(now)
      const deferred = Deferred.unsafeMake<boolean>(fiberId)
      entries.set(key, { _tag: "Pending", deferred })
      counters.misses++
      return { _tag: "Review", deferred }
    })
    if (step._tag === "Hit") return step.allowed
    if (step._tag === "Review") yield* review(key, step.deferred, principal, attributes)
    return yield* Deferred.await(step.deferred)
  })

  const check = (principal: SarSubject, resource: SarResource, name?: string) =>
    allows(principal, { verb: "use", group: k8s.apiGroup, resource, ...(name === undefined ? {} : { name }) })

  return {
    check,
    allows,
    stats: Effect.sync((): SarStats => ({ ...counters })),
    /** Drops every cached answer (a test hook and an escape hatch after an RBAC change). */
    invalidate: Effect.sync(() => {
      for (const [k, e] of entries) if (e._tag === "Done") entries.delete(k)
    })
  }
})

const zeroStats = Effect.succeed<SarStats>({ hits: 0, misses: 0, coalesced: 0 })

export class Sar extends Effect.Service<Sar>()("@kubemend/core/Sar", {
  scoped: makeCached,
  dependencies: [SarConfig.layer()]
}) {
  /** Allows everything (unit tests of code that is not about authorization). */
  static readonly layerAllowAll = Layer.succeed(
    Sar,
    Sar.make({
      check: (_principal: SarSubject, _resource: SarResource, _name?: string) => Effect.succeed(true),
      allows: (_principal: SarSubject, _attributes: SarAttributes) => Effect.succeed(true),
      stats: zeroStats,
      invalidate: Effect.void
    })
  )

  /** Allows exactly what `rules` grant; no cache. */
  static readonly layerTable = (rules: ReadonlyArray<SarRule>) =>
    Layer.succeed(
      Sar,
      Sar.make({
        check: (principal: SarSubject, resource: SarResource, name?: string) => Effect.succeed(rulesAllow(rules, { ...principal, resource, name })),
        allows: (principal: SarSubject, attributes: SarAttributes) =>
          Effect.succeed(rulesAllow(rules, { ...principal, resource: attributes.resource, name: attributes.name })),
        stats: zeroStats,
        invalidate: Effect.void
      })
    )
}
