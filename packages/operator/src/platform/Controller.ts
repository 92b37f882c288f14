/**
 * The platform controller: an informer on the platform CRs (every namespace, or the configured one) feeding the
 * work queue, and the workers running `PlatformReconciler.reconcile`. Runs for the layer's scope while this process
 * leads (`LeaderElection`, when present). Readiness (when a `Readiness` service is present) waits for the leader's
 * first list; a standby is ready.
 */
import { CrVersion } from "@kubemend/core/domain/Meta"
import { PlatformKind } from "@kubemend/core/domain/Platform/index"
import { runInformer, specOrDeletionChanged } from "@kubemend/core/K8s/Informer"
import { LeaderElection, whenLeading } from "@kubemend/core/LeaderElection"
import { Readiness } from "@kubemend/core/Servers"
import { Deferred, Effect, Layer, Option } from "effect"
import { Cluster, collectionSource } from "../runtime/Cluster.ts"
import { runWorkers } from "../runtime/Workers.ts"
import { ControllerMetrics } from "../runtime/ControllerMetrics.ts"
import { OperatorConfig } from "../OperatorConfig.ts"
import * as WorkQueue from "../runtime/WorkQueue.ts"
import { PlatformReconciler } from "./Reconcile.ts"

/** `controller` label of the platform controller's logs and metrics (controller-runtime uses the lower-case kind). */
export const controllerName = "kubemend"

export const PlatformControllerLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const synced = yield* Deferred.make<void>()
    const readiness = yield* Effect.serviceOption(Readiness)
    const election = yield* Effect.serviceOption(LeaderElection)
    // A standby runs no informer: it is ready while it does not lead.
    const leading = Option.match(election, { onNone: () => Effect.succeed(true), onSome: (e) => e.isLeader })
    if (Option.isSome(readiness)) {
      yield* readiness.value.register(
        "informer",
        Effect.zipWith(leading, Deferred.isDone(synced), (lead, done) => !lead || done).pipe(
          Effect.filterOrFail((ready) => ready, () => "platform CRs not listed yet")
        )
      )
    }
    yield* whenLeading(runPlatformController(synced))
  })
)

const runPlatformController = (synced: Deferred.Deferred<void>) =>
  Effect.gen(function* () {
    const cluster = yield* Cluster
    const config = yield* OperatorConfig
    const reconciler = yield* PlatformReconciler
    const metrics = yield* ControllerMetrics
    const queue = yield* WorkQueue.make({
      name: controllerName,
      capacity: config.queueCapacity,
      backoffBase: config.backoffBase,
      backoffMax: config.backoffMax,
      observer: metrics.observer
    })
    yield* Effect.forkScoped(
      runInformer({
        source: collectionSource(cluster, {
          apiVersion: `${config.apiGroup}/${CrVersion}`,
          kind: PlatformKind,
          ...Option.match(config.watchNamespace, { onNone: () => ({}), onSome: (namespace) => ({ namespace }) })
        }, config.watchTimeout),
        onKey: queue.add,
        relevant: specOrDeletionChanged,
        backoffMax: config.watchBackoffMax,
        synced
      }).pipe(Effect.annotateLogs("controller", controllerName))
    )
    yield* runWorkers({ name: controllerName, workers: config.workers, queue, reconcile: reconciler.reconcile })
    yield* Effect.logInfo("platform controller started").pipe(
      Effect.annotateLogs({ controller: controllerName, workers: config.workers })
    )
  })
