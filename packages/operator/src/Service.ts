/**
 * Composition of the operator process: one manager starting every controller from one list (the platform
 * controller, then the remediation controllers of `Controllers.ts`), health (8081) and metrics (9090) listeners,
 * config from the `operator` provider (file + `OPERATOR_*` env). The K8s client of the remediation controllers is
 * bound to `lifecycle.namespace`; audit events go to storage when `storage.url` is set, else to the log.
 * `layerInProcess` is the platform controller alone against a given kubeconfig, for the local platform and tests.
 */
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Metrics } from "@kubemend/core/Metrics"
import { Drain } from "@kubemend/core/Drain"
import { OpsServersLive, Readiness, ServerConfig } from "@kubemend/core/Servers"
import { Storage } from "@kubemend/core/Storage"
import { Config, Effect, Layer, Option } from "effect"
import { lifecycleControllers, ReconcilersLive, storageControllers, StorageReconcilersLive } from "./Controllers.ts"
import { EffectivenessConfig } from "./effectiveness/EffectivenessConfig.ts"
import { NotificationConfig } from "./notification/NotificationConfig.ts"
import { kubeconfigSource, OperatorConfig, type OperatorSettings } from "./OperatorConfig.ts"
import { platformController, PlatformControllerLive } from "./platform/PlatformController.ts"
import { PlatformReconciler } from "./platform/Reconcile.ts"
import { ExecutionConfig } from "./remediation/ExecutionConfig.ts"
import { LifecycleAudit } from "./remediation/LifecycleAudit.ts"
import { LifecycleConfig } from "./remediation/LifecycleConfig.ts"
import type { ClusterOptions } from "./runtime/Cluster.ts"
import * as ClusterLive from "./runtime/Cluster/Live.ts"
import { ControllerMetrics } from "./runtime/ControllerMetrics.ts"
import * as Manager from "./runtime/Manager.ts"

/** The controller namespace of the RRs (`lifecycle.namespace`, default `kubemend-system`). */
const lifecycleNamespace = Config.string("namespace").pipe(Config.nested("lifecycle"), Config.withDefault("kubemend-system"))

const storageUrl = Config.option(Config.string("url").pipe(Config.nested("storage")))

/** K8s (controller namespace) and Cluster from the config: `kubeconfig` (a file) when set, else `KUBECONFIG` / in-cluster. */
const ClientsFromConfig = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* OperatorConfig
    const namespace = yield* lifecycleNamespace
    const source = yield* kubeconfigSource
    return Layer.mergeAll(
      K8sLive.layer({ namespace, apiGroup: config.apiGroup, ...source }),
      ClusterLive.layer({ apiGroup: config.apiGroup, ...source })
    )
  })
)

/**
 * The manager of the process with `platform` first in its list. With `storage.url` the storage controllers join
 * it, the orchestrator resolves approvals' workflow overrides in the catalog, the effectiveness monitor reads the
 * resolved signals recorded there and notification delivery records are written.
 */
const managerFromConfig = <A extends Manager.Runnable<unknown>, R2>(platform: Effect.Effect<ReadonlyArray<A>, never, R2>) => {
  const withStorage = Manager.layer(Effect.zipWith(platform, lifecycleControllers(storageControllers), (p, l) => [...p, ...l])).pipe(
    Layer.provide(Layer.merge(ReconcilersLive, StorageReconcilersLive.pipe(Layer.provideMerge(ExecutionConfig.layerConfig)))),
    Layer.provide(Storage.layerConfig)
  )
  const withoutStorage = Layer.merge(
    Manager.layer(Effect.zipWith(platform, lifecycleControllers(Effect.succeed([])), (p, l) => [...p, ...l])).pipe(Layer.provide(ReconcilersLive)),
    Layer.effectDiscard(Effect.logWarning("catalog and workflow execution controllers off: no storage.url in the operator config"))
  )
  return Layer.unwrapEffect(Effect.map(storageUrl, (url) => either(Option.isSome(url), withStorage, withoutStorage)))
}

/** One of two layers that provide the same (here: nothing). */
const either = <A, E1, R1, E2, R2>(first: boolean, a: Layer.Layer<A, E1, R1>, b: Layer.Layer<A, E2, R2>): Layer.Layer<A, E1 | E2, R1 | R2> => first ? a : b

/** What every controller needs from the config; Metrics and ControllerMetrics shared by reference. */
const fromConfig = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  layer.pipe(
    Layer.provide(ClientsFromConfig),
    Layer.provide(Layer.mergeAll(
      OperatorConfig.layerConfig,
      LifecycleConfig.layerConfig,
      EffectivenessConfig.layerConfig,
      NotificationConfig.layerConfig,
      LifecycleAudit.layerConfig.pipe(Layer.provide(Metrics.Default)),
      ControllerMetrics.Default,
      Metrics.Default
    ))
  )

/** The operator process (main.ts); leader election comes from `runtime/Leadership.ts`. */
export const OperatorLive = Layer.mergeAll(
  fromConfig(managerFromConfig(Effect.map(platformController, (c) => [c])).pipe(Layer.provide(PlatformReconciler.Default))),
  OpsServersLive
).pipe(
  Layer.provide(Layer.mergeAll(
    OperatorConfig.layerConfig,
    Metrics.Default,
    Readiness.Default,
    Drain.Default,
    ServerConfig.layerConfig(8080)
  ))
)

/** The remediation controllers alone from the operator's config (tests of the operator's install). */
export const LifecycleOperatorLive = fromConfig(managerFromConfig(Effect.succeed([])))

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
