/**
 * Gateway shared state: what sharing through Valkey adds to a `tools/call`. Two gateway replicas sharing one
 * Valkey/Redis (each call of a client goes to the other replica than its previous one, as a load balancer without
 * affinity would send it, so every call pays the shared rate-limit checks and the session re-creation happens in
 * the warm-up), and one of them alone (Valkey without the round robin), against one replica with its state in
 * memory, in the same process, under the same client load
 * (official MCP SDK clients over SSE, connected once per setup and kept). On a busy machine the load moves from one
 * second to the next, so the setups take turns in short rounds (A B C, then C B A, …, each after the same few warm-up
 * calls) and the figure is the median of the per-round differences of p50, with its spread. (Alternating call by
 * call instead made every call of both setups about ten times slower here, so it measured something else.) The
 * machine-independent figure is the number of Valkey commands per `tools/call`, counted on the gateway's own
 * connections.
 * The goal (issue 20): shared state adds at most 0.5 ms at p50 per `tools/call`.
 *
 *   node --import tsx bench/gateway-ha.ts          (Valkey/Redis at TEST_REDIS_URL, default redis://127.0.0.1:6379)
 *   CLIENTS=4 ROUND_SECONDS=1 ROUNDS=30 node --import tsx bench/gateway-ha.ts
 */
import { HttpServer } from "@effect/platform"
import { ConfigProvider, Context, Effect, Layer, Logger, LogLevel, Option } from "effect"
import { randomUUID } from "node:crypto"
import * as Os from "node:os"
import { AuthConfig } from "@kubemend/core/Auth"
import { make as makeIssuer } from "@kubemend/devkit/Issuer"
import { DevKube } from "@kubemend/devkit/kube/DevKube"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Metrics } from "@kubemend/core/Metrics"
import { devkitRbacSpec, renderRbac } from "@kubemend/core/Personas"
import { SarConfig } from "@kubemend/core/Sar"
import { ServerConfig } from "@kubemend/core/Servers"
import { gatewayListeners, GatewayServices } from "@kubemend/gateway/Service"
import { GatewayAudit } from "../packages/gateway/src/GatewayAudit.ts"
import { GatewayConfig } from "../packages/gateway/src/GatewayConfig.ts"
import { GatewayStorage } from "../packages/gateway/src/GatewayStorage.ts"
import { valkeyAt } from "../packages/gateway/src/Shared/ValkeySettings.ts"
import { SharedState } from "../packages/gateway/src/SharedState.ts"
import { connect, type LoadResult } from "./support/mcp-load.ts"
import { commandsBetween, valkeyCommands } from "./support/valkey-commands.ts"

const namespace = "kubemend-system"
/** One client by default: with more, calls queue behind each other on a busy machine and p50 measures the queue. */
const clients = Number(process.env["CLIENTS"] ?? 1)
const roundSeconds = Number(process.env["ROUND_SECONDS"] ?? 1)
const rounds = Number(process.env["ROUNDS"] ?? 30)
/** Calls per client before each measured round: the same for every setup. */
const warmup = 5
const redis = new URL(process.env["TEST_REDIS_URL"] ?? "redis://127.0.0.1:6379")
const tool = "svc_present_decision"
const args = { session_id: "bench", summary: "s", options: [{ workflow_id: "wf", name: "n", description: "d" }] }

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN

