/**
 * Running the lifecycle controllers on the operator's work-queue machinery: one queue and N workers per controller
 * (`runWorkers`: dedup, one key in flight, capped backoff, `requeueAfter`), fed by list+watch streams of the
 * resources each one cares about and by a periodic resync. The core K8s service's `watchCr` is the informer here:
 * it already lists, watches from the list's resourceVersion, reconnects and relists (core's informer; the platform
 * and catalog controllers run the same one over the operator's cross-namespace Cluster client). A child's change
 * enqueues its RR.
 */
import { K8s, type CrPlural, type KubeObject } from "@kubemend/core/K8s"
import { Effect, Option, Schedule, Stream } from "effect"
import { keyOf, runWorkers, type Reconciled } from "./Workers.ts"
import { ControllerMetrics } from "./ControllerMetrics.ts"
import * as WorkQueue from "./WorkQueue.ts"
import { EffectivenessReconciler } from "../effectiveness/Reconciler.ts"
import { AnalysisReconciler } from "../analysis/AnalysisReconciler.ts"
import { LifecycleConfig } from "../remediation/LifecycleConfig.ts"
import { OrchestratorReconciler } from "../orchestrator/OrchestratorReconciler.ts"
import { SignalProcessingReconciler } from "../signalprocessing/SignalProcessingReconciler.ts"

export interface Source {
  readonly plural: CrPlural
  /** The key to enqueue for a change of this object; None to ignore it. */
  readonly keyFor: (o: KubeObject) => Option.Option<string>
}

const own = (namespace: string) => (o: KubeObject) => Option.some(keyOf(o.metadata.namespace ?? namespace, o.metadata.name))

/** The RR a child belongs to (`spec.remediationRequestRef.name`). */
const parent = (namespace: string) => (o: KubeObject) =>
  Option.map(
    Option.fromNullable((o.spec as { remediationRequestRef?: { name?: unknown } } | undefined)?.remediationRequestRef?.name),
    (name) => keyOf(o.metadata.namespace ?? namespace, String(name))
  )

/** The RR an EffectivenessAssessment assesses (`spec.correlationID`). */
const assessed = (namespace: string) => (o: KubeObject) =>
  Option.map(
    Option.fromNullable((o.spec as { correlationID?: unknown } | undefined)?.correlationID),
    (name) => keyOf(o.metadata.namespace ?? namespace, String(name))
  )

const reconnect = Schedule.exponential("500 millis").pipe(Schedule.union(Schedule.spaced("30 seconds")))

/** Starts one controller in the current scope. */
export const runController = <E, R>(options: {
  readonly name: string
  readonly primary: CrPlural
  readonly sources: ReadonlyArray<Source>
  readonly reconcile: (key: string) => Effect.Effect<Reconciled, E, R>
}) =>
  Effect.gen(function* () {
    const k8s = yield* K8s
    const config = yield* LifecycleConfig
    const metrics = yield* ControllerMetrics
    const queue = yield* WorkQueue.make({
      name: options.name,
      capacity: config.queueCapacity,
      backoffBase: config.backoffBase,
      backoffMax: config.backoffMax,
      observer: metrics.observer
    })
    yield* runWorkers({ name: options.name, workers: config.workers, queue, reconcile: options.reconcile })
    for (const source of options.sources) {
      // The stream ends only by failing (too many failed reconnects): log it and watch again after a backoff.
      const watch = k8s.watchCr(source.plural).pipe(
        Stream.runForEach((event) => Option.match(source.keyFor(event.object), { onNone: () => Effect.void, onSome: queue.add })),
        Effect.tapError((e) => Effect.logWarning(`${options.name}: watch of ${source.plural} failed; watching again`, e)),
        Effect.retry(reconnect)
      )
      yield* Effect.forkScoped(watch)
    }
    const resync = k8s.listCr(options.primary).pipe(
      Effect.flatMap((list) => Effect.forEach(list.items, (o) => queue.add(keyOf(o.metadata.namespace ?? k8s.namespace, o.metadata.name)))),
      Effect.catchAll((e) => Effect.logWarning(`${options.name}: resync failed`, e)),
      Effect.delay(config.resyncPeriod),
      Effect.forever
    )
    yield* Effect.forkScoped(resync)
    yield* Effect.logInfo(`lifecycle controller ${options.name} started`)
  })

/**
 * The orchestrator, the signal-processing and analysis controllers, the effectiveness monitor,
 * until the scope closes.
 */
export const runLifecycleControllers = Effect.gen(function* () {
  const k8s = yield* K8s
  const orchestrator = yield* OrchestratorReconciler
  const analysis = yield* AnalysisReconciler
  const signalProcessing = yield* SignalProcessingReconciler
  const effectiveness = yield* EffectivenessReconciler
  const ns = k8s.namespace
  yield* runController({
    name: "remediationorchestrator",
    primary: "remediationrequests",
    sources: [
      { plural: "remediationrequests", keyFor: own(ns) },
      { plural: "signalprocessings", keyFor: parent(ns) },
      { plural: "aianalyses", keyFor: parent(ns) },
      { plural: "remediationapprovalrequests", keyFor: parent(ns) },
      { plural: "workflowexecutions", keyFor: parent(ns) },
      { plural: "effectivenessassessments", keyFor: assessed(ns) }
    ],
    reconcile: orchestrator.reconcile
  })
  yield* runController({
    name: "signalprocessing",
    primary: "signalprocessings",
    sources: [{ plural: "signalprocessings", keyFor: own(ns) }],
    reconcile: signalProcessing.reconcile
  })
  yield* runController({
    name: "effectivenessmonitor",
    primary: "effectivenessassessments",
    sources: [{ plural: "effectivenessassessments", keyFor: own(ns) }],
    reconcile: effectiveness.reconcile
  })
  yield* runController({
    name: "aianalysis",
    primary: "aianalyses",
    sources: [{ plural: "aianalyses", keyFor: own(ns) }],
    reconcile: analysis.reconcile
  })
})
