/**
 * The live outside world of the agent, all from its config (file + env): the cluster API (`namespace`,
 * `apiGroup`, `kubeconfig`), the LLM (`llm.*`, `LLM_*`), the shadow agent's model (`alignmentCheck.llm.*`), the
 * storage service (`storage.url`, `storage.token`/`storage.tokenFile`) and the audit emitter over it (`audit.*`).
 */
import { PlatformHttpClient } from "@kubemend/core/Tls/Trust"
import { Config, Layer, Option } from "effect"
import * as K8sLive from "@kubemend/core/K8s/Live"
import * as Llm from "@kubemend/core/Llm"
import { AgentConfig, layerShortLlmEnv } from "./AgentConfig.ts"
import { AlignmentLlm } from "./Investigation/Alignment.ts"
import { Audit, AuditConfig } from "@kubemend/core/Audit"
import { Storage } from "@kubemend/core/Storage"
import { ServerConfig } from "@kubemend/core/Servers"

const ClusterLive = K8sLive.layerConfig(
  Config.all({
    namespace: Config.string("namespace").pipe(Config.withDefault("kubemend-system")),
    apiGroup: Config.string("apiGroup").pipe(Config.withDefault("kubemend.io")),
    kubeconfig: Config.option(Config.string("kubeconfig")).pipe(Config.map(Option.getOrUndefined))
  }).pipe(Config.map(({ kubeconfig, ...rest }) => (kubeconfig === undefined ? rest : { ...rest, kubeconfig })))
)

const ModelsLive = AlignmentLlm.layerConfig.pipe(Layer.provideMerge(Llm.layerConfig()))

export const DependenciesLive = Layer.mergeAll(
  ClusterLive,
  ModelsLive,
  Audit.layer.pipe(Layer.provideMerge(Storage.layerConfig), Layer.provide(AuditConfig.layerConfig("agent"))),
  AgentConfig.layerConfig,
  ServerConfig.layerConfig(8443)
).pipe(Layer.provide(PlatformHttpClient), Layer.provide(layerShortLlmEnv))
