/**
 * The Lease behind each interactive session, `svc-interactive-<rr>`, held by the acting user. While the session
 * is active a fiber renews it at a third of its TTL; after `inactivityTimeout` without an action renewal stops and
 * the lease lapses (the session reads `disconnected` and anyone may start it again). Expired leases left behind by
 * an earlier process are reclaimed at start.
 */
import { Clock, Duration, Effect, FiberMap, Ref, Schedule } from "effect"
import { K8s } from "@kubemend/core/K8s"
import { AgentConfig } from "../AgentConfig.ts"

export const leasePrefix = "svc-interactive-"
export const leaseName = (rr: string) => `${leasePrefix}${rr}`

/** Holder used only to delete expired leases at start. */
const reclaimer = "kubemend-agent-reclaimer"

export class SessionLeases extends Effect.Service<SessionLeases>()("@kubemend/agent/SessionLeases", {
  scoped: Effect.gen(function* () {
    const k8s = yield* K8s
    const config = yield* AgentConfig
    const ttl = config.interactive.leaseTTL
    const renewals = yield* FiberMap.make<string>()

    const reclaimExpired = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const leases = yield* k8s.listLeases(leasePrefix)
      const expired = leases.filter((l) => l.renewedAt.getTime() + Duration.toMillis(l.ttl) <= now)
      yield* Effect.forEach(expired, (l) =>
        k8s.takeoverLease(l.name, reclaimer, Duration.seconds(1)).pipe(
          Effect.zipRight(k8s.releaseLease(l.name, reclaimer)),
          Effect.catchAll((e) => Effect.logWarning("could not reclaim lease", e).pipe(Effect.annotateLogs("lease", l.name)))
        ), { discard: true })
      if (expired.length > 0) yield* Effect.logInfo("reclaimed orphaned interactive leases").pipe(Effect.annotateLogs("count", expired.length))
    }).pipe(Effect.catchAll((e) => Effect.logWarning("orphaned lease sweep failed", e)))
    if (config.interactive.enabled) yield* reclaimExpired

    /**
     * Renews for `holder` until the session ends (`active` false), goes quiet (`lastActivity` older than the
     * inactivity timeout) or the lease moved to someone else; `onLapse` runs when renewal ends for any reason.
     */
    const keepAlive = (
      rr: string,
      holder: string,
      lastActivity: Ref.Ref<number>,
      active: Effect.Effect<boolean>,
      onLapse: Effect.Effect<void>
    ) =>
      FiberMap.run(
        renewals,
        rr,
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          if (!(yield* active) || now - (yield* Ref.get(lastActivity)) > Duration.toMillis(config.interactive.inactivityTimeout)) {
            return yield* Effect.fail("inactive" as const)
          }
          yield* k8s.renewLease(leaseName(rr), holder)
        }).pipe(
          Effect.delay(Duration.divide(ttl, 3).pipe((d) => (d._tag === "Some" ? d.value : ttl))),
          // A transient renewal failure is tried again on the next tick; losing the lease or going quiet ends it.
          Effect.catchIf((e) => e !== "inactive" && e._tag === "K8sUnavailable", (e) => Effect.logWarning("lease renewal failed", e)),
          Effect.repeat(Schedule.forever),
          Effect.catchAll(() => Effect.void),
          Effect.zipRight(onLapse)
        )
      )

    const stop = (rr: string) => FiberMap.remove(renewals, rr)

    return {
      ttl,
      acquire: (rr: string, holder: string) => k8s.acquireLease(leaseName(rr), holder, ttl),
      takeover: (rr: string, holder: string) => k8s.takeoverLease(leaseName(rr), holder, ttl),
      release: (rr: string, holder: string) => Effect.zipRight(stop(rr), k8s.releaseLease(leaseName(rr), holder)),
      keepAlive,
      stop,
      reclaimExpired
    } as const
  })
}) {}
