/**
 * The outside world of the gateway tests, shared per file: the dev OIDC issuer, the dev Kubernetes API server
 * seeded with persona RBAC and demo CRs, the fake agent, and the fake metrics backend. `startGateway` runs a real
 * gateway (API + health + metrics listeners on loopback) against them, with storage in memory.
 */
import { HttpServer } from "@effect/platform"
import { Context, Effect, Layer, type Scope } from "effect"
import { AuthConfig } from "@kubemend/core/Auth"
import { make as makeAlerts } from "@kubemend/devkit/Alerts"
import type { DevAlertsService } from "@kubemend/devkit/Alerts"
import { make as makeIssuer } from "@kubemend/devkit/Issuer"
import type { DevIssuerService } from "@kubemend/devkit/Issuer"
import { DevKube } from "@kubemend/devkit/kube/DevKube"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Metrics } from "@kubemend/core/Metrics"
import { SarConfig } from "@kubemend/core/Sar"
import { Storage } from "@kubemend/core/Storage"
import { BoundPorts, ServerConfig, type ServerSettings } from "@kubemend/core/Servers"
import { Duration, Option, Redacted } from "effect"
import { Audit, AuditConfig } from "@kubemend/core/Audit"
import { auditToStorage, gatewayListeners, GatewayServices } from "../../src/Service.ts"
import { RecordedAudit } from "../../src/GatewayAudit.ts"
import { GatewayConfig, type GatewayOverrides } from "../../src/GatewayConfig.ts"
import { GatewayStorage, type MemoryStorageData } from "../../src/GatewayStorage.ts"
import { type FakeAgent, startFakeAgent } from "./FakeAgent.ts"
import { demoObjects, namespace } from "./Seed.ts"
import { storageSeed } from "./StorageSeed.ts"

export interface Infra {
  readonly issuer: DevIssuerService
  readonly kube: DevKube
  readonly agent: FakeAgent
  readonly alerts: DevAlertsService
}
export const Infra = Context.GenericTag<Infra>("test/gateway/Infra")

export const InfraLive = Layer.scoped(
  Infra,
  Effect.gen(function* () {
    const issuer = yield* makeIssuer()
    const kube = yield* DevKube.scoped()
    kube.seed(demoObjects())
    const agent = yield* startFakeAgent
    const alerts = yield* makeAlerts()
    return { issuer, kube, agent, alerts }
  })
)

export interface Gateway {
  readonly url: string
  readonly healthUrl: string
  readonly metricsUrl: string
  readonly audit: Context.Tag.Service<RecordedAudit>
}

export interface GatewayOptions extends GatewayOverrides {
  /** In memory (default `storageSeed`), down, or a real storage service over HTTP. */
  readonly storage?: MemoryStorageData | "down" | { readonly url: string; readonly token: string }
  /** With a real storage service: audit events go to it through core's Audit layer instead of a recording. */
  readonly auditToStorage?: boolean
  readonly server?: Partial<ServerSettings>
}

/** Test defaults: interactive on, alerts on, limits high enough not to interfere. */
export const startGateway = (options: GatewayOptions = {}): Effect.Effect<Gateway, never, Infra | Scope.Scope> =>
  Effect.gen(function* () {
    const { issuer, kube, agent, alerts } = yield* Infra
    const { auditToStorage: auditLive, server, storage, ...overrides } = options
    const config = GatewayConfig.layer({
      interactiveEnabled: true,
      severityTriageEnabled: true,
      metricsBackendUrl: Option.some(alerts.url),
      agentUrl: Option.some(agent.url),
      agentToken: { token: Redacted.make(agent.restToken) },
      ...overrides,
      rateLimit: { ipRequestsPerSec: 10_000, userRequestsPerSec: 10_000, toolCallsPerMinute: 100_000, ...overrides.rateLimit }
    })
    const layer = gatewayListeners().pipe(
      Layer.provideMerge(GatewayServices),
      Layer.provideMerge(Layer.mergeAll(
        AuthConfig.layer({
          providers: [{ name: "dev", issuerURL: issuer.url, audiences: [issuer.audience] }],
          allowInsecureIssuers: true
        }),
        SarConfig.layer(),
        storage === "down"
          ? GatewayStorage.layerUnavailable
          : storage !== undefined && "url" in storage
          ? GatewayStorage.layerFromStorage(storage.url).pipe(
            Layer.provide(Storage.layer({ baseUrl: storage.url, token: Redacted.make(storage.token) }))
          )
          : GatewayStorage.layerMemory(storage ?? storageSeed),
        auditLive === true && storage !== undefined && storage !== "down" && "url" in storage
          ? Layer.mergeAll(auditToStorage, Layer.succeed(RecordedAudit, { entries: Effect.succeed([]), clear: Effect.void })).pipe(
            Layer.provide(Audit.layer),
            Layer.provide(Layer.mergeAll(
              AuditConfig.layer("gateway", { flushInterval: Duration.millis(100) }),
              Storage.layer({ baseUrl: storage.url, token: Redacted.make(storage.token) })
            )),
            Layer.provide(Metrics.Default)
          )
          : RecordedAudit.layer,
        Metrics.Default
      )),
      Layer.provideMerge(K8sLive.layer({ namespace, kubeconfig: kube.kubeConfig() })),
      Layer.provideMerge(Layer.mergeAll(config, ServerConfig.layer({ drainTimeout: Duration.seconds(1), ...server })))
    )
    const ctx = yield* Layer.build(layer).pipe(Effect.orDie)
    const address = Context.get(ctx, HttpServer.HttpServer).address
    const port = address._tag === "TcpAddress" ? address.port : 0
    const ports = Context.get(ctx, BoundPorts)
    return {
      url: `http://127.0.0.1:${port}`,
      healthUrl: `http://127.0.0.1:${ports.health}`,
      metricsUrl: `http://127.0.0.1:${ports.metrics}`,
      audit: Context.get(ctx, RecordedAudit)
    }
  })

export const token = (persona: Parameters<DevIssuerService["persona"]>[0]) => Effect.flatMap(Infra, ({ issuer }) => issuer.persona(persona))

/** The gateway of a test block, started once for the block (`it.layer(gatewayLayer(...))`). */
export const GatewayUnderTest = Context.GenericTag<Gateway>("test/gateway/GatewayUnderTest")
export const gatewayLayer = (options: GatewayOptions = {}) => Layer.scoped(GatewayUnderTest, startGateway(options))
