/**
 * The remediation lifecycle controllers as layers.
 *
 * - `LifecycleLive`: the orchestrator, the analysis controller, the effectiveness monitor and the signal stream (when
 *   enabled), given K8s, Cluster, Metrics, ControllerMetrics, LifecycleConfig and LifecycleAudit.
 * - `StorageControllersLive`: the controllers that read the storage catalog: catalog registration and workflow
 *   execution (the operator runs them when `storage.url` is set).
 * - `LifecycleOperatorLive`: the same for the operator process, building K8s and Cluster from the operator config
 *   (`kubeconfig`, `apiGroup`) and `lifecycle.namespace`; audit events go to storage when `storage.url` is set
 *   (`LifecycleAudit.layerConfig`), else to the log.
 * - `layerInProcess(options)`: against a given kubeconfig (the dev API server), for the local platform and tests.
 */
import { whenLeading } from "@kubemend/core/LeaderElection"
import { Metrics } from "@kubemend/core/Metrics"
import type { K8s } from "@kubemend/core/K8s"
import { Storage } from "@kubemend/core/Storage"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Config, Effect, Layer, Option } from "effect"
import { CatalogControllerLive } from "./catalog/CatalogController.ts"
import { ExecutionConfig, type ExecutionSettings } from "./remediation/ExecutionConfig.ts"
import { ExecutionControllerLive } from "./execution/ExecutionController.ts"
import { NotificationConfig, type NotificationSettings } from "./notification/NotificationConfig.ts"
import { NotificationControllerLive } from "./notification/NotificationController.ts"
import type { Cluster } from "./runtime/Cluster.ts"
import * as ClusterLive from "./runtime/Cluster/Live.ts"
import { ControllerMetrics } from "./runtime/ControllerMetrics.ts"
import { kubeconfigSource, OperatorConfig } from "./OperatorConfig.ts"
import { AlertCheck } from "./effectiveness/AlertCheck.ts"
import { MetricsCheck } from "./effectiveness/MetricsCheck.ts"
import { EffectivenessConfig, type EffectivenessSettings } from "./effectiveness/EffectivenessConfig.ts"
import { EffectivenessMetrics } from "./effectiveness/EffectivenessMetrics.ts"
import { EffectivenessReconciler } from "./effectiveness/Reconciler.ts"
import { AgentRestClient } from "./clients/AgentRestClient.ts"
import { AnalysisReconciler } from "./analysis/AnalysisReconciler.ts"
import { runLifecycleControllers } from "./runtime/Builder.ts"
import { LifecycleAudit } from "./remediation/LifecycleAudit.ts"
import { LifecycleConfig, type LifecycleOverrides } from "./remediation/LifecycleConfig.ts"
import { LifecycleMetrics } from "./remediation/LifecycleMetrics.ts"
import { OrchestratorReconciler } from "./orchestrator/OrchestratorReconciler.ts"
import { PlatformSettings } from "./remediation/PlatformSettings.ts"
import { OpaClient } from "./clients/OpaClient.ts"
import { PolicyEngine } from "./remediation/PolicyEngine.ts"
import { PolicySyncLive } from "./policy/PolicySync.ts"
import { SignalProcessingReconciler } from "./signalprocessing/SignalProcessingReconciler.ts"
import { SignalsLive } from "./remediation/Signals.ts"
import { ManagedTargets } from "./remediation/Targets.ts"

export { ExecutionConfig } from "./remediation/ExecutionConfig.ts"
export { AgentRestClient } from "./clients/AgentRestClient.ts"
export { AnalysisReconciler } from "./analysis/AnalysisReconciler.ts"
export { LifecycleAudit, RecordedAudit } from "./remediation/LifecycleAudit.ts"
export { LifecycleConfig, type LifecycleOverrides, type LifecycleSettings } from "./remediation/LifecycleConfig.ts"
export { LifecycleMetrics } from "./remediation/LifecycleMetrics.ts"
export { OrchestratorReconciler } from "./orchestrator/OrchestratorReconciler.ts"
export { applyPlatformSpec, PlatformSettings } from "./remediation/PlatformSettings.ts"
export { type LifecycleAccess, LifecycleRbac, lifecycleRbac, managedTargetResources } from "./remediation/Rbac.ts"
export { SignalProcessingReconciler } from "./signalprocessing/SignalProcessingReconciler.ts"
export { runSignals, SignalsLive } from "./remediation/Signals.ts"
export { ManagedTargets } from "./remediation/Targets.ts"

const ControllersLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* LifecycleConfig
    if (!config.enabled) return yield* Effect.logInfo("lifecycle controllers disabled (lifecycle.enabled=false)")
    yield* whenLeading(runLifecycleControllers)
  })
)

/** Policies from the platform CR's ConfigMaps into the engine, with the lifecycle. */
const PoliciesLive = Layer.unwrapEffect(
  Effect.map(LifecycleConfig, (config) => (config.enabled ? PolicySyncLive : Layer.empty))
)

/** The notification controller with the lifecycle (it delivers what the orchestrator asks for). */
const NotificationsLive = Layer.unwrapEffect(
  Effect.map(LifecycleConfig, (config) => (config.enabled ? NotificationControllerLive : Layer.empty))
)

