/**
 * The live outside world of the signal service, from its config (file + env): the cluster API (`namespace`,
 * `apiGroup`, `kubeconfig`, `k8sRequestTimeout`), the storage service for audit (`storage.url`,
 * `storage.tokenFile`, `audit.*`), TokenReview settings, its own tunables and listeners (API 8080).
 */
import { PlatformHttpClient } from "@kubemend/core/Tls/Trust"
import { Audit, AuditConfig } from "@kubemend/core/Audit"
import { AuthConfig } from "@kubemend/core/Auth"
import { duration } from "@kubemend/core/Config"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Metrics } from "@kubemend/core/Metrics"
import { ServerConfig } from "@kubemend/core/Servers"
import { Storage } from "@kubemend/core/Storage"
import { Config, Duration, Layer, Option } from "effect"
import { SignalsConfig } from "./SignalsConfig.ts"

const ClusterLive = K8sLive.layerConfig(
  Config.all({
    namespace: Config.string("namespace").pipe(Config.withDefault("kubemend-system")),
    apiGroup: Config.string("apiGroup").pipe(Config.withDefault("kubemend.io")),
    kubeconfig: Config.option(Config.string("kubeconfig")).pipe(Config.map(Option.getOrUndefined)),
    requestTimeout: duration("k8sRequestTimeout").pipe(Config.withDefault(Duration.seconds(10)))
  }).pipe(Config.map(({ kubeconfig, ...rest }) => (kubeconfig === undefined ? rest : { ...rest, kubeconfig })))
)

export const DependenciesLive = Layer.mergeAll(
  ClusterLive,
  Audit.layer.pipe(Layer.provideMerge(Storage.layerConfig), Layer.provide(AuditConfig.layerConfig("signals")), Layer.provide(Metrics.Default)),
  AuthConfig.layer(),
  SignalsConfig.layerConfig,
  ServerConfig.layerConfig(8080)
).pipe(Layer.provide(PlatformHttpClient))
