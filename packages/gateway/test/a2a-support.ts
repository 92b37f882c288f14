/**
 * The gateway of the A2A, status-stream and card tests: the bridge's own test infrastructure (dev issuer, dev API
 * server with persona RBAC and demo RRs, fake metrics backend), the routes of this folder mounted through
 * `gatewayListeners`, the scripted LLM server as the loop's model and the triage model, and a fake investigation
 * agent whose sessions finish after a few status polls (so `svc_investigate` has something to wait for). Each
 * gateway can be shut down on its own (`shutdown`) to test the drain.
 */
import { HttpServer } from "@effect/platform"
import { NodeFileSystem, NodeHttpClient } from "@effect/platform-node"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Context, Duration, Effect, ExecutionStrategy, Exit, Layer, Option, Scope } from "effect"
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { AuthConfig } from "@kubemend/core/Auth"
import { type Script, scoped as scriptedLlm, type ScriptedLlmServer } from "@kubemend/core/devkit/ScriptedLlm"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Llm, layer as llmLayer } from "@kubemend/core/Llm"
import { Metrics } from "@kubemend/core/Metrics"
import { SarConfig } from "@kubemend/core/Sar"
import { BoundPorts, ServerConfig } from "@kubemend/core/Servers"
import { a2aRoutes, a2aServices, A2aConfig, type A2aSettings, TriageConfig, TriageModel } from "../src/A2a/index.ts"
import type { TriageSettings } from "../src/A2a/Triage.ts"
import { gatewayListeners, GatewayServices } from "../src/Gateway.ts"
import { RecordedAudit } from "../src/GatewayAudit.ts"
import { GatewayConfig, type GatewayOverrides } from "../src/GatewayConfig.ts"
import { GatewayStorage } from "../src/GatewayStorage.ts"
import { StatusConfig, type StatusSettings, statusServices } from "../src/Status/index.ts"
import { Infra } from "./support/Harness.ts"
import { namespace } from "./support/Seed.ts"
import { storageSeed } from "./support/StorageSeed.ts"

export { Infra, InfraLive, token } from "./support/Harness.ts"
export { namespace } from "./support/Seed.ts"

interface InvestigatingAgent {
  readonly url: string
  /** Tool calls received, in order. */
  readonly calls: Array<{ readonly tool: string; readonly args: Record<string, unknown> }>
  readonly close: () => Promise<void>
}

/**
 * An agent MCP server whose investigations behave like the real agent's: the session stays `active`, its
 * `analysis` reads `running` for `pollsUntilDone` `follow`/`status` calls, then `answered` with the RCA summary.
 */
const investigatingAgent = (pollsUntilDone: number) =>
  Effect.acquireRelease(
    Effect.promise(async (): Promise<InvestigatingAgent> => {
      const calls: InvestigatingAgent["calls"] = []
      const polls = new Map<string, number>()
      const transports = new Map<string, StreamableHTTPServerTransport>()
      const answer = (args: Record<string, unknown>) => {
        const rr = String(args.rr_id ?? "")
        if (args.action === "start") return { session_id: `ka-${rr}`, status: "active", analysis: "running", message: "investigation started; the opening analysis continues" }
        if (args.action === "status" || args.action === "follow") {
          const n = (polls.get(rr) ?? 0) + 1
          polls.set(rr, n)
          return n < pollsUntilDone
            ? { session_id: `ka-${rr}`, status: "active", analysis: "running" }
            : { session_id: `ka-${rr}`, status: "active", analysis: "answered", summary: `RCA for ${rr}: the memory limit is too low` }
        }
        return { session_id: `ka-${rr}`, status: "active" }
      }
      const newServer = () => {
        const server = new Server({ name: "investigating-agent", version: "1" }, { capabilities: { tools: {}, logging: {} } })
        server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: "svc_investigate", inputSchema: { type: "object" as const } }] }))
        server.setRequestHandler(CallToolRequestSchema, async (request) => {
          const args = (request.params.arguments ?? {}) as Record<string, unknown>
          calls.push({ tool: request.params.name, args })
          if (args.action === "start") {
            setTimeout(() => void server.sendLoggingMessage({ level: "info", logger: "kubemend-interactive", data: { message: `investigating ${String(args.rr_id)}` } }).catch(() => undefined), 5)
          }
          return { content: [{ type: "text", text: JSON.stringify(answer(args)) }] }
        })
        return server
      }
      const http = createServer((req, res) => {
        void (async () => {
          const id = req.headers["mcp-session-id"]
          let transport = typeof id === "string" ? transports.get(id) : undefined
          if (transport === undefined) {
            const created = new StreamableHTTPServerTransport({
              sessionIdGenerator: () => randomUUID(),
              onsessioninitialized: (sid) => void transports.set(sid, created)
            })
            transport = created
            await newServer().connect(created)
          }
          await transport.handleRequest(req, res)
        })()
      })
      await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", () => resolve()))
      const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
      return {
        url,
        calls,
        close: () =>
          new Promise<void>((resolve) => {
            for (const t of transports.values()) void t.close()
            http.closeAllConnections()
            http.close(() => resolve())
          })
      }
    }),
    (agent) => Effect.promise(() => agent.close())
  )

export interface TestGateway {
  readonly url: string
  readonly healthUrl: string
  readonly audit: Context.Tag.Service<RecordedAudit>
  readonly llm: ScriptedLlmServer
  readonly agent: InvestigatingAgent
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
    const agent = yield* investigatingAgent(pollsUntilDone ?? 2)
    const config = GatewayConfig.layer({
      interactiveEnabled: true,
      severityTriageEnabled: true,
      metricsBackendUrl: Option.some(alerts.url),
      agentUrl: Option.some(agent.url),
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
