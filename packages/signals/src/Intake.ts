/**
 * From signal to RemediationRequest: resolve the target, fingerprint it, then under that fingerprint's lock either
 * fold the signal into the request already open for it (or ended less than `deduplicationCooldown` ago) or create a
 * new one with the platform's ServiceAccount, named for the fingerprint's next occurrence (Request.ts): a replica
 * that loses the create race to another (409) folds the signal into the winner, so one signal is one request however
 * many replicas receive it. Deduplication counts are written back to `status.deduplication` by CountWriter.ts, so a
 * burst of identical alerts costs one create and a handful of status patches, not one API call each. The Kubernetes
 * API down fails the signal as `DependencyUnavailable` (503: the sender retries).
 */
import { Audit } from "@kubemend/core/Audit"
import { DependencyUnavailable } from "@kubemend/core/Errors"
import { K8s, type K8sUnavailable, type KubeObject } from "@kubemend/core/K8s"
import { Clock, Duration, Effect } from "effect"
import { Breaker } from "./Breaker.ts"
import { makeCountWriter } from "./CountWriter.ts"
import { countOf, ended, entryFrom, type Entry, makeIndex, observe } from "./Tracked.ts"
import { signalFingerprint } from "@kubemend/core/domain/NewRemediationRequest"
import type { RawTarget, Signal, Target } from "./Signal.ts"
import { SignalsConfig } from "./SignalsConfig.ts"
import { SignalsMetrics } from "./SignalsMetrics.ts"
import { signalAudit } from "./SignalAudit.ts"
import { resolveTarget, Unresolvable } from "./Targets.ts"
import { occurrenceOf, requestFor } from "./Request.ts"
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
/** Names tried for one new request: occurrences taken by ended requests or by a fingerprint sharing the prefix. */
const maxNameAttempts = 16
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
    const index = makeIndex(config.maxTracked)
    const counts = yield* makeCountWriter(config.deduplicationWriteDelay, countWriters)
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
          ended(known)
        }
        const list = yield* api(k8s.listCr("remediationrequests", { labelSelector: `${fpLabel}=${fp.slice(0, 63)}` }))
        const newest = list.items
          .filter((o) => (o.spec as { signalFingerprint?: string } | undefined)?.signalFingerprint === fp)
          .sort((a, b) => (b.metadata.creationTimestamp ?? "").localeCompare(a.metadata.creationTimestamp ?? ""))[0]
        if (newest === undefined) return known
        const entry = entryFrom(newest, now)
        index.set(fp, entry)
        return entry
      })

    const deduplicate = (signal: Signal, fp: string, entry: Entry, at: string) =>
      Effect.gen(function* () {
        entry.pending++
        if (at > entry.lastSeen) entry.lastSeen = at
        index.set(fp, entry)
        counts.mark(entry)
        yield* metrics.deduplicated(signal.name)
        yield* audit.emit(signalAudit.deduplicated(signal, fp, entry, k8s.namespace, at))
        return { status: "deduplicated", fingerprint: fp, count: countOf(entry), remediationRequestRef: ref(entry.rrName) } as const
      })

    const isOpen = (entry: Entry, now: number) => entry.terminalAt === undefined || now < entry.terminalAt + cooldown

    /**
     * The request a 409 on `name` met: ours to fold into when it is this fingerprint's and still open; otherwise
     * (ended past the cooldown, or another fingerprint sharing the name's 16 hex) the next occurrence is tried.
     */
    const existing = (name: string, fp: string, now: number) =>
      api(k8s.getCr("remediationrequests", name)).pipe(
        Effect.map((rr) => {
          if ((rr.spec as { signalFingerprint?: string } | undefined)?.signalFingerprint !== fp) return "taken" as const
          const entry = entryFrom(rr, now)
          return isOpen(entry, now) ? entry : ("taken" as const)
        }),
        // Deleted since the 409: the name is free again.
        Effect.catchTag("K8sNotFound", () => Effect.succeed("free" as const))
      )

    /**
     * A new request named for the fingerprint's next occurrence (after `previous`, the last request known for it).
     * Another replica creating the same name first (409) makes this signal a duplicate of that request.
     */
    const create = (signal: Signal, fp: string, t: Target, previous: Entry | undefined, now: number, at: string) =>
      Effect.gen(function* () {
        let occurrence = previous === undefined ? 1 : occurrenceOf(fp, previous.rrName) + 1
        for (let attempt = 0; attempt < maxNameAttempts; attempt++) {
          const body = requestFor(signal, t, { apiGroup: k8s.apiGroup, receivedAt: at, occurrence, maxPayloadBytes: config.maxOriginalPayloadBytes })
          const made = yield* api(k8s.createCr("remediationrequests", body)).pipe(
            Effect.catchTag("K8sConflict", () => Effect.succeed(undefined)),
            Effect.tapError(() => metrics.creationError("api_unavailable"))
          )
          if (made === undefined) {
            const found = yield* existing(body.metadata.name, fp, now)
            if (found === "taken") occurrence++
            if (typeof found !== "string") return yield* deduplicate(signal, fp, found, at)
            continue
          }
          const entry = entryFrom(made, now)
          entry.firstSeen = at
          entry.lastSeen = at
          index.set(fp, entry)
          yield* metrics.created(signal.source, "success")
          yield* audit.emit(signalAudit.received(signal, fp, t, body, k8s.namespace, at))
          return { status: "accepted", fingerprint: fp, remediationRequestRef: ref(made.metadata.name) } as const
        }
        yield* metrics.creationError("conflict")
        return yield* unavailable({ message: `no free request name for fingerprint ${fp} after ${maxNameAttempts} attempts` } as K8sUnavailable)
      })

    // Untraced: a span per signal (a webhook carries up to hundreds) cost ~15 µs each, a tenth of a duplicate's whole
    // ingestion; the request's span covers it.
    const ingest = Effect.fnUntraced(function* (signal: Signal) {
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
      const fp = signalFingerprint(signal.name, t)
      if (signal.status === "resolved") {
        const known = index.get(fp)
        yield* audit.emit(signalAudit.resolved(signal, fp, t, known?.rrName, k8s.namespace, at))
        return { status: "resolved", fingerprint: fp, ...(known === undefined ? {} : { remediationRequestRef: ref(known.rrName) }) } as Outcome
      }
      return yield* lockFor(fp).withPermits(1)(
        Effect.gen(function* () {
          const entry = yield* lookup(fp, now)
          const outcome: Outcome = entry !== undefined && isOpen(entry, now)
            ? yield* deduplicate(signal, fp, entry, at)
            : yield* create(signal, fp, t, entry, now, at)
          return outcome
        })
      )
    })

    return { ingest } as const
  })
}) {}
