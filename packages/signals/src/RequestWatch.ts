/**
 * The requests the service made (labelled `<apiGroup>/signal-fingerprint`), followed through a watch so a signal is
 * matched to its fingerprint's request in memory: no list per new fingerprint, no read to refresh a known request's
 * phase. The watch feeds the index the intake uses; `synced()` says whether the index follows the cluster (the first
 * list is in and the watch has not failed since). Until then, or once the index has forgotten fingerprints to stay
 * under `maxTracked`, the intake asks the cluster as before.
 */
import type { K8s, KubeObject, WatchEvent } from "@kubemend/core/K8s"
import { Clock, Effect, Schedule, Stream } from "effect"
import { occurrenceOf } from "./Request.ts"
import { type Entry, ended, entryFrom, type makeIndex, observe, observeCount } from "./Tracked.ts"

type Index = ReturnType<typeof makeIndex>

const fingerprint = (rr: KubeObject) => (rr.spec as { signalFingerprint?: unknown } | undefined)?.signalFingerprint

/** Folds one change of a request into the index: the newest request per fingerprint wins, its phase follows. */
export const applyRequest = (index: Index, event: WatchEvent, now: number) => {
  const rr = event.object
  const fp = fingerprint(rr)
  if (typeof fp !== "string") return
  const known = index.get(fp)
  if (event.type === "DELETED") {
    if (known?.rrName === rr.metadata.name) ended(known)
    return
  }
  if (known?.rrName === rr.metadata.name) {
    observe(known, rr, now)
    // Another writer (a second replica) may have counted since.
    if (!known.writing) observeCount(known, rr)
    return
  }
  if (known === undefined || isNewer(fp, rr, known)) index.set(fp, entryFrom(rr, now))
}

/** Created later, or in the same second with a higher occurrence in its name. */
const isNewer = (fp: string, rr: KubeObject, known: Entry) => {
  const created = rr.metadata.creationTimestamp ?? ""
  if (created !== known.createdAt) return created > known.createdAt
  return occurrenceOf(fp, rr.metadata.name) > occurrenceOf(fp, known.rrName)
}

/** Lists, then watches, the labelled requests into `index` until interrupted; restarts after an outage. */
export const followRequests = (k8s: K8s["Type"], index: Index, label: string) => {
  let listed = false
  const apply = (e: WatchEvent) => Effect.map(Clock.currentTimeMillis, (now) => applyRequest(index, e, now))
  const run = Effect.gen(function* () {
    const list = yield* k8s.listCr("remediationrequests", { labelSelector: label })
    yield* Effect.forEach(list.items, (object) => apply({ type: "ADDED", object }), { discard: true })
    listed = true
    // The watch lists again itself (ADDED for each) and relists on 410: nothing between the two lists is missed.
    yield* Stream.runForEach(k8s.watchCr("remediationrequests", { labelSelector: label }), apply)
  }).pipe(
    Effect.ensuring(Effect.sync(() => void (listed = false))),
    Effect.tapErrorCause((cause) => Effect.logWarning("request watch ended; asking the cluster per signal until it is back", cause)),
    Effect.retry(Schedule.exponential("1 second").pipe(Schedule.union(Schedule.spaced("30 seconds")))),
    Effect.forever
  )
  return { run, synced: () => listed && index.complete() } as const
}
