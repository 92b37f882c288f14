/**
 * Status stream: memory per subscriber held by one gateway process, and the latency from an RR phase change in the
 * cluster API to the `status/update` at the clients, next to a bare SSE fan-out server (plain node:http, one write
 * per connection) measured the same way in the same run.
 *
 * The servers run in child processes (so their memory is theirs alone, measured after a forced GC); the dev API
 * server, the dev issuer and all SSE clients live in this process. The gateway serves `POST /a2a/status` through
 * its real edge chain (JWT, rate limits) and the status hub on the live K8s layer.
 *
 *   node --import tsx bench/status-stream.ts
 *   SUBSCRIBERS=5000 LATENCY_SUBSCRIBERS=1000 CHANGES=20 RRS=50 node --import tsx bench/status-stream.ts
 */
import { HttpRouter, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { spawn } from "node:child_process"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { Auth, AuthConfig } from "@kubemend/core/Auth"
import { make as makeIssuer } from "@kubemend/devkit/Issuer"
import { start as startKube } from "@kubemend/devkit/kube/index"
import { Drain } from "@kubemend/core/Drain"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Metrics } from "@kubemend/core/Metrics"
import { Sar, SarConfig } from "@kubemend/core/Sar"
import { Edge } from "../packages/gateway/src/Edge/Chain.ts"
import { RateLimits } from "@kubemend/gateway/Limits/RateLimits"
import { SharedState } from "../packages/gateway/src/SharedState.ts"
import { GatewayAudit } from "../packages/gateway/src/GatewayAudit.ts"
import { GatewayConfig } from "../packages/gateway/src/GatewayConfig.ts"
import { GatewayMetrics } from "../packages/gateway/src/GatewayMetrics.ts"
import { StatusConfig, StatusHub, statusHandler } from "../packages/gateway/src/Status/index.ts"

const namespace = "kubemend-system"
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback)

/** The child's memory after a full GC, on its own small listener. */
const memoryEndpoint = () =>
  new Promise<number>((resolve) => {
    const server = Http.createServer((_req, res) => {
      ;(globalThis as { gc?: () => void }).gc?.()
      ;(globalThis as { gc?: () => void }).gc?.()
      res.end(JSON.stringify(process.memoryUsage()))
    })
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port))
  })

// ---------------------------------------------------------------------------------------------- gateway child
const gatewayChild = async () => {
  const memPort = await memoryEndpoint()
  const app = HttpRouter.empty.pipe(HttpRouter.post("/a2a/status", statusHandler))
  const layer = HttpServer.serve(app).pipe(
    Layer.provideMerge(StatusHub.Default),
    Layer.provideMerge(Edge.Default),
    Layer.provideMerge(RateLimits.Default),
    Layer.provideMerge(SharedState.layerMemory),
    Layer.provideMerge(GatewayMetrics.Default),
    Layer.provideMerge(Layer.mergeAll(Sar.DefaultWithoutDependencies, Auth.Default)),
    Layer.provideMerge(Layer.mergeAll(
      AuthConfig.layer({ providers: [{ name: "dev", issuerURL: process.env.ISSUER_URL!, audiences: [process.env.AUDIENCE!] }], allowInsecureIssuers: true }),
      SarConfig.layer(),
      GatewayAudit.layerLog,
      Metrics.Default,
      StatusConfig.layer({ maxSubscribers: 1_000_000 }),
      Drain.Default
    )),
    Layer.provideMerge(K8sLive.layer({ namespace, kubeconfig: process.env.KUBECONFIG_TEXT!, watchTimeout: "30 minutes" })),
    Layer.provideMerge(Layer.mergeAll(
      GatewayConfig.layer({ rateLimit: { ipRequestsPerSec: 1_000_000, userRequestsPerSec: 1_000_000 } }),
      NodeHttpServer.layer(() => Http.createServer(), { port: 0, host: "127.0.0.1" })
    ))
  )
  await Effect.runPromise(
    Effect.gen(function* () {
      const server = yield* HttpServer.HttpServer
      const port = server.address._tag === "TcpAddress" ? server.address.port : 0
      process.stdout.write(`READY ${port} ${memPort}\n`)
      return yield* Effect.never
    }).pipe(Effect.provide(layer), Effect.scoped, Logger.withMinimumLogLevel(LogLevel.Error))
  )
}

