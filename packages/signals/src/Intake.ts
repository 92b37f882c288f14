/**
 * From signal to RemediationRequest: resolve the target, fingerprint it, then under that fingerprint's lock either
 * fold the signal into the request already open for it (or ended less than `deduplicationCooldown` ago) or create a
 * new one with the platform's ServiceAccount. Deduplication counts are written back to `status.deduplication` by one
 * writer per request, so a burst of identical alerts costs one create and a handful of status patches, not one
 * API call each (the duplicates of one `deduplicationWriteDelay` share a write). The Kubernetes API down fails the
 * signal as `DependencyUnavailable` (503: the sender retries).
 */
import { Audit } from "@kubemend/core/Audit"
import { DependencyUnavailable } from "@kubemend/core/Errors"
import { K8s, type K8sUnavailable, type KubeObject } from "@kubemend/core/K8s"
import { Clock, Duration, Effect, Exit, Schedule } from "effect"
import { Breaker } from "./Breaker.ts"
import { entryFrom, type Entry, makeIndex, observe } from "./Tracked.ts"
import { fingerprintOf, type RawTarget, type Signal, type Target } from "./Signal.ts"
import { SignalsConfig } from "./SignalsConfig.ts"
import { SignalsMetrics } from "./SignalsMetrics.ts"
import { signalAudit } from "./SignalAudit.ts"
import { resolveTarget, Unresolvable } from "./Targets.ts"
import { requestFor } from "./Request.ts"
import { followRequests } from "./RequestWatch.ts"
import { makeSingleFlight } from "./SingleFlight.ts"

export interface RequestRef {
  readonly name: string
  readonly namespace: string
}

export type Outcome =
  | { readonly status: "accepted"; readonly fingerprint: string; readonly remediationRequestRef: RequestRef }
  | { readonly status: "deduplicated"; readonly fingerprint: string; readonly count: number; readonly remediationRequestRef: RequestRef }
  | { readonly status: "resolved"; readonly fingerprint: string; readonly remediationRequestRef?: RequestRef }

export { Unresolvable }

const stripes = 256
const countWriters = 4
const isOutage = (e: unknown) => typeof e === "object" && e !== null && (e as { _tag?: string })._tag === "K8sUnavailable"
const unavailable = (e: K8sUnavailable) =>
  new DependencyUnavailable({ dependency: "kubernetes", detail: `the Kubernetes API is unavailable (${e.message}); retry later` })

