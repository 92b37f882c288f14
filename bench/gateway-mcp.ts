/**
 * Gateway MCP bridge: authorized `tools/call` throughput and latency (p50/p99) through the full chain (per-IP
 * limit, JWT, per-user limit, console SAR, per-tool SAR with a warm cache, tool-call limit, deadline, audit,
 * metrics) next to the same tool handler behind a bare MCP SDK server (low-level `Server` + the SDK's Node
 * transport, no auth) in the same run, under the same client load (official SDK clients over SSE).
 *
 * Rate limits are raised for the run through the gateway's environment overrides. Two tools: a local one (the
 * pure cost of the chain) and one that reads the dev API server (what a cluster tool adds on top).
 *
 *   node --import tsx bench/gateway-mcp.ts
 *   CLIENTS=16 SECONDS=10 node --import tsx bench/gateway-mcp.ts
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { HttpServer } from "@effect/platform"
import { ConfigProvider, Context, Effect, Layer, Logger, LogLevel, Redacted, Runtime } from "effect"
import { randomUUID } from "node:crypto"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { AuthConfig } from "@kubemend/core/Auth"
import { providerFor } from "@kubemend/core/Config"
import { make as makeIssuer } from "@kubemend/core/devkit/Issuer"
import { DevKube } from "@kubemend/core/devkit/kube/DevKube"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Metrics } from "@kubemend/core/Metrics"
import { devkitRbacSpec, renderRbac } from "@kubemend/core/Personas"
import { SarConfig } from "@kubemend/core/Sar"
import { ServerConfig } from "@kubemend/core/Servers"
import { gatewayListeners, GatewayServices } from "../packages/gateway/src/Gateway.ts"
import { GatewayAudit } from "../packages/gateway/src/GatewayAudit.ts"
import { GatewayConfig, gatewayConfig } from "../packages/gateway/src/GatewayConfig.ts"
import { GatewayStorage } from "../packages/gateway/src/GatewayStorage.ts"
import { renderResult } from "../packages/gateway/src/Mcp/Output.ts"
import { ToolRegistry } from "../packages/gateway/src/Mcp/Registry.ts"
import type { ToolContext } from "../packages/gateway/src/Mcp/Tool.ts"

const namespace = "kubemend-system"
const clients = Number(process.env["CLIENTS"] ?? 8)
const seconds = Number(process.env["SECONDS"] ?? 5)
const warmupSeconds = Number(process.env["WARMUP"] ?? 3)

// The overrides an operator would set; read by the gateway's own config loader below.
for (
  const [k, v] of Object.entries({
    GATEWAY_RATE_LIMIT_IP_REQUESTS_PER_SEC: "1000000",
    GATEWAY_RATE_LIMIT_USER_REQUESTS_PER_SEC: "1000000",
    GATEWAY_RATE_LIMIT_TOOL_CALLS_PER_MINUTE: "100000000",
    GATEWAY_RATE_LIMIT_MAX_CONCURRENT_SESSIONS: "1000",
    GATEWAY_INTERACTIVE_ENABLED: "true"
  })
) process.env[k] ??= v

const cases = [
  {
    tool: "svc_present_decision",
    label: "local tool",
    args: { session_id: "bench", summary: "s", options: [{ workflow_id: "wf", name: "n", description: "d" }] }
  },
  { tool: "svc_get_remediation", label: "cluster read", args: { rr_id: "rr-bench" } }
] as const

/** The same handlers behind the SDK's plain server: a session per client, no authentication or limits. */
const bareServer = (registry: ToolRegistry, ctx: ToolContext, run: <A, E>(e: Effect.Effect<A, E>) => Promise<A>) =>
  new Promise<{ url: string; close: () => void }>((resolve) => {
    const transports = new Map<string, StreamableHTTPServerTransport>()
    const http = Http.createServer(async (req, res) => {
      const id = req.headers["mcp-session-id"]
      let transport = typeof id === "string" ? transports.get(id) : undefined
      if (transport === undefined) {
        const t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => void transports.set(sid, t) })
        const server = new Server({ name: "bare", version: "1" }, { capabilities: { tools: {}, logging: {} } })
        server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...registry.listed] }))
        server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
          const def = registry.lookup(request.params.name)!
          // Notifications go out as on the gateway, so both servers send the same messages.
          const notify = (data: unknown) =>
            Effect.promise(() =>
              extra.sendNotification({ method: "notifications/message", params: { level: "info", logger: "kubemend", data } }).catch(() => undefined)
            )
          const value = await run(def.run(request.params.arguments as never, { ...ctx, tool: request.params.name, notify }))
          return { content: [{ type: "text", text: renderResult(value, 16_384, def.listField) }] }
        })
        await server.connect(t)
        transport = t
      }
      await transport.handleRequest(req, res)
    })
    http.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, close: () => void http.close() }))
  })

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN

