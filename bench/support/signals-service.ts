/**
 * The process `bench/signals-ingest.ts` measures, as deployed: `BENCH_MODE=signals` runs the signal service (its
 * K8s client on `BENCH_KUBECONFIG`, the dev API server in the bench's process); `BENCH_MODE=baseline` runs a bare
 * `node:http` handler that reads the JSON body, parses it and answers 201 with a small JSON object — the floor any
 * Node JSON endpoint pays. The service's audit events go out as deployed (buffered, batched over HTTP) to a loopback
 * stand-in for storage's batch endpoint that accepts them. The API port goes to stdout once it listens.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Audit, AuditConfig } from "@kubemend/core/Audit"
import { AuthConfig } from "@kubemend/core/Auth"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Metrics } from "@kubemend/core/Metrics"
import { apiPort, ServerConfig } from "@kubemend/core/Servers"
import { Storage } from "@kubemend/core/Storage"
import { Config, Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { ServerLive } from "../../packages/signals/src/Service.ts"
import { SignalsConfig } from "../../packages/signals/src/SignalsConfig.ts"

const baseline = Effect.async<never>(() => {
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { alerts?: ReadonlyArray<unknown> }
      res.writeHead(201, { "content-type": "application/json" })
      res.end(JSON.stringify({ status: "accepted", alerts: body.alerts?.length ?? 0 }))
    })
  })
  server.listen(0, "127.0.0.1", () => process.stdout.write(`port ${(server.address() as AddressInfo).port}\n`))
})

/** Storage's `POST /api/v1/audit/events/batch`, accepting every batch. */
const storageSink = Effect.async<string>((resume) => {
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const events = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ReadonlyArray<{ event_id?: string }>
      res.writeHead(201, { "content-type": "application/json" })
      res.end(JSON.stringify({ event_ids: events.map((e) => e.event_id), message: "stored" }))
    })
  })
  server.listen(0, "127.0.0.1", () => resume(Effect.succeed(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)))
})

const signals = Effect.gen(function* () {
  const kubeconfig = yield* Config.string("BENCH_KUBECONFIG")
  const storage = yield* storageSink
  const audit = Audit.layer.pipe(
    Layer.provide(Storage.layer({ baseUrl: storage, token: Redacted.make("bench") })),
    Layer.provide(AuditConfig.layer("signals")),
    Layer.provide(Metrics.Default)
  )
  const context = yield* Layer.build(ServerLive.pipe(
    Layer.provideMerge(audit),
    Layer.provideMerge(K8sLive.layer({ namespace: "kubemend-system", apiGroup: "kubemend.io", kubeconfig, requestTimeout: "10 seconds" })),
    Layer.provideMerge(Layer.mergeAll(AuthConfig.layer(), SignalsConfig.layer(), ServerConfig.layer()))
  ))
  process.stdout.write(`port ${yield* Effect.provide(apiPort, context)}\n`)
  return yield* Effect.never
})

const program = Effect.flatMap(Config.string("BENCH_MODE"), (mode) => (mode === "baseline" ? baseline : signals))
NodeRuntime.runMain(Effect.scoped(program).pipe(Effect.provide(Logger.minimumLogLevel(LogLevel.Warning))))
