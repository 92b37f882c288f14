/**
 * The catalog controller: informers on RemediationWorkflows and ActionTypes in the controller namespace, one work
 * queue and worker set per kind (the operator's queue machinery: dedup, backoff, `requeueAfter`). A registered
 * ActionType enqueues the workflows of that namespace that are not registered yet, so a file that declares the
 * workflow before its action type settles without waiting for the retry.
 */
import { whenLeading } from "@kubemend/core/LeaderElection"
import { ActionTypeKind, RemediationWorkflowKind } from "@kubemend/core/domain/CatalogResources"
import { CrVersion } from "@kubemend/core/domain/Meta"
import { runInformer, specOrDeletionChanged } from "@kubemend/core/K8s/Informer"
import { Duration, Effect, Layer } from "effect"
import { Cluster, collectionSource } from "../runtime/Cluster.ts"
import { keyOf, runWorkers } from "../runtime/Workers.ts"
import { ControllerMetrics } from "../runtime/ControllerMetrics.ts"
import { LifecycleConfig } from "../remediation/LifecycleConfig.ts"
import * as WorkQueue from "../runtime/WorkQueue.ts"
import { ActionTypeReconciler } from "./ActionTypeReconciler.ts"
import { CatalogSettings, registered } from "./Shared.ts"
import { WorkflowReconciler } from "./WorkflowReconciler.ts"

/** Server-side timeout of one watch request; the informer then continues from the last resourceVersion. */
const watchTimeout = Duration.minutes(5)

export const runCatalogControllers = Effect.gen(function* () {
  const cluster = yield* Cluster
  const settings = yield* CatalogSettings
  const config = yield* LifecycleConfig
  const metrics = yield* ControllerMetrics
  const workflows = yield* WorkflowReconciler
  const actionTypes = yield* ActionTypeReconciler
  const apiVersion = `${settings.apiGroup}/${CrVersion}`

  const queue = (name: string) =>
    WorkQueue.make({ name, capacity: config.queueCapacity, backoffBase: config.backoffBase, backoffMax: config.backoffMax, observer: metrics.observer })
  const informer = (kind: string, onKey: (key: string) => Effect.Effect<void>) =>
    Effect.forkScoped(
      runInformer({
        source: collectionSource(cluster, { apiVersion, kind, namespace: settings.namespace }, watchTimeout),
        onKey,
        relevant: specOrDeletionChanged,
        backoffMax: config.backoffMax
      }).pipe(Effect.annotateLogs("controller", `catalog-${kind.toLowerCase()}`))
    )

  const workflowQueue = yield* queue("remediationworkflow")
  const actionTypeQueue = yield* queue("actiontype")

  const pendingWorkflows = cluster.list({ apiVersion, kind: RemediationWorkflowKind, namespace: settings.namespace }).pipe(
    Effect.flatMap((list) =>
      Effect.forEach(list.items.filter((o) => !registered(o)), (o) => workflowQueue.add(keyOf(o.metadata.namespace, o.metadata.name)), { discard: true })
    ),
    Effect.catchAll((e) => Effect.logWarning("catalog: listing workflows after an action type registered failed", e))
  )

  yield* runWorkers({ name: "remediationworkflow", workers: config.workers, queue: workflowQueue, reconcile: workflows.reconcile })
  yield* runWorkers({
    name: "actiontype",
    workers: config.workers,
    queue: actionTypeQueue,
    reconcile: (key) =>
      Effect.flatMap(
        actionTypes.reconcile(key),
        ({ reconciled, registered }) => registered ? Effect.as(pendingWorkflows, reconciled) : Effect.succeed(reconciled)
      )
  })
  yield* informer(RemediationWorkflowKind, workflowQueue.add)
  yield* informer(ActionTypeKind, actionTypeQueue.add)
  yield* Effect.logInfo("catalog controller started").pipe(Effect.annotateLogs({ namespace: settings.namespace }))
})

/** The catalog controller for the layer's scope, in the lifecycle controllers' namespace. */
export const CatalogControllerLive = Layer.scopedDiscard(whenLeading(runCatalogControllers)).pipe(
  Layer.provide(Layer.mergeAll(WorkflowReconciler.Default, ActionTypeReconciler.Default)),
  Layer.provideMerge(CatalogSettings.fromLifecycle)
)
