/**
 * Warning events watched from the cluster API (`events.enabled`): each ADDED or MODIFIED Warning event whose reason
 * is on `events.reasons` goes through the same intake as a posted one (a MODIFIED event is the kubelet counting a
 * repeat: it folds into the open request). One watch per configured namespace, or one across all of them. A
 * rejected or failed event is logged and counted; the watch goes on (the informer reconnects and relists itself).
 */
import { K8s } from "@kubemend/core/K8s"
import { Effect, Layer, Schedule, Stream } from "effect"
import { Intake } from "./Intake.ts"
import { decodeKubeEvent, eventSignal } from "./KubeEvent.ts"
import { SignalsConfig } from "./SignalsConfig.ts"

export const EventWatchLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* SignalsConfig
    if (!config.events.enabled) return
    const k8s = yield* K8s
    const intake = yield* Intake
    const reasons = new Set(config.events.reasons)
    const namespaces = config.events.namespaces.length === 0 ? [undefined] : config.events.namespaces
    const ingest = (object: unknown) =>
      Effect.gen(function* () {
        const event = yield* decodeKubeEvent(object)
        if (!reasons.has(event.reason)) return
        const outcome = yield* intake.ingest(eventSignal(event, new Date().toISOString()))
        yield* Effect.logDebug(`event ${event.reason} on ${event.involvedObject.kind}/${event.involvedObject.name}: ${outcome.status}`)
      }).pipe(Effect.catchAll((e) => Effect.logWarning("Kubernetes event not taken", e)))
    for (const namespace of namespaces) {
      yield* k8s.watchEvents({ ...(namespace === undefined ? {} : { namespace }), fieldSelector: "type=Warning" }).pipe(
        Stream.filter((e) => e.type !== "DELETED"),
        Stream.runForEach((e) => ingest(e.object)),
        Effect.tapErrorCause((cause) => Effect.logWarning("event watch ended; restarting", cause)),
        Effect.retry(Schedule.exponential("1 second").pipe(Schedule.union(Schedule.spaced("30 seconds")))),
        Effect.forkScoped
      )
    }
  })
)
