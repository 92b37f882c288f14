/**
 * The remediation controllers in one list, and what they need.
 *
 * - `lifecycleControllers(extra)`: the orchestrator, signal processing, analysis, the effectiveness monitor,
 *   notification (unless `notification.enabled=false`), the policy sync, and `extra` (the storage controllers);
 *   `lifecycle.enabled=false` switches all of them off, here and nowhere else.
 * - `storageControllers`: catalog registration and workflow execution, which read the storage catalog (run when
 *   the operator has storage).
 * - `ReconcilersLive` / `StorageReconcilersLive`: the reconcilers and what they need besides the outside services
 *   (K8s, Cluster, Metrics, ControllerMetrics, LifecycleConfig, LifecycleAudit, EffectivenessConfig,
 *   NotificationConfig; Storage and ExecutionConfig for the storage ones).
 * - `layerInProcess(options)`: against a given kubeconfig (the dev API server), for the local platform and tests.
 */
import { Metrics } from "@kubemend/core/Metrics"
import type { Storage } from "@kubemend/core/Storage"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Effect, Layer } from "effect"
import { AnalysisReconciler } from "./analysis/AnalysisReconciler.ts"
import { analysisController } from "./analysis/AnalysisController.ts"
import { catalogControllers, CatalogReconcilersLive } from "./catalog/CatalogController.ts"
import { AgentRestClient } from "./clients/AgentRestClient.ts"
import { OpaClient } from "./clients/OpaClient.ts"
import { AlertCheck } from "./effectiveness/AlertCheck.ts"
import { effectivenessController } from "./effectiveness/EffectivenessController.ts"
import { EffectivenessConfig, type EffectivenessSettings } from "./effectiveness/EffectivenessConfig.ts"
import { EffectivenessMetrics } from "./effectiveness/EffectivenessMetrics.ts"
import { MetricsCheck } from "./effectiveness/MetricsCheck.ts"
import { EffectivenessReconciler } from "./effectiveness/Reconciler.ts"
import { executionController, ExecutionReconcilerLive } from "./execution/ExecutionController.ts"
import { NotificationConfig, type NotificationSettings } from "./notification/NotificationConfig.ts"
import { notificationController, NotificationReconcilerLive } from "./notification/NotificationController.ts"
import { orchestratorController } from "./orchestrator/OrchestratorController.ts"
import { OrchestratorReconciler } from "./orchestrator/OrchestratorReconciler.ts"
import { policySync } from "./policy/PolicySync.ts"
import { ExecutionConfig, type ExecutionSettings } from "./remediation/ExecutionConfig.ts"
import { LifecycleAudit } from "./remediation/LifecycleAudit.ts"
import { LifecycleConfig, type LifecycleOverrides } from "./remediation/LifecycleConfig.ts"
import { LifecycleMetrics } from "./remediation/LifecycleMetrics.ts"
import { PlatformSettings } from "./remediation/PlatformSettings.ts"
import { PolicyEngine } from "./remediation/PolicyEngine.ts"
import { ManagedTargets } from "./remediation/Targets.ts"
import * as ClusterLive from "./runtime/Cluster/Live.ts"
import { ControllerMetrics } from "./runtime/ControllerMetrics.ts"
import * as Manager from "./runtime/Manager.ts"
import { signalProcessingController } from "./signalprocessing/SignalProcessingController.ts"
import { SignalProcessingReconciler } from "./signalprocessing/SignalProcessingReconciler.ts"

/** The remediation controllers and `extra`, unless `lifecycle.enabled=false`. */
export const lifecycleControllers = <A extends Manager.Runnable<unknown>, R2>(extra: Effect.Effect<ReadonlyArray<A>, never, R2>) =>
  Effect.gen(function* () {
    const config = yield* LifecycleConfig
    const notification = yield* NotificationConfig
    const notifications = Manager.when(
      notification.enabled,
      "notification controller disabled (notification.enabled=false)",
      Effect.map(notificationController, (c) => [c])
    )
    return yield* Manager.when(
      config.enabled,
      "lifecycle controllers disabled (lifecycle.enabled=false)",
      Effect.all([orchestratorController, signalProcessingController, effectivenessController, analysisController, policySync]).pipe(
        Effect.zipWith(notifications, (core, n) => [...core, ...n]),
        Effect.zipWith(extra, (core, e) => [...core, ...e] as ReadonlyArray<(typeof core)[number] | A>)
      )
    )
  })

