/**
 * Gateway MCP bridge: authorized `tools/call` throughput and latency (p50/p99) through the full chain (per-IP
 * limit, JWT, per-user limit, console SAR, per-tool SAR with a warm cache, tool-call limit, deadline, audit,
 * metrics) next to the same tool handler behind a bare MCP SDK server (low-level `Server` + the SDK's Node
 * transport, no auth) in the same run, under the same client load (official SDK clients over SSE).
 *
 * Two gateways, each measured against the bare server:
 * - "no-op audit": audit events are built and dropped, storage in memory: the chain's own cost.
 * - "audit to storage": as deployed: the core Audit layer buffers every call's `apifrontend.tool.executed` event
 *   and batches it over HTTP to the real storage service in a process of its own (TokenReview by the dev API
 *   server, a PostgreSQL test database), whose CPU per call is printed beside it.
 *
 * Rate limits are raised for the run through the gateway's environment overrides. Two tools: a local one (the
 * pure cost of the chain) and one that reads the dev API server (what a cluster tool adds on top).
 *
 *   node --import tsx bench/gateway-mcp.ts
 *   CLIENTS=16 SECONDS=10 node --import tsx bench/gateway-mcp.ts
 */
import { HttpServer } from "@effect/platform"
import { ConfigProvider, Context, Effect, Layer, Logger, LogLevel, Redacted, Runtime } from "effect"
import * as Fs from "node:fs"
import { Audit, AuditConfig } from "@kubemend/core/Audit"
import { AuthConfig } from "@kubemend/core/Auth"
import { providerFor } from "@kubemend/core/Config"
import { make as makeIssuer } from "@kubemend/devkit/Issuer"
import { DevKube } from "@kubemend/devkit/kube/DevKube"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Metrics } from "@kubemend/core/Metrics"
import { devkitRbacSpec, renderRbac } from "@kubemend/core/Personas"
import { SarConfig } from "@kubemend/core/Sar"
import { ServerConfig } from "@kubemend/core/Servers"
import { Storage } from "@kubemend/core/Storage"
import { grantStorageClient, startStorage } from "../packages/gateway/test/support/StorageProcess.ts"
import { auditToStorage, gatewayListeners, GatewayServices } from "@kubemend/gateway/Service"
import { GatewayAudit } from "../packages/gateway/src/GatewayAudit.ts"
import { GatewayConfig, gatewayConfig } from "../packages/gateway/src/GatewayConfig.ts"
import { GatewayStorage } from "../packages/gateway/src/GatewayStorage.ts"
import { ToolRegistry } from "../packages/gateway/src/Mcp/Registry.ts"
import type { ToolContext } from "../packages/gateway/src/Mcp/Tool.ts"
import { bareServer, load, type LoadResult } from "./support/mcp-load.ts"

const namespace = "kubemend-system"
const clients = Number(process.env["CLIENTS"] ?? 8)
const seconds = Number(process.env["SECONDS"] ?? 5)
const warmupSeconds = Number(process.env["WARMUP"] ?? 3)
/** `ONLY=noop|storage`: one gateway and no bare runs, for profiling one setup (`node --cpu-prof`). */
const only = process.env["ONLY"]

