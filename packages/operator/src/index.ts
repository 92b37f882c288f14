/**
 * The operator: reconciles the platform CR (kind `Kubemend`) into the gateway, agent and storage workloads, their
 * RBAC and status; plus the controller machinery (work queue, informer, workers) the lifecycle controllers share.
 */
export { Cluster, type ClusterOptions, type ClusterService, type CollectionRef, collectionSource, type ObjectRef } from "./Cluster.ts"
export * as ClusterLive from "./Cluster/Live.ts"
export { keyOf, processKey, type Reconciled, runWorkers, splitKey } from "./Controller.ts"
export { ControllerMetrics } from "./ControllerMetrics.ts"
export { renderCrds } from "./Crds.ts"
export { type InProcessOptions, layerInProcess, OperatorLive } from "./Operator.ts"
export { OperatorConfig, type OperatorSettings } from "./OperatorConfig.ts"
export { controllerName, PlatformControllerLive } from "./Platform/Controller.ts"
export * from "./Platform/Names.ts"
export { renderClusterRbac } from "./Platform/Rbac.ts"
export { PlatformReconciler, type ReconcileError } from "./Platform/Reconcile.ts"
export {
  defaultMonitoring,
  type Listener,
  monitoringUrls,
  type RenderContext,
  renderConsoleConfig,
  renderServiceConfigs,
  type ServiceConfigs
} from "./Platform/RenderConfig.ts"
export { deploymentReadiness, servicesPhase } from "./Platform/Status.ts"
export { configHash, renderWorkloads, toYaml } from "./Platform/Workloads.ts"
export * as WorkQueue from "./WorkQueue.ts"