/** The controllers that read the storage catalog: catalog registration and workflow execution. */
export const storageControllers = Effect.map(catalogControllers, (catalog) => [...catalog, executionController])

/** The reconcilers of `lifecycleControllers` and what they need besides the outside services. */
export const ReconcilersLive = Layer.mergeAll(
  OrchestratorReconciler.Default,
  AnalysisReconciler.Default,
  SignalProcessingReconciler.Default,
  NotificationReconcilerLive,
  EffectivenessReconciler.Default.pipe(
    Layer.provide(Layer.merge(AlertCheck.layer, MetricsCheck.layer)),
    Layer.provideMerge(EffectivenessMetrics.Default)
  )
).pipe(
  Layer.provideMerge(PolicyEngine.layer),
  Layer.provideMerge(Layer.mergeAll(LifecycleMetrics.Default, ManagedTargets.layerCluster, AgentRestClient.layer, PlatformSettings.Default, OpaClient.layer))
)

/** The reconcilers of `storageControllers`. */
export const StorageReconcilersLive = Layer.merge(CatalogReconcilersLive, ExecutionReconcilerLive)

export interface InProcessOptions extends LifecycleOverrides {
  /** Kubeconfig YAML text (e.g. the dev API server's `kubeConfig()`). */
  readonly kubeconfig: string
  /** Controller namespace of the RRs. */
  readonly namespace: string
  readonly apiGroup?: string
  /** Where audit events go; default the log. */
  readonly audit?: Layer.Layer<LifecycleAudit>
  /** The storage service; with it the catalog and workflow execution controllers run too, and delivery records are written. */
  readonly storage?: Layer.Layer<Storage>
  /** Settings of the workflow execution controller (with `storage`). */
  readonly execution?: Partial<Omit<ExecutionSettings, "ansible">> & { readonly ansible?: Partial<ExecutionSettings["ansible"]> }
  /** Receivers and routes of the notification controller (it always runs with the lifecycle). */
  readonly notification?: Partial<NotificationSettings>
  /** The effectiveness monitor's settings (the platform CR's `monitoring` and `effectivenessMonitor` override them). */
  readonly effectiveness?: Partial<EffectivenessSettings>
}

/** The remediation controllers in this process against `kubeconfig`, until the layer's scope closes. */
export const layerInProcess = (options: InProcessOptions) => {
  const { kubeconfig, namespace, apiGroup = "kubemend.io", audit, storage, notification, effectiveness, execution, ...overrides } = options
  // With storage, the orchestrator resolves overrides in the catalog and the effectiveness monitor reads the
  // resolved signals the signal service recorded there; the storage controllers run too.
  const manager = storage === undefined
    ? Manager.layer(lifecycleControllers(Effect.succeed([]))).pipe(Layer.provide(ReconcilersLive))
    : Manager.layer(lifecycleControllers(storageControllers)).pipe(
      Layer.provide(Layer.merge(ReconcilersLive, StorageReconcilersLive.pipe(Layer.provideMerge(ExecutionConfig.layer(execution))))),
      Layer.provide(storage)
    )
  return manager.pipe(
    Layer.provide(Layer.mergeAll(
      K8sLive.layer({ namespace, apiGroup, kubeconfig }),
      ClusterLive.layer({ apiGroup, kubeconfig }),
      LifecycleConfig.layer(overrides),
      EffectivenessConfig.layer(effectiveness),
      NotificationConfig.layer(notification),
      audit ?? LifecycleAudit.layerLog,
      ControllerMetrics.Default,
      Metrics.Default
    ))
  )
}
