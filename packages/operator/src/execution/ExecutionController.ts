/**
 * The workflow execution controller: WorkflowExecutions of the controller namespace (watch and a periodic resync),
 * woken by the Jobs it created in the workflow namespace (a Job is named after its execution, see `resourceName`,
 * so its key maps back). PipelineRuns and AWX jobs are polled through `requeueAfter` (`workflowExecution.pollInterval`).
 */
import { K8s } from "@kubemend/core/K8s"
import { Effect, Layer, Option } from "effect"
import { applyExecutionSpec, ExecutionConfig } from "../remediation/ExecutionConfig.ts"
import { LifecycleConfig } from "../remediation/LifecycleConfig.ts"
import { PlatformSettings } from "../remediation/PlatformSettings.ts"
import { controller, Source } from "../runtime/Builder.ts"
import * as Manager from "../runtime/Manager.ts"
import { keyOf, splitKey } from "../runtime/Workers.ts"
import { Engines } from "./Engines.ts"
import { ExecutionMetrics } from "./ExecutionMetrics.ts"
import { ExecutionReconciler } from "./ExecutionReconciler.ts"

/** Declared when its term starts: the workflow namespace and engines come from the platform CR. */
export const executionController = Manager.defer(
  "workflowexecution",
  Effect.gen(function* () {
    const k8s = yield* K8s
    const config = yield* LifecycleConfig
    const reconciler = yield* ExecutionReconciler
    const settings = applyExecutionSpec(yield* ExecutionConfig, yield* (yield* PlatformSettings).spec)
    return controller("workflowexecution", config)
      .for(Source.cr("workflowexecutions"))
      .watches(Source.collection({
        apiVersion: "batch/v1",
        kind: "Job",
        namespace: settings.workflowNamespace,
        labelSelector: `${k8s.apiGroup}/workflow-execution`
      }, {
        watchTimeout: config.resyncPeriod,
        backoffMax: config.backoffMax,
        map: (key) => Option.some(keyOf(k8s.namespace, splitKey(key).name))
      }))
      .resyncEvery(config.resyncPeriod)
      .announce("workflow execution controller started", {
        workflowNamespace: settings.workflowNamespace,
        tekton: settings.tektonEnabled,
        ansible: settings.ansible.enabled
      })
      .complete(reconciler.reconcile)
  })
)

/** The reconciler and what it needs besides K8s, Cluster, Storage, ExecutionConfig, the lifecycle config and audit. */
export const ExecutionReconcilerLive = ExecutionReconciler.Default.pipe(
  Layer.provideMerge(Layer.mergeAll(Engines.Default, ExecutionMetrics.Default, PlatformSettings.Default))
)