// ---------------------------------------------------------------------------------------------- baseline child
const baselineChild = async () => {
  const memPort = await memoryEndpoint()
  const clients = new Set<Http.ServerResponse>()
  const server = Http.createServer((req, res) => {
    if (req.url === "/publish") {
      let body = ""
      req.on("data", (c: Buffer) => (body += c.toString()))
      req.on("end", () => {
        const frame = `event: status/update\ndata: ${body}\n\n`
        for (const c of clients) c.write(frame)
        res.end("ok")
      })
      return
    }
    req.resume()
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" })
    res.write(`event: status/update\ndata: {"phase":"Analyzing"}\n\n`)
    clients.add(res)
    res.on("close", () => clients.delete(res))
  })
  server.listen(0, "127.0.0.1", () => process.stdout.write(`READY ${(server.address() as AddressInfo).port} ${memPort}\n`))
}

// ---------------------------------------------------------------------------------------------- parent
interface Child {
  readonly port: number
  readonly memory: () => Promise<NodeJS.MemoryUsage>
  readonly kill: () => void
}

const spawnChild = (role: string, extraEnv: Record<string, string> = {}) =>
  new Promise<Child>((resolve, reject) => {
    const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", new URL(import.meta.url).pathname, role], {
      env: { ...process.env, ...extraEnv },
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString()
      const m = /READY (\d+) (\d+)/.exec(out)
      if (m === null) return
      const memPort = Number(m[2])
      resolve({
        port: Number(m[1]),
        memory: async () => (await (await fetch(`http://127.0.0.1:${memPort}/`)).json()) as NodeJS.MemoryUsage,
        kill: () => void child.kill("SIGKILL")
      })
    })
    child.on("exit", (code) => reject(new Error(`${role} exited with ${code}`)))
  })

const agent = new Http.Agent({ keepAlive: false, maxSockets: Infinity })

interface Subscriber {
  updates: number
  readonly req: Http.ClientRequest
}