const program = Effect.gen(function* () {
  const issuer = yield* makeIssuer()
  const kube = yield* DevKube.scoped()
  const rbac = renderRbac(devkitRbacSpec({ apiGroup: "kubemend.io", toolPrefix: "svc" }))
  kube.seed([{ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }, ...rbac.clusterRoles, ...rbac.clusterRoleBindings])
  const keyPrefix = `kubemend:bench:${randomUUID()}`

  const gateway = (shared: boolean) =>
    Effect.gen(function* () {
      const config = GatewayConfig.layer({
        interactiveEnabled: true,
        rateLimit: {
          ipRequestsPerSec: 1_000_000,
          userRequestsPerSec: 1_000_000,
          toolCallsPerMinute: 100_000_000,
          maxConcurrentSessions: 1000,
          maxSessionsPerUser: 1000
        },
        ...(shared ? { valkey: Option.some(valkeyAt(redis.hostname, Number(redis.port || 6379), { keyPrefix })) } : {})
      })
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
      const degraded = yield* Context.get(ctx, SharedState).degraded
      if (Option.isSome(degraded)) return yield* Effect.dieMessage(`no shared state for the benchmark: ${degraded.value}`)
      const address = Context.get(ctx, HttpServer.HttpServer).address
      return { url: `http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}`, shared: Context.get(ctx, SharedState) }
    })

  const memory = (yield* gateway(false)).url
  const first = yield* gateway(true)
  const replicas = [first.url, (yield* gateway(true)).url]
  const token = yield* issuer.persona("sre")
  const pools = {
    memory: yield* Effect.acquireRelease(Effect.promise(() => connect([memory], token, clients)), (p) => Effect.promise(p.close)),
    shared: yield* Effect.acquireRelease(Effect.promise(() => connect(replicas, token, clients)), (p) => Effect.promise(p.close)),
    // One of the two alone: what Valkey costs apart from the round robin between replicas.
    one: yield* Effect.acquireRelease(Effect.promise(() => connect([first.url], token, clients)), (p) => Effect.promise(p.close))
  }
  // The first calls re-create each session on the other replica and prove Valkey answers (a degraded replica
  // would measure memory against memory).
  yield* Effect.promise(() => pools.shared.run(tool, args, 1))
  yield* Effect.promise(() => pools.memory.run(tool, args, 1))
  yield* Effect.promise(() => pools.one.run(tool, args, 1))

  type Setup = keyof typeof pools
  const setups: ReadonlyArray<Setup> = ["memory", "shared", "one"]
  const results: Record<Setup, Array<LoadResult>> = { memory: [], shared: [], one: [] }
  const loads: Array<number> = []
  let sharedCalls = 0
  const commands = new Map<string, number>()
  /** Commands sent while the memory setup ran: none, unless a shared replica's background task is busy. */
  let aside = 0

  /** Each setup on its own for a round: A B C, then C B A, so none always runs after the same one. */
  const round = (i: number) =>
    Effect.forEach(i % 2 === 0 ? setups : [...setups].reverse(), (setup) =>
      Effect.gen(function* () {
        const before = valkeyCommands()
        const r = yield* Effect.promise(() => pools[setup].run(tool, args, roundSeconds, warmup))
        const sent = commandsBetween(before, valkeyCommands())
        if (setup !== "memory") {
          sharedCalls += r.calls + r.errors + warmup * clients
          for (const [name, n] of sent) commands.set(name, (commands.get(name) ?? 0) + n)
        } else for (const n of sent.values()) aside += n
        results[setup].push(r)
      }))

  for (let i = 0; i < rounds; i++) {
    loads.push(Os.loadavg()[0]!)
    yield* round(i)
  }
  loads.push(Os.loadavg()[0]!)

  const diffsOf = (setup: Setup) => results[setup].map((r, i) => r.p50 - results.memory[i]!.p50).sort((a, b) => a - b)
  const diffs = diffsOf("shared")
  const alone = diffsOf("one")
  console.log(
    `gateway shared state: ${tool}, ${clients} SDK clients over SSE per setup, ${rounds} rounds of ${roundSeconds}s per setup ` +
      `(A B C, C B A, …, ${warmup} warm-up calls per client and setup each), Valkey at ${redis.host}; load average ${Math.min(...loads).toFixed(1)}–${
        Math.max(...loads).toFixed(1)
      } (1 min) on ${Os.availableParallelism()} cores`
  )
  console.log("| setup | calls/s | p50 ms | p99 ms | CPU ms/call | errors |")
  console.log("|---|---:|---:|---:|---:|---:|")
  const row = (name: string, rs: ReadonlyArray<LoadResult>) =>
    console.log(
      `| ${name} | ${median(rs.map((r) => r.rps)).toFixed(0)} | ${median(rs.map((r) => r.p50)).toFixed(2)} | ${median(rs.map((r) => r.p99)).toFixed(2)} | ${
        median(rs.map((r) => r.cpuMsPerCall)).toFixed(2)
      } | ${rs.reduce((n, r) => n + r.errors, 0)} |`
    )
  row("1 replica, state in memory", results.memory)
  row("2 replicas sharing Valkey (round robin)", results.shared)
  row("1 replica of the 2, state in Valkey", results.one)
  console.log(
    `added p50 per tools/call, median of ${rounds} per-round differences: ${median(diffs).toFixed(2)} ms (goal <= 0.50); ` +
      `min ${diffs[0]!.toFixed(2)}, quartiles ${percentile(diffs, 0.25).toFixed(2)}–${percentile(diffs, 0.75).toFixed(2)}, max ${diffs.at(-1)!.toFixed(2)}; ` +
      `one replica with Valkey: ${median(alone).toFixed(2)} ms (quartiles ${percentile(alone, 0.25).toFixed(2)}–${percentile(alone, 0.75).toFixed(2)})`
  )
  const total = [...commands.values()].reduce((a, b) => a + b, 0)
  console.log(
    `Valkey commands per tools/call (the gateway's connections, ${sharedCalls} calls with Valkey): ${(total / Math.max(1, sharedCalls)).toFixed(3)} ` +
      `(${[...commands].map(([name, n]) => `${name} ${(n / Math.max(1, sharedCalls)).toFixed(3)}`).join(", ")}); ${aside} sent while the memory setup ran`
  )
  // What the difference is made of, measured apart from the HTTP path: one rate-limit script round trip (a
  // tools/call makes one: its ip, user and tool-call tokens together, its bearer token being remembered). Back to
  // back the server stays hot; one every 10 ms (as sparse calls meet it) a busy machine may first have to wake it.
  const roundTrips = (pause: number, n: number) =>
    Effect.gen(function* () {
      const times: Array<number> = []
      for (let i = 0; i < n; i++) {
        if (pause > 0) yield* Effect.promise(() => new Promise((r) => setTimeout(r, pause)))
        const t = performance.now()
        yield* first.shared.take(`bench:${i % 50}`, { capacity: 1000, perMs: 1 })
        times.push(performance.now() - t)
      }
      return percentile(times.sort((a, b) => a - b), 0.5)
    })
  const scripts = (commands.get("evalsha") ?? 0) / Math.max(1, sharedCalls)
  const hot = yield* roundTrips(0, 2000)
  const sparse = yield* roundTrips(10, 200)
  console.log(
    `one shared rate-limit check (Lua round trip) p50: back to back ${hot.toFixed(3)} ms, one every 10 ms ${sparse.toFixed(3)} ms; ` +
      `${scripts.toFixed(2)} per tools/call: ${(scripts * hot).toFixed(2)} / ${(scripts * sparse).toFixed(2)} ms`
  )
})

Effect.runPromise(program.pipe(
  Effect.scoped,
  Logger.withMinimumLogLevel(LogLevel.Warning),
  Effect.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map())))
)).then(() => process.exit(0), (e) => {
  console.error(e)
  process.exit(1)
})