export class Intake extends Effect.Service<Intake>()("@kubemend/signals/Intake", {
  scoped: Effect.gen(function* () {
    const k8s = yield* K8s
    const config = yield* SignalsConfig
    const metrics = yield* SignalsMetrics
    const breaker = yield* Breaker
    const audit = yield* Audit
    const scope = yield* Effect.scope
    const index = makeIndex(config.maxTracked)
    // Count writes go out a few at a time: under load they wait (and fold more duplicates into one write) rather than
    // take the CPU and the API from new signals.
    const writers = yield* Effect.makeSemaphore(countWriters)
    const locks = yield* Effect.forEach(Array.from({ length: stripes }), () => Effect.makeSemaphore(1))
    const lockFor = (fp: string) => locks[Number.parseInt(fp.slice(0, 2), 16) % stripes]!
    const fpLabel = `${k8s.apiGroup}/signal-fingerprint`
    const refresh = Duration.toMillis(config.phaseRefresh)
    const cooldown = Duration.toMillis(config.deduplicationCooldown)
    // Resolved targets are remembered as briefly as phases: a burst resolves its pod's owner chain once.
    const targets = new Map<string, { readonly target: Target; readonly at: number }>()
    const resolving = makeSingleFlight<Target, Unresolvable | DependencyUnavailable>()
    const requests = followRequests(k8s, index, fpLabel)
    yield* Effect.forkScoped(requests.run)
    const ref = (name: string): RequestRef => ({ name, namespace: k8s.namespace })
    const api = <A, E>(effect: Effect.Effect<A, E>) =>
      breaker.run(effect, isOutage).pipe(
        Effect.catchIf((e): e is K8sUnavailable & E => isOutage(e), (e) => Effect.fail(unavailable(e as K8sUnavailable)))
      )

    const target = (raw: RawTarget, now: number) => {
      const key = JSON.stringify([raw.kind, raw.namespace, raw.name])
      const hit = targets.get(key)
      if (hit !== undefined && now - hit.at < refresh) return Effect.succeed(hit.target)
      return resolving(key, api(resolveTarget(raw).pipe(Effect.provideService(K8s, k8s)))).pipe(
        Effect.tap((t) =>
          Effect.sync(() => {
            if (targets.size >= config.maxTracked) targets.clear()
            targets.set(key, { target: t, at: now })
          })
        )
      )
    }

    /**
     * The request for `fp`: from the index while the watch keeps it in step with the cluster; otherwise as the cluster
     * has it (newest first) when the index does not know it or is stale.
     */
    const lookup = (fp: string, now: number) =>
      Effect.gen(function* () {
        const known = index.get(fp)
        if (requests.synced()) return known
        if (known !== undefined && now - known.checkedAt < refresh) return known
        if (known !== undefined) {
          const rr = yield* api(
            k8s.getCr("remediationrequests", known.rrName).pipe(
              Effect.map((o): KubeObject | undefined => o),
              Effect.catchTag("K8sNotFound", () => Effect.succeed(undefined))
            )
          )
          if (rr !== undefined) return (observe(known, rr, now), known)
          index.delete(fp)
        }
        const list = yield* api(k8s.listCr("remediationrequests", { labelSelector: `${fpLabel}=${fp.slice(0, 63)}` }))
        const newest = list.items
          .filter((o) => (o.spec as { signalFingerprint?: string } | undefined)?.signalFingerprint === fp)
          .sort((a, b) => (b.metadata.creationTimestamp ?? "").localeCompare(a.metadata.creationTimestamp ?? ""))[0]
        if (newest === undefined) return undefined
        const entry = entryFrom(newest, now)
        index.set(fp, entry)
        return entry
      })

    // One writer per request: it waits `deduplicationWriteDelay` so the duplicates of that window share one write,
    // and while a write is out, newer counts wait for the next one.
    const flush = (entry: Entry, delay = config.deduplicationWriteDelay): Effect.Effect<void> =>
      Effect.gen(function* () {
        if (entry.flushing || !entry.dirty) return
        entry.flushing = true
        yield* Effect.sleep(delay)
        while (entry.dirty) {
          yield* writers.withPermits(1)(Effect.suspend(() => {
            entry.dirty = false
            const deduplication = { firstSeenAt: entry.firstSeen, lastSeenAt: entry.lastSeen, occurrenceCount: entry.count }
            return k8s.patchCrStatus("remediationrequests", entry.rrName, { deduplication }).pipe(
              Effect.retry({ schedule: Schedule.exponential("100 millis").pipe(Schedule.intersect(Schedule.recurs(4))), while: isOutage }),
              Effect.catchAll((e) =>
                Effect.logWarning("could not write the deduplication count", e).pipe(
                  Effect.annotateLogs({ remediationRequest: entry.rrName })
                )
              )
            )
          }))
        }
      }).pipe(Effect.onExit((exit) =>
        Effect.suspend(() => {
          entry.flushing = false
          // A count that came between the last write and this exit gets its own writer (not after interruption: shutdown).
          return entry.dirty && !Exit.isInterrupted(exit) ? Effect.asVoid(Effect.forkIn(flush(entry), scope)) : Effect.void
        })
      ))

    // On shutdown, what is counted but unwritten goes out (within the drain, as the layer closes).
    yield* Effect.addFinalizer(() =>
      Effect.forEach(index.dirty(), (e) => flush(e, Duration.zero), { concurrency: 8, discard: true }).pipe(
        Effect.timeout(Duration.seconds(5)),
        Effect.ignore
      )
    )

    const deduplicate = (signal: Signal, fp: string, entry: Entry, at: string) =>
      Effect.gen(function* () {
        entry.count++
        entry.lastSeen = at
        entry.dirty = true
        index.set(fp, entry)
        // The writer already waiting or writing takes this count too; no fiber per duplicate.
        if (!entry.flushing) yield* Effect.forkIn(flush(entry), scope)
        yield* metrics.deduplicated(signal.name)
        yield* audit.emit(signalAudit.deduplicated(signal, fp, entry, k8s.namespace, at))
        return { status: "deduplicated", fingerprint: fp, count: entry.count, remediationRequestRef: ref(entry.rrName) } as const
      })

    const create = (signal: Signal, fp: string, t: Target, now: number, at: string) =>
      Effect.gen(function* () {
        const body = requestFor(signal, fp, t, { apiGroup: k8s.apiGroup, receivedAt: at, now, maxPayloadBytes: config.maxOriginalPayloadBytes })
        const rr = yield* api(k8s.createCr("remediationrequests", body)).pipe(
          Effect.tapError((e) => metrics.creationError(e._tag === "DependencyUnavailable" ? "api_unavailable" : "conflict")),
          Effect.catchTag("K8sConflict", (e) => Effect.fail(unavailable({ message: e.message } as K8sUnavailable)))
        )
        const entry = entryFrom(rr, now)
        entry.firstSeen = at
        entry.lastSeen = at
        index.set(fp, entry)
        yield* metrics.created(signal.source, "success")
        yield* audit.emit(signalAudit.received(signal, fp, t, body, k8s.namespace, at))
        return { status: "accepted", fingerprint: fp, remediationRequestRef: ref(rr.metadata.name) } as const
      })

    const ingest = Effect.fn("Intake.ingest")(function* (signal: Signal) {
      yield* metrics.received(signal.source, signal.severity)
      if ("unresolvable" in signal.target) {
        yield* metrics.rejected(signal.target.unresolvable)
        return yield* Effect.fail(
          new Unresolvable(signal.target.unresolvable, "the signal names no namespace and no resource (pod, deployment, statefulset, daemonset, node, …)")
        )
      }
      const now = yield* Clock.currentTimeMillis
      const at = new Date(now).toISOString()
      const t = yield* target(signal.target, now).pipe(Effect.tapError((e) => e instanceof Unresolvable ? metrics.rejected(e.reason) : Effect.void))
      const fp = fingerprintOf(signal.name, t)
      if (signal.status === "resolved") {
        const known = index.get(fp)
        yield* audit.emit(signalAudit.resolved(signal, fp, t, known?.rrName, k8s.namespace, at))
        return { status: "resolved", fingerprint: fp, ...(known === undefined ? {} : { remediationRequestRef: ref(known.rrName) }) } as Outcome
      }
      return yield* lockFor(fp).withPermits(1)(
        Effect.gen(function* () {
          const entry = yield* lookup(fp, now)
          const open = entry !== undefined && (entry.terminalAt === undefined || now < entry.terminalAt + cooldown)
          const outcome: Outcome = open ? yield* deduplicate(signal, fp, entry, at) : yield* create(signal, fp, t, now, at)
          return outcome
        })
      )
    })

    return { ingest } as const
  })
}) {}