/** `n` SDK clients calling `tool` back to back for `duration` seconds, after a warm-up. */
const load = async (url: string, token: string | undefined, tool: string, args: Record<string, unknown>, duration = seconds, n = clients) => {
  const connected = await Promise.all(Array.from({ length: n }, async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } }
    })
    const client = new Client({ name: "bench", version: "1" })
    await client.connect(transport)
    return { client, transport }
  }))
  const once = async (c: Client) => {
    const r = await c.callTool({ name: tool, arguments: args })
    if (r.isError === true) throw new Error(JSON.stringify(r.content))
  }
  for (const { client } of connected) for (let i = 0; i < 20; i++) await once(client)
  const latencies: Array<number> = []
  let errors = 0
  const end = performance.now() + duration * 1000
  const started = performance.now()
  const cpu = process.cpuUsage()
  await Promise.all(connected.map(async ({ client }) => {
    while (performance.now() < end) {
      const t = performance.now()
      try {
        await once(client)
        latencies.push(performance.now() - t)
      } catch {
        errors++
      }
    }
  }))
  const elapsed = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  await Promise.all(connected.map(async ({ client, transport }) => {
    await transport.terminateSession().catch(() => undefined)
    await client.close()
  }))
  latencies.sort((a, b) => a - b)
  return {
    rps: latencies.length / elapsed,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    errors,
    calls: latencies.length,
    // Client and server share this process; the clients' share is the same for both servers, so the difference
    // is the server-side cost, which holds up better than wall time on a busy machine.
    cpuMsPerCall: (used.user + used.system) / 1000 / Math.max(1, latencies.length)
  }
}

