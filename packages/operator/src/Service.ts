/**
 * Composition of the operator process: the platform controller on the Cluster service, health (8081) and metrics
 * (9090) listeners, config from the `operator` provider (file + `OPERATOR_*` env). `layerInProcess` is the same
 * controller against a given kubeconfig, for the local platform and tests.
 */
import { Metrics } from "@kubemend/core/Metrics"
import { Drain } from "@kubemend/core/Drain"
import { OpsServersLive, Readiness, ServerConfig } from "@kubemend/core/Servers"
import { Effect, Layer } from "effect"
import type { ClusterOptions } from "./runtime/Cluster.ts"
import * as ClusterLive from "./runtime/Cluster/Live.ts"
import { ControllerMetrics } from "./runtime/ControllerMetrics.ts"
import { kubeconfigSource, OperatorConfig, type OperatorSettings } from "./OperatorConfig.ts"
import { PlatformControllerLive } from "./platform/Controller.ts"
import { PlatformReconciler } from "./platform/Reconcile.ts"

/** The Cluster service from the config: `kubeconfig` (a file) when set, else `KUBECONFIG` / in-cluster. */
const ClusterFromConfig = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* OperatorConfig
    const source = yield* kubeconfigSource
    return ClusterLive.layer({ apiGroup: config.apiGroup, ...source })
  })
)

/** The operator process (main.ts). */
export const OperatorLive = Layer.mergeAll(PlatformControllerLive, OpsServersLive).pipe(
  Layer.provide(PlatformReconciler.Default),
  Layer.provide(ClusterFromConfig),
  Layer.provide(Layer.mergeAll(
    OperatorConfig.layerConfig,
    ControllerMetrics.Default,
    Metrics.Default,
    Readiness.Default,
    Drain.Default,
    ServerConfig.layerConfig(8080)
  ))
)

export interface InProcessOptions extends Partial<OperatorSettings> {
  /** Kubeconfig YAML text (e.g. the dev API server's `kubeConfig()`). */
  readonly kubeconfig: string
  /** Extra client settings (deadlines, retries). */
  readonly client?: Omit<ClusterOptions, "kubeconfig" | "apiGroup">
}

/**
 * The platform controller running in this process against `kubeconfig`, until the layer's scope closes. It also
 * provides `PlatformReconciler`, so a caller can run `reconcile("<namespace>/<name>")` directly as well.
 */
export const layerInProcess = (options: InProcessOptions) => {
  const { kubeconfig, client, ...overrides } = options
  const config = OperatorConfig.layer(overrides)
  const cluster = ClusterLive.layer({ ...client, kubeconfig, apiGroup: overrides.apiGroup ?? OperatorConfig.defaults.apiGroup })
  const reconciler = PlatformReconciler.Default.pipe(Layer.provide(cluster), Layer.provide(config))
  return PlatformControllerLive.pipe(
    Layer.provideMerge(reconciler),
    Layer.provide(Layer.mergeAll(cluster, config, ControllerMetrics.Default))
  )
}
