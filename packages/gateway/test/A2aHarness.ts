/**
 * The gateway of the A2A, status-stream and card tests: the bridge's own test infrastructure (dev issuer, dev API
 * server with persona RBAC and demo RRs, fake metrics backend), the routes of this folder mounted through
 * `gatewayListeners`, the scripted LLM server as the loop's model and the triage model, and the fake investigation
 * agent (the one held to the agent contract) whose analyses answer after a few status polls (so `svc_investigate`
 * has something to wait for). Each
 * gateway can be shut down on its own (`shutdown`) to test the drain.
 */
import { HttpServer } from "@effect/platform"
import { NodeFileSystem, NodeHttpClient } from "@effect/platform-node"
import { Context, Duration, Effect, ExecutionStrategy, Exit, Layer, Option, Redacted, Scope } from "effect"
import { AuthConfig } from "@kubemend/core/Auth"
import { type Script, scoped as scriptedLlm, type ScriptedLlmServer } from "@kubemend/devkit/ScriptedLlm"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Llm, layer as llmLayer } from "@kubemend/core/Llm"
import { Metrics } from "@kubemend/core/Metrics"
import { SarConfig } from "@kubemend/core/Sar"
import { BoundPorts, ServerConfig } from "@kubemend/core/Servers"
import { a2aRoutes, a2aServices, A2aConfig, type A2aSettings, TriageConfig, TriageModel } from "../src/A2a/index.ts"
import type { TriageSettings } from "../src/SeverityTriage.ts"
import { gatewayListeners, GatewayServices } from "../src/Service.ts"
import { RecordedAudit } from "../src/GatewayAudit.ts"
import { GatewayConfig, type GatewayOverrides } from "../src/GatewayConfig.ts"
import { GatewayStorage } from "../src/GatewayStorage.ts"
import { StatusConfig, type StatusSettings, statusServices } from "../src/Status/index.ts"
import { type FakeAgent, makeFakeAgent } from "./support/FakeAgent.ts"
import { Infra } from "./support/Harness.ts"
import { namespace } from "./support/Seed.ts"
import { storageSeed } from "./support/StorageSeed.ts"

export { Infra, InfraLive, token } from "./support/Harness.ts"
export { namespace } from "./support/Seed.ts"

export interface TestGateway {
  readonly url: string
  readonly healthUrl: string
  readonly metricsUrl: string
  readonly audit: Context.Tag.Service<RecordedAudit>
  readonly llm: ScriptedLlmServer
  readonly agent: FakeAgent
  readonly context: Context.Context<never>
  /** Shuts the gateway down as SIGTERM does (drain, then listeners and services close); the test scope would too. */
  readonly shutdown: Effect.Effect<void>
}

export interface TestGatewayOptions extends GatewayOverrides {
  readonly scripts?: ReadonlyArray<Script>
  readonly a2a?: Partial<A2aSettings>
  readonly status?: Partial<StatusSettings>
  readonly triage?: Partial<TriageSettings>
  readonly pollsUntilDone?: number
  /** Default 1 s. */
  readonly drainTimeout?: Duration.Duration
}

export const startTestGateway = (options: TestGatewayOptions = {}): Effect.Effect<TestGateway, never, Infra | Scope.Scope> =>
  Effect.gen(function* () {
    const { issuer, kube, alerts } = yield* Infra
    const { scripts, a2a, status, triage, pollsUntilDone, drainTimeout, ...overrides } = options
    const llm = yield* scriptedLlm({ scripts: scripts ?? [] })
    const agent = yield* makeFakeAgent({ pollsUntilAnswered: pollsUntilDone ?? 2 })
    const config = GatewayConfig.layer({
      interactiveEnabled: true,
      severityTriageEnabled: true,
      metricsBackendUrl: Option.some(alerts.url),
      agentUrl: Option.some(agent.url),
      agentToken: { token: Redacted.make(agent.restToken) },
      ...overrides,
      rateLimit: { ipRequestsPerSec: 10_000, userRequestsPerSec: 10_000, toolCallsPerMinute: 100_000, ...overrides.rateLimit }
    })
    const model = llmLayer({ provider: "openai", model: "scripted", endpoint: llm.url, maxRetries: 0 }).pipe(
      Layer.provide(Layer.mergeAll(NodeHttpClient.layerUndici, NodeFileSystem.layer))
    )
    const layer = gatewayListeners([a2aRoutes]).pipe(
      Layer.provideMerge(Layer.mergeAll(a2aServices, statusServices)),
      Layer.provideMerge(GatewayServices),
      Layer.provideMerge(Layer.mergeAll(
        AuthConfig.layer({ providers: [{ name: "dev", issuerURL: issuer.url, audiences: [issuer.audience] }], allowInsecureIssuers: true }),
        SarConfig.layer(),
        GatewayStorage.layerMemory(storageSeed),
        RecordedAudit.layer,
        Metrics.Default,
        model,
        Layer.effect(TriageModel, Effect.map(Llm, Option.some)).pipe(Layer.provide(model)),
        TriageConfig.layer(triage),
        A2aConfig.layer({ keepaliveInterval: Duration.millis(100), investigationPollInterval: Duration.millis(20), ...a2a }),
        StatusConfig.layer(status)
      )),
      Layer.provideMerge(K8sLive.layer({ namespace, kubeconfig: kube.kubeConfig(), watchBackoffBase: "10 millis" })),
      Layer.provideMerge(Layer.mergeAll(config, ServerConfig.layer({ drainTimeout: drainTimeout ?? Duration.seconds(1) })))
    )
    // Its own scope inside the test's, so a test can shut it down while the rest of the infrastructure runs.
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const ctx = yield* Layer.buildWithScope(layer, scope).pipe(Effect.orDie)
    const address = Context.get(ctx, HttpServer.HttpServer).address
    const port = address._tag === "TcpAddress" ? address.port : 0
    return {
      url: `http://127.0.0.1:${port}`,
      healthUrl: `http://127.0.0.1:${Context.get(ctx, BoundPorts).health}`,
      metricsUrl: `http://127.0.0.1:${Context.get(ctx, BoundPorts).metrics}`,
      audit: Context.get(ctx, RecordedAudit),
      llm,
      agent,
      context: ctx as Context.Context<never>,
      shutdown: Scope.close(scope, Exit.void)
    }
  })

/** A fetch that sends the bearer token (what the SDK clients get as `fetchImpl`). */
export const withToken = (token: string): typeof fetch => (input, init) => {
  const headers = new Headers(init?.headers)
  headers.set("authorization", `Bearer ${token}`)
  return fetch(input, { ...init, headers })
}

/** `{event, data}` of each SSE block, `{comment}` of each comment line. */
export const parseSse = (text: string) =>
  text.split("\n\n").filter((b) => b.trim() !== "").map((block) => {
    if (block.startsWith(":")) return { comment: block.slice(1).trim() } as const
    const event = /^event: (.*)$/m.exec(block)?.[1]
    const data = /^data: (.*)$/m.exec(block)?.[1]
    return { event, data: data === undefined ? undefined : JSON.parse(data) } as const
  })
