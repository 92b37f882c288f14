/**
 * How the gateway is put together. `GatewayServices` needs the outside world (config, K8s, storage, audit,
 * metrics registry, drain); `gatewayLive` adds the listeners (API 8443, health 8081, metrics 9090), the readiness
 * checks and the drain on shutdown. Tests build the same graph with fakes for the outside world.
 */
import { a2aConfigLive, a2aRoutes, a2aServices } from "./A2a/index.ts"
import { statusConfigLive, statusServices } from "./Status/index.ts"
import type { HttpRouter } from "@effect/platform"
import { Audit, AuditConfig } from "@kubemend/core/Audit"
import { Config, Duration, Effect, Layer, Option } from "effect"
import { Auth, AuthConfig, authConfig } from "@kubemend/core/Auth"
import { duration } from "@kubemend/core/Config"
import { Drain } from "@kubemend/core/Drain"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Metrics } from "@kubemend/core/Metrics"
import { Sar, SarConfig } from "@kubemend/core/Sar"
import { Storage } from "@kubemend/core/Storage"
import { ApiServerLive, DrainOnShutdown, OpsServersLive, Readiness, ServerConfig } from "@kubemend/core/Servers"
import { ProblemTypeBase } from "@kubemend/core/Wire"
import { AgentSessionsClient } from "./AgentSessionsClient.ts"
import { AgentEvents } from "./AgentEvents.ts"
import { Breakers } from "./Breakers.ts"
import { Edge } from "./Edge/Chain.ts"
import { RateLimits } from "./Limits/RateLimits.ts"
import { SessionSlots } from "./Limits/SessionSlots.ts"
import { GatewayAudit } from "./GatewayAudit.ts"
import { GatewayConfig } from "./GatewayConfig.ts"
import { GatewayMetrics } from "./GatewayMetrics.ts"
import { GatewayStorage } from "./GatewayStorage.ts"
import { serveGateway } from "./ApiApp.ts"
import { ToolCalls } from "./Mcp/Call.ts"
import { ToolRegistry } from "./Mcp/Registry.ts"
import { McpSessions } from "./Mcp/Sessions.ts"
import { readinessChecks } from "./ReadinessChecks.ts"
import { SharedState } from "./SharedState.ts"

/**
 * Every gateway service. Needs: GatewayConfig, K8s, AuthConfig, SarConfig, GatewayStorage, GatewayAudit, Metrics.
 */
export const GatewayServices = McpSessions.Default.pipe(
  Layer.provideMerge(Layer.mergeAll(ToolCalls.Default, ToolRegistry.Default, AgentSessionsClient.Default, Edge.Default)),
  // The one session pool: MCP sessions here, A2A conversations through `SessionSlots.layerShared`.
  Layer.provideMerge(Layer.mergeAll(Breakers.Default, RateLimits.Default, SessionSlots.Default, AgentEvents.Default)),
  // Sessions, conversations, tasks, caps and rate limits: in memory, or shared with the other replicas through Valkey.
  Layer.provideMerge(SharedState.layer),
  Layer.provideMerge(GatewayMetrics.Default),
  Layer.provideMerge(Layer.mergeAll(Sar.DefaultWithoutDependencies, Auth.Default))
)

const problemTypeBase = Layer.effect(ProblemTypeBase, Effect.map(GatewayConfig, (c) => c.problemTypeBase))

/**
 * The running gateway on top of its services: API listener with the routers (MCP + `routers`), health and
 * metrics listeners, readiness checks, and the drain that runs before the API listener closes.
 */
export const gatewayListeners = <E = never, R = never, RR = never>(
  routers: ReadonlyArray<Effect.Effect<HttpRouter.HttpRouter<E, R>, never, RR>> = []
) =>
  DrainOnShutdown.pipe(
    Layer.provideMerge(serveGateway(routers)),
    Layer.provideMerge(ApiServerLive),
    Layer.provideMerge(Layer.mergeAll(OpsServersLive, readinessChecks)),
    Layer.provideMerge(Layer.mergeAll(Readiness.Default, Drain.Default, problemTypeBase))
  )

/** `kubernetes.*` config: the controller namespace, API group and kubeconfig (default: in-cluster or KUBECONFIG). */
const k8sConfig = Config.all({
  namespace: Config.string("namespace").pipe(Config.withDefault("kubemend-system")),
  apiGroup: Config.string("apiGroup").pipe(Config.withDefault("kubemend.io")),
  kubeconfig: Config.option(Config.string("kubeconfig")).pipe(Config.map(Option.getOrUndefined)),
  requestTimeout: duration("requestTimeout").pipe(Config.withDefault(Duration.seconds(10)))
}).pipe(
  Config.nested("kubernetes"),
  Config.map(({ kubeconfig, ...rest }) => (kubeconfig === undefined ? rest : { ...rest, kubeconfig }))
)

const sarConfig = SarConfig.layerRbac

const authConfigLayer = Layer.effect(AuthConfig, Config.nested(authConfig, "auth"))

/** Audit events into core's Audit layer (buffered, batched to storage, flushed on shutdown). */
export const auditToStorage = Layer.effect(GatewayAudit, Effect.map(Audit, (audit) => GatewayAudit.fromSink(audit.emit)))

/**
 * Storage and audit: over core's Storage client when `storage.url` is set; otherwise storage tools answer
 * unavailable and audit events go to the log.
 */
const backends = Layer.unwrapEffect(
  Effect.map(Config.option(Config.string("url").pipe(Config.nested("storage"))), (url) =>
    Option.isSome(url)
      ? Layer.mergeAll(GatewayStorage.layerFromStorage(url.value), auditToStorage).pipe(
        Layer.provideMerge(Audit.layer),
        Layer.provide(AuditConfig.layerConfig("gateway")),
        Layer.provideMerge(Storage.layerConfig)
      )
      : Layer.mergeAll(GatewayStorage.layerUnavailable, GatewayAudit.layerLog))
)

/** The whole gateway from its config provider (what `main.ts` launches). */
export const gatewayLive = gatewayListeners([a2aRoutes]).pipe(
  Layer.provideMerge(Layer.mergeAll(a2aServices, statusServices)),
  Layer.provideMerge(GatewayServices),
  Layer.provide(Layer.mergeAll(authConfigLayer, sarConfig, backends, a2aConfigLive, statusConfigLive)),
  Layer.provideMerge(Metrics.Default),
  Layer.provide(K8sLive.layerConfig(k8sConfig)),
  Layer.provide(Layer.mergeAll(GatewayConfig.layerConfig, ServerConfig.layerConfig(8443)))
)