// The overrides an operator would set; read by the gateway's own config loader below.
for (
  const [k, v] of Object.entries({
    GATEWAY_RATE_LIMIT_IP_REQUESTS_PER_SEC: "1000000",
    GATEWAY_RATE_LIMIT_USER_REQUESTS_PER_SEC: "1000000",
    GATEWAY_RATE_LIMIT_TOOL_CALLS_PER_MINUTE: "100000000",
    GATEWAY_RATE_LIMIT_MAX_CONCURRENT_SESSIONS: "1000",
    GATEWAY_RATE_LIMIT_MAX_SESSIONS_PER_USER: "1000",
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

/** User + system CPU of another process so far, in ms (Linux `/proc/<pid>/stat`, 100 ticks/s). */
const processCpuMs = (pid: number | undefined) => {
  if (pid === undefined) return NaN
  try {
    const fields = Fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return NaN
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
  const gateway = <ROut extends GatewayStorage | GatewayAudit, E>(backends: Layer.Layer<ROut, E, Metrics>) =>
    Effect.gen(function* () {
      const layer = gatewayListeners().pipe(
        Layer.provideMerge(GatewayServices),
        Layer.provideMerge(Layer.mergeAll(
          AuthConfig.layer({ providers: [{ name: "dev", issuerURL: issuer.url, audiences: [issuer.audience] }], allowInsecureIssuers: true }),
          SarConfig.layer(),
          backends
        )),
        Layer.provideMerge(Metrics.Default),
        Layer.provideMerge(K8sLive.layer({ namespace, kubeconfig: kube.kubeConfig() })),
        Layer.provideMerge(Layer.mergeAll(config, ServerConfig.layer()))
      )
      const ctx = yield* Layer.build(layer)
      const address = Context.get(ctx, HttpServer.HttpServer).address
      return { ctx, url: `http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}` }
    })

  const noop = yield* gateway(Layer.mergeAll(GatewayStorage.layerMemory({}), Layer.succeed(GatewayAudit, GatewayAudit.fromSink(() => Effect.void))))
  const storage = yield* startStorage(kube, namespace)
  grantStorageClient(kube, namespace, "gateway")
  const storageClient = Storage.layer({ baseUrl: storage.url, token: Redacted.make(kube.registerServiceAccountToken(namespace, "gateway")) })
  const audited = yield* gateway(
    Layer.mergeAll(GatewayStorage.layerFromStorage(storage.url), auditToStorage).pipe(
      Layer.provideMerge(Audit.layer),
      Layer.provide(AuditConfig.layer("gateway")),
      Layer.provideMerge(storageClient)
    )
  )
  const registry = Context.get(noop.ctx, ToolRegistry)
  const settings = Context.get(noop.ctx, GatewayConfig)
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
  const servers = [
    { name: "bare SDK server", url: bare.url, token: undefined, audited: false },
    { name: "gateway, no-op audit", url: noop.url, token, audited: false },
    { name: "gateway, audit to storage", url: audited.url, token, audited: true }
  ].filter((s) => only === undefined || (only === "noop" ? s.url === noop.url : s.audited))

  /** One run; for the audited gateway also the storage process's CPU per call (its share of the batches). */
  const run = (s: (typeof servers)[number], c: (typeof cases)[number], duration: number, n: number) =>
    Effect.promise(async () => {
      const before = processCpuMs(storage.child.pid)
      const r = await load(s.url, s.token, c.tool, c.args, duration, n)
      const storageMs = s.audited ? (processCpuMs(storage.child.pid) - before) / Math.max(1, r.calls) : undefined
      return { ...r, storageMs }
    })

  console.log(
    `gateway MCP bridge: ${clients} SDK clients over SSE, ${seconds}s per run, rate limits from env ` +
      `(ip ${settings.rateLimit.ipRequestsPerSec}/s, user ${settings.rateLimit.userRequestsPerSec}/s, tools ${settings.rateLimit.toolCallsPerMinute}/min)`
  )
  console.log("| tool | server | calls/s | p50 ms | p99 ms | CPU ms/call (+ storage process) | errors |")
  console.log("|---|---|---:|---:|---:|---:|---:|")
  // JIT warm-up of every server on every tool before anything is measured.
  for (const c of cases) for (const s of servers) yield* run(s, c, warmupSeconds / 2, clients)
  const row = (tool: string, name: string, r: LoadResult & { storageMs: number | undefined }) =>
    console.log(
      `| ${tool} | ${name} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.cpuMsPerCall.toFixed(2)}${
        r.storageMs === undefined ? "" : ` (+ ${r.storageMs.toFixed(2)})`
      } | ${r.errors} |`
    )
  // Throughput under `clients` concurrent clients, then latency with one client (no queueing behind others).
  for (const c of cases) {
    const results: Array<LoadResult & { storageMs: number | undefined }> = []
    for (const s of servers) {
      results.push(yield* run(s, c, seconds, clients))
      row(`${c.tool} (${c.label})`, s.name, results.at(-1)!)
    }
    const ones: Array<LoadResult> = []
    for (const s of servers) ones.push(yield* run(s, c, seconds / 2, 1))
    console.log(
      `| ${c.tool} | 1 client p50 / p99 | | ${ones.map((r) => r.p50.toFixed(2)).join(" / ")} | ${ones.map((r) => r.p99.toFixed(2)).join(" / ")} | | |`
    )
    if (only !== undefined) continue
    const [b, ...gws] = results
    gws.forEach((g, i) =>
      console.log(
        `| ${c.tool} | ${servers[i + 1]!.name} vs bare: ratio / added | ${(g.rps / b!.rps).toFixed(2)}x | +${(g.p50 - b!.p50).toFixed(2)} | +${
          (g.p99 - b!.p99).toFixed(2)
        } | +${(g.cpuMsPerCall - b!.cpuMsPerCall).toFixed(2)} | |`
      )
    )
  }
  // The last batches go out within the flush interval (1 s).
  yield* Effect.sleep("2 seconds")
  const metrics = yield* Context.get(audited.ctx, Metrics).render(undefined)
  const dropped = /^audit_events_dropped_total\{service="gateway"\} (\d+)/m.exec(metrics.body)?.[1] ?? "0"
  console.log(`audit events dropped by the audited gateway (buffer full or refused): ${dropped}`)
})

Effect.runPromise(program.pipe(
  Effect.scoped,
  Logger.withMinimumLogLevel(LogLevel.Warning),
  Effect.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map())))
)).then(() => process.exit(0), (e) => {
  console.error(e)
  process.exit(1)
})