/** Opens one SSE stream; `onUpdate` runs for each `status/update` after the first. */
const openStream = (port: number, path: string, headers: Record<string, string>, body: string, onUpdate: () => void) =>
  new Promise<Subscriber>((resolve, reject) => {
    const sub: { updates: number; req?: Http.ClientRequest } = { updates: 0 }
    const req = Http.request({ host: "127.0.0.1", port, path, method: body === "" ? "GET" : "POST", headers, agent }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}`))
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => {
        const n = chunk.split("event: status/update").length - 1
        for (let i = 0; i < n; i++) {
          sub.updates++
          if (sub.updates === 1) resolve(sub as Subscriber)
          else onUpdate()
        }
      })
      res.on("error", () => undefined)
    })
    req.on("error", reject)
    sub.req = req
    req.end(body)
  })

/** Opens `n` streams, `concurrency` at a time. */
const openMany = async (n: number, open: (i: number) => Promise<Subscriber>, concurrency = 200) => {
  const subs: Array<Subscriber> = []
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) subs.push(await open(next++))
  }))
  return subs
}

const closeAll = async (subs: ReadonlyArray<Subscriber>) => {
  for (const s of subs) s.req.destroy()
  await new Promise((r) => setTimeout(r, 500))
}

const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
}

/** Per change: time from `trigger` until all `n` subscribers saw the update; every arrival's latency is kept. */
const measure = async (n: number, changes: number, trigger: (k: number) => void, wire: (record: () => void) => void) => {
  const latencies: Array<number> = []
  let t0 = 0
  let arrived = 0
  let done: () => void = () => {}
  wire(() => {
    latencies.push(performance.now() - t0)
    if (++arrived === n) done()
  })
  for (let k = 0; k < changes; k++) {
    arrived = 0
    const all = new Promise<void>((r) => (done = r))
    t0 = performance.now()
    trigger(k)
    await Promise.race([all, new Promise((_, reject) => setTimeout(() => reject(new Error(`change ${k}: ${arrived}/${n} arrived`)), 10_000))])
    await new Promise((r) => setTimeout(r, 50))
  }
  return latencies
}

const rr = (name: string, phase: string) => ({
  apiVersion: "kubemend.io/v1alpha1",
  kind: "RemediationRequest",
  metadata: { name, namespace },
  spec: {
    signalName: "KubePodCrashLooping",
    signalFingerprint: "c".repeat(64),
    targetResource: { apiVersion: "apps/v1", kind: "Deployment", name: "checkout", namespace: "demo" }
  },
  status: { overallPhase: phase }
})

const phases = ["Processing", "Analyzing", "AwaitingApproval", "Running", "Verifying", "Blocked"]

interface Row {
  readonly name: string
  readonly subscribers: number
  readonly heapPerSub: number
  readonly rssPerSub: number
  readonly latencySubscribers: number
  readonly latencies: ReadonlyArray<number>
}

const memoryPerSubscriber = async (child: Child, n: number, open: (i: number) => Promise<Subscriber>) => {
  const before = await child.memory()
  const subs = await openMany(n, open)
  await new Promise((r) => setTimeout(r, 300))
  const after = await child.memory()
  await closeAll(subs)
  return { heap: (after.heapUsed - before.heapUsed) / n, rss: (after.rss - before.rss) / n }
}

const main = async () => {
  const total = env("SUBSCRIBERS", 5000)
  const latencyN = env("LATENCY_SUBSCRIBERS", 1000)
  const changes = env("CHANGES", 20)
  const rrCount = env("RRS", 50)
  const kube = await startKube({ watchHistory: 100_000 })
  kube.seed([{ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }])
  for (let i = 0; i < rrCount; i++) kube.put(rr(`rr-bench-${i}`, "Analyzing"))
  kube.put(rr("rr-latency", "Analyzing"))

  const rows: Array<Row> = []
  await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
    const issuer = yield* makeIssuer()
    const token = yield* issuer.persona("sre", { exp: Math.floor(Date.now() / 1000) + 3600 })
    yield* Effect.promise(async () => {
      // Gateway.
      const gw = await spawnChild("gateway-child", { ISSUER_URL: issuer.url, AUDIENCE: issuer.audience, KUBECONFIG_TEXT: kube.kubeConfig() })
      const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }
      const body = (rrId: string) => JSON.stringify({ jsonrpc: "2.0", id: 1, method: "status/subscribe", params: { rr_id: rrId } })
      // Warm up: JIT, JWKS, watches.
      await closeAll(await openMany(200, (i) => openStream(gw.port, "/a2a/status", headers, body(`rr-bench-${i % rrCount}`), () => {})))
      const gwMem = await memoryPerSubscriber(gw, total, (i) => openStream(gw.port, "/a2a/status", headers, body(`rr-bench-${i % rrCount}`), () => {}))
      let record: () => void = () => {}
      const subs = await openMany(latencyN, () => openStream(gw.port, "/a2a/status", headers, body("rr-latency"), () => record()))
      const gwLatencies = await measure(latencyN, changes, (k) => void kube.put(rr("rr-latency", phases[k % phases.length]!)), (r) => (record = r))
      await closeAll(subs)
      gw.kill()
      rows.push({
        name: "gateway status stream",
        subscribers: total,
        heapPerSub: gwMem.heap,
        rssPerSub: gwMem.rss,
        latencySubscribers: latencyN,
        latencies: gwLatencies
      })

      // Bare SSE fan-out.
      const base = await spawnChild("baseline-child")
      await closeAll(await openMany(200, () => openStream(base.port, "/sse", {}, "", () => {})))
      const baseMem = await memoryPerSubscriber(base, total, () => openStream(base.port, "/sse", {}, "", () => {}))
      let recordBase: () => void = () => {}
      const baseSubs = await openMany(latencyN, () => openStream(base.port, "/sse", {}, "", () => recordBase()))
      const publish = (k: number) => {
        const req = Http.request({ host: "127.0.0.1", port: base.port, path: "/publish", method: "POST", agent })
        req.on("response", (res) => res.resume())
        req.end(JSON.stringify({ jsonrpc: "2.0", method: "status/update", params: { rr_id: "rr-latency", phase: phases[k % phases.length], final: false } }))
      }
      const baseLatencies = await measure(latencyN, changes, publish, (r) => (recordBase = r))
      await closeAll(baseSubs)
      base.kill()
      rows.push({
        name: "bare SSE fan-out",
        subscribers: total,
        heapPerSub: baseMem.heap,
        rssPerSub: baseMem.rss,
        latencySubscribers: latencyN,
        latencies: baseLatencies
      })
    })
  })))
  await kube.close()

  const kb = (b: number) => `${(b / 1024).toFixed(1)} KB`
  const ms = (x: number) => `${x.toFixed(1)} ms`
  console.log(
    `\nmemory per subscriber (${total} open streams, after GC) and latency from the change to the event (${latencyN} subscribers, ${changes} changes)\n`
  )
  console.log(["".padEnd(24), "heap/sub".padStart(10), "rss/sub".padStart(10), "p50".padStart(10), "p99".padStart(10), "max".padStart(10)].join(""))
  for (const r of rows) {
    console.log([
      r.name.padEnd(24),
      kb(r.heapPerSub).padStart(10),
      kb(r.rssPerSub).padStart(10),
      ms(percentile(r.latencies, 50)).padStart(10),
      ms(percentile(r.latencies, 99)).padStart(10),
      ms(Math.max(...r.latencies)).padStart(10)
    ].join(""))
  }
}

const role = process.argv[2]
const run = role === "gateway-child" ? gatewayChild : role === "baseline-child" ? baselineChild : main
run().catch((e) => {
  console.error(e)
  process.exit(1)
})
