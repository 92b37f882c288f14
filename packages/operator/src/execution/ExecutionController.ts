/**
 * The workflow execution controller: one work queue and worker set fed by the WorkflowExecutions of the controller
 * namespace (list+watch and a periodic resync) and by the Jobs it created in the workflow namespace (a Job's change
 * wakes its execution; the Job carries the execution's name). PipelineRuns and AWX jobs are polled through
 * `requeueAfter` (`workflowExecution.pollInterval`).
 */
import { whenLeading } from "@kubemend/core/LeaderElection"
import { K8s } from "@kubemend/core/K8s"
import { runInformer } from "@kubemend/core/K8s/Informer"
import { Effect, Layer, Schedule, Stream } from "effect"
import { Cluster, collectionSource } from "../runtime/Cluster.ts"
import { keyOf, runWorkers } from "../runtime/Workers.ts"
import { ControllerMetrics } from "../runtime/ControllerMetrics.ts"
import { LifecycleConfig } from "../remediation/LifecycleConfig.ts"
import { PlatformSettings } from "../remediation/PlatformSettings.ts"
import * as WorkQueue from "../runtime/WorkQueue.ts"
import { Engines } from "./Engines.ts"
import { applyExecutionSpec, ExecutionConfig } from "../remediation/ExecutionConfig.ts"
import { ExecutionMetrics } from "./ExecutionMetrics.ts"
import { ExecutionReconciler } from "./ExecutionReconciler.ts"

const reconnect = Schedule.exponential("500 millis").pipe(Schedule.union(Schedule.spaced("30 seconds")))

export const runExecutionController = Effect.gen(function* () {
  const k8s = yield* K8s
  const cluster = yield* Cluster
  const config = yield* LifecycleConfig
  const metrics = yield* ControllerMetrics
  const reconciler = yield* ExecutionReconciler
  const settings = applyExecutionSpec(yield* ExecutionConfig, yield* (yield* PlatformSettings).spec)
  const name = "workflowexecution"
  const queue = yield* WorkQueue.make({
    name,
    capacity: config.queueCapacity,
    backoffBase: config.backoffBase,
    backoffMax: config.backoffMax,
    observer: metrics.observer
  })
  yield* runWorkers({ name, workers: config.workers, queue, reconcile: reconciler.reconcile })

  const own = (namespace: string | undefined, n: string) => queue.add(keyOf(namespace ?? k8s.namespace, n))
  yield* k8s.watchCr("workflowexecutions").pipe(
    Stream.runForEach((event) => own(event.object.metadata.namespace, event.object.metadata.name)),
    Effect.tapError((e) => Effect.logWarning("workflowexecution: watch failed; watching again", e)),
    Effect.retry(reconnect),
    Effect.forkScoped
  )
  // A Job is named after its execution (see `resourceName`); its key in the workflow namespace maps back.
  yield* runInformer({
    source: collectionSource(cluster, {
      apiVersion: "batch/v1",
      kind: "Job",
      namespace: settings.workflowNamespace,
      labelSelector: `${k8s.apiGroup}/workflow-execution`
    }, config.resyncPeriod),
    onKey: (key) => own(k8s.namespace, key.slice(key.indexOf("/") + 1)),
    backoffMax: config.backoffMax
  }).pipe(Effect.annotateLogs("controller", name), Effect.forkScoped)
  yield* k8s.listCr("workflowexecutions").pipe(
    Effect.flatMap((list) => Effect.forEach(list.items, (o) => own(o.metadata.namespace, o.metadata.name), { discard: true })),
    Effect.catchAll((e) => Effect.logWarning("workflowexecution: resync failed", e)),
    Effect.delay(config.resyncPeriod),
    Effect.forever,
    Effect.forkScoped
  )
  yield* Effect.logInfo("workflow execution controller started").pipe(
    Effect.annotateLogs({ workflowNamespace: settings.workflowNamespace, tekton: settings.tektonEnabled, ansible: settings.ansible.enabled })
  )
})

/** The controller for the layer's scope; needs K8s, Cluster, Storage, ExecutionConfig, the lifecycle config and audit. */
export const ExecutionControllerLive = Layer.scopedDiscard(whenLeading(runExecutionController)).pipe(
  Layer.provide(ExecutionReconciler.Default),
  Layer.provideMerge(Layer.mergeAll(Engines.Default, ExecutionMetrics.Default, PlatformSettings.Default))
)