const program = Effect.gen(function* () {
  const issuer = yield* makeIssuer()
  const kube = yield* DevKube.scoped()
  const rbac = renderRbac(devkitRbacSpec({ apiGroup: "kubemend.io", toolPrefix: "svc" }))
  kube.seed([
    { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
    ...rbac.clusterRoles,
    ...rbac.clusterRoleBindings,
    {
      apiVersion: "kubemend.io/v1alpha1",
      kind: "RemediationRequest",
      metadata: { name: "rr-bench", namespace },
      spec: { signalName: "s", signalFingerprint: "0".repeat(64), targetResource: { kind: "Deployment", name: "web", namespace: "demo" } },
      status: { overallPhase: "Analyzing" }
    }
  ])
  const config = Layer.effect(GatewayConfig, gatewayConfig).pipe(
    Layer.provide(Layer.setConfigProvider(providerFor("gateway", {}, ConfigProvider.fromEnv())))
  )
  const layer = gatewayListeners().pipe(
    Layer.provideMerge(GatewayServices),
    Layer.provideMerge(Layer.mergeAll(
      AuthConfig.layer({ providers: [{ name: "dev", issuerURL: issuer.url, audiences: [issuer.audience] }], allowInsecureIssuers: true }),
      SarConfig.layer(),
      GatewayStorage.layerMemory({}),
      Layer.succeed(GatewayAudit, GatewayAudit.fromSink(() => Effect.void)),
      Metrics.Default
    )),
    Layer.provideMerge(K8sLive.layer({ namespace, kubeconfig: kube.kubeConfig() })),
    Layer.provideMerge(Layer.mergeAll(config, ServerConfig.layer()))
  )
  const ctx = yield* Layer.build(layer)
  const address = Context.get(ctx, HttpServer.HttpServer).address
  const gatewayUrl = `http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}`
  const registry = Context.get(ctx, ToolRegistry)
  const settings = Context.get(ctx, GatewayConfig)
  const runtime = yield* Effect.runtime<never>()
  const toolCtx: ToolContext = {
    caller: {
      principal: {
        user: "sre-user",
        groups: ["kubemend-sre"],
        issuer: issuer.url,
        expiresAt: new Date(Date.now() + 3600e3),
        subject: "sre-user",
        tokenKind: "jwt"
      },
      clientIp: "127.0.0.1",
      endpoint: "/mcp",
      token: Redacted.make("")
    },
    tool: "",
    sessionId: undefined,
    notify: () => Effect.void,
    agent: { call: () => Effect.die("no agent in this benchmark"), follow: () => Effect.void }
  }
  const bare = yield* Effect.acquireRelease(
    Effect.promise(() => bareServer(registry, toolCtx, (e) => Runtime.runPromise(runtime)(e.pipe(Effect.orDie)))),
    (b) => Effect.sync(b.close)
  )
  const token = yield* issuer.persona("sre")

  console.log(
    `gateway MCP bridge: ${clients} SDK clients over SSE, ${seconds}s per run, rate limits from env ` +
      `(ip ${settings.rateLimit.ipRequestsPerSec}/s, user ${settings.rateLimit.userRequestsPerSec}/s, tools ${settings.rateLimit.toolCallsPerMinute}/min)`
  )
  console.log("| tool | server | calls/s | p50 ms | p99 ms | CPU ms/call | errors |")
  console.log("|---|---|---:|---:|---:|---:|---:|")
  // JIT warm-up of both servers on every tool before anything is measured.
  for (const c of cases) {
    yield* Effect.promise(() => load(bare.url, undefined, c.tool, c.args, warmupSeconds / 2))
    yield* Effect.promise(() => load(gatewayUrl, token, c.tool, c.args, warmupSeconds / 2))
  }
  // Throughput under `clients` concurrent clients, then latency with one client (no queueing behind others).
  for (const c of cases) {
    const bareRun = yield* Effect.promise(() => load(bare.url, undefined, c.tool, c.args))
    const full = yield* Effect.promise(() => load(gatewayUrl, token, c.tool, c.args))
    const bareOne = yield* Effect.promise(() => load(bare.url, undefined, c.tool, c.args, seconds / 2, 1))
    const fullOne = yield* Effect.promise(() => load(gatewayUrl, token, c.tool, c.args, seconds / 2, 1))
    console.log(
      `| ${c.tool} | 1 client: bare / gateway p50 | | ${bareOne.p50.toFixed(2)} / ${fullOne.p50.toFixed(2)} (+${(fullOne.p50 - bareOne.p50).toFixed(2)}) | ${
        bareOne.p99.toFixed(2)
      } / ${fullOne.p99.toFixed(2)} | | ${bareOne.errors + fullOne.errors} |`
    )
    for (const [name, r] of [["bare SDK server", bareRun], ["gateway (full chain)", full]] as const) {
      console.log(
        `| ${c.tool} (${c.label}) | ${name} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.cpuMsPerCall.toFixed(2)} | ${r.errors} |`
      )
    }
    console.log(
      `| ${c.tool} | ratio / added | ${(full.rps / bareRun.rps).toFixed(2)}x | ${(full.p50 - bareRun.p50).toFixed(2)} | ${
        (full.p99 - bareRun.p99).toFixed(2)
      } | ${(full.cpuMsPerCall - bareRun.cpuMsPerCall).toFixed(2)} | |`
    )
  }
})

Effect.runPromise(program.pipe(
  Effect.scoped,
  Logger.withMinimumLogLevel(LogLevel.Warning),
  Effect.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map())))
)).then(() => process.exit(0), (e) => {
  console.error(e)
  process.exit(1)
})