/** The reconcilers and what they need besides the outside services. */
const ReconcilersLive = Layer.mergeAll(
  OrchestratorReconciler.Default,
  AnalysisReconciler.Default,
  SignalProcessingReconciler.Default,
  PoliciesLive,
  EffectivenessReconciler.Default.pipe(
    Layer.provide(Layer.merge(AlertCheck.layer, MetricsCheck.layer)),
    Layer.provideMerge(EffectivenessMetrics.Default)
  )
).pipe(
  Layer.provide(PolicyEngine.layer),
  Layer.provide(Layer.mergeAll(LifecycleMetrics.Default, ManagedTargets.layerCluster, AgentRestClient.layer, PlatformSettings.Default, OpaClient.layer))
)

/**
 * Controllers that talk to the storage service: the catalog controller (RemediationWorkflow and ActionType
 * resources into the catalog) and the workflow execution controller (runs what the catalog says). Off with the
 * lifecycle (`lifecycle.enabled=false`).
 */
export const StorageControllersLive = Layer.unwrapEffect(
  Effect.map(LifecycleConfig, (config) => config.enabled ? Layer.merge(CatalogControllerLive, ExecutionControllerLive) : Layer.empty)
)

/** The storage controllers when the operator's config names storage (`storage.url`), else a log line. */
const StorageControllersFromConfig = Layer.unwrapEffect(
  Effect.map(Config.option(Config.string("url").pipe(Config.nested("storage"))), (url) =>
    Option.isSome(url)
      ? StorageControllersLive.pipe(Layer.provide(Layer.merge(Storage.layerConfig, ExecutionConfig.layerConfig)))
      : Layer.effectDiscard(Effect.logWarning("catalog and workflow execution controllers off: no storage.url in the operator config")))
)

/** Notifications from the operator's config (`notification.*`); delivery records go to storage when `storage.url` is set. */
const NotificationsFromConfig = Layer.unwrapEffect(
  Effect.map(
    Config.option(Config.string("url").pipe(Config.nested("storage"))),
    (url) => Option.isSome(url) ? NotificationsLive.pipe(Layer.provide(Storage.layerConfig)) : NotificationsLive
  )
).pipe(Layer.provide(NotificationConfig.layerConfig))

export const LifecycleLive: Layer.Layer<
  never,
  never,
  K8s | Cluster | Metrics | ControllerMetrics | LifecycleConfig | LifecycleAudit | EffectivenessConfig
> = Layer.mergeAll(ControllersLive, SignalsLive).pipe(Layer.provide(ReconcilersLive))

/**
 * The lifecycle with storage when the operator's config names it: the orchestrator resolves approvals' workflow
 * overrides in the catalog, and the effectiveness monitor reads the resolved signals recorded there.
 */
const LifecycleFromConfig = Layer.unwrapEffect(
  Effect.map(
    Config.option(Config.string("url").pipe(Config.nested("storage"))),
    (url) => Option.isSome(url) ? LifecycleLive.pipe(Layer.provide(Storage.layerConfig)) : LifecycleLive
  )
)

/** The controller namespace of the RRs (`lifecycle.namespace`, default `kubemend-system`). */
const lifecycleNamespace = Config.string("namespace").pipe(Config.nested("lifecycle"), Config.withDefault("kubemend-system"))

/** K8s (controller namespace) and Cluster from the operator config, as `Operator.ts` builds its Cluster. */
const ClientsFromConfig = Layer.unwrapEffect(
  Effect.gen(function* () {
    const operator = yield* OperatorConfig
    const namespace = yield* lifecycleNamespace
    const source = yield* kubeconfigSource
    return Layer.mergeAll(
      K8sLive.layer({ namespace, apiGroup: operator.apiGroup, ...source }),
      ClusterLive.layer({ apiGroup: operator.apiGroup, ...source })
    )
  })
)

/** For the operator's main: everything from its config provider; shares Metrics/ControllerMetrics by reference. */
export const LifecycleOperatorLive = Layer.mergeAll(LifecycleFromConfig, StorageControllersFromConfig, NotificationsFromConfig).pipe(
  Layer.provide(ClientsFromConfig),
  Layer.provide(Layer.mergeAll(
    OperatorConfig.layerConfig,
    LifecycleConfig.layerConfig,
    EffectivenessConfig.layerConfig,
    LifecycleAudit.layerConfig.pipe(Layer.provide(Metrics.Default)),
    ControllerMetrics.Default,
    Metrics.Default
  ))
)

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

/** The lifecycle controllers in this process against `kubeconfig`, until the layer's scope closes. */
export const layerInProcess = (options: InProcessOptions) => {
  const { kubeconfig, namespace, apiGroup = "kubemend.io", audit, storage, notification, effectiveness, execution, ...overrides } = options
  const notifications = NotificationsLive.pipe(
    Layer.provide(NotificationConfig.layer(notification)),
    Layer.provide(storage ?? Layer.empty)
  )
  // With storage, the effectiveness monitor also reads the resolved signals the signal service recorded there.
  const controllers = storage === undefined
    ? Layer.merge(LifecycleLive, notifications)
    : Layer.mergeAll(
      LifecycleLive.pipe(Layer.provide(storage)),
      notifications,
      StorageControllersLive.pipe(Layer.provide(Layer.merge(storage, ExecutionConfig.layer(execution))))
    )
  return controllers.pipe(
    Layer.provide(Layer.mergeAll(
      K8sLive.layer({ namespace, apiGroup, kubeconfig }),
      ClusterLive.layer({ apiGroup, kubeconfig }),
      LifecycleConfig.layer(overrides),
      EffectivenessConfig.layer(effectiveness),
      audit ?? LifecycleAudit.layerLog,
      ControllerMetrics.Default,
      Metrics.Default
    ))
  )
}
