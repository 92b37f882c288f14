import { HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Layer, Option, Ref, Scope } from "effect"
import * as Net from "node:net"
import { Drain } from "../src/Drain.ts"
import { Metrics } from "../src/Metrics.ts"
import { apiPort, BoundPorts, drainGuard, OpsServersLive, Readiness, ServerConfig, serveWithDrain } from "../src/Servers.ts"

const get = (port: number, path: string, headers: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers })
    return { status: response.status, type: response.headers.get("content-type") ?? "", body: await response.text() }
  })

/** A service with one slow endpoint, so a request can be in flight while the process drains. */
const stack = (release: Deferred.Deferred<void>, drainTimeout = Duration.seconds(3)) => {
  const app = HttpRouter.empty.pipe(
    HttpRouter.get("/fast", HttpServerResponse.text("fast")),
    HttpRouter.get("/slow", Effect.as(Deferred.await(release), HttpServerResponse.text("slow done")))
  )
  return serveWithDrain(HttpServer.serve(app, drainGuard)).pipe(
    Layer.provideMerge(OpsServersLive),
    Layer.provideMerge(Layer.mergeAll(Drain.Default, Readiness.Default, Metrics.Default)),
    Layer.provideMerge(ServerConfig.layer({ drainTimeout }))
  )
}

describe("health, metrics and drain", () => {
  it.live("serves /healthz, /readyz from registered checks, and /metrics in both formats", () =>
    Effect.gen(function* () {
      const release = yield* Deferred.make<void>()
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(stack(release), scope)
      const { health, metrics } = yield* Effect.provide(BoundPorts, context)
      const readiness = yield* Effect.provide(Readiness, context)

      expect(yield* get(health, "/healthz")).toMatchObject({ status: 200, body: "ok" })
      expect((yield* get(health, "/readyz")).status).toBe(200)
      // A detail says how a ready service runs; it is shown only while it answers one, and never makes it unready.
      const degraded = yield* Ref.make(Option.some("degraded: cache unreachable"))
      yield* readiness.detail("cache", Ref.get(degraded))
      const detailed = yield* get(health, "/readyz")
      expect([detailed.status, JSON.parse(detailed.body).detail]).toEqual([200, { cache: "degraded: cache unreachable" }])
      yield* Ref.set(degraded, Option.none())
      expect(JSON.parse((yield* get(health, "/readyz")).body)).not.toHaveProperty("detail")
      yield* readiness.register("database", Effect.fail("down"))
      const notReady = yield* get(health, "/readyz")
      expect(notReady.status).toBe(503)
      expect(JSON.parse(notReady.body).checks.database).toBe("failing")

      const text = yield* get(metrics, "/metrics")
      expect(text.status).toBe(200)
      expect(text.type).toContain("text/plain")
      expect(text.body).toContain("process_cpu_user_seconds_total")
      const open = yield* get(metrics, "/metrics", { accept: "application/openmetrics-text; version=1.0.0" })
      expect(open.type).toContain("application/openmetrics-text")
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("answers headers over 16 KiB with a 431 problem, and a malformed request with Node's 400", () =>
    Effect.gen(function* () {
      const release = yield* Deferred.make<void>()
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(stack(release), scope)
      const port = yield* Effect.provide(apiPort, context)
      const big = yield* get(port, "/fast", { "x-padding": "a".repeat(20 * 1024) })
      expect(big.status).toBe(431)
      expect(big.type).toBe("application/problem+json")
      expect(JSON.parse(big.body)).toMatchObject({
        status: 431,
        title: "Request Header Fields Too Large",
        type: expect.stringMatching(/request-header-fields-too-large$/)
      })
      expect((yield* get(port, "/fast")).status).toBe(200)
      const malformed = yield* Effect.promise(() =>
        new Promise<string>((resolve) => {
          const socket = Net.connect(port, "127.0.0.1", () => socket.write("NOT HTTP\r\n\r\n"))
          let text = ""
          socket.on("data", (d) => (text += d))
          socket.on("close", () => resolve(text))
        })
      )
      expect(malformed).toMatch(/^HTTP\/1\.1 400 Bad Request/)
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("on shutdown: readiness 503 at once, new requests 503 problem, in-flight work finishes, exit within drain time", () =>
    Effect.gen(function* () {
      const release = yield* Deferred.make<void>()
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(stack(release), scope)
      const { health } = yield* Effect.provide(BoundPorts, context)
      const port = yield* Effect.provide(apiPort, context)

      const slow = yield* Effect.fork(get(port, "/slow"))
      // Wait until the slow request is counted in flight before shutting down.
      const drain = yield* Effect.provide(Drain, context)
      while ((yield* drain.inflight) === 0) yield* Effect.sleep("10 millis")

      const started = Date.now()
      const shutdown = yield* Effect.fork(Scope.close(scope, Exit.void))
      while (!(yield* drain.isDraining)) yield* Effect.sleep("5 millis")

      expect((yield* get(health, "/readyz")).status).toBe(503)
      const refused = yield* get(port, "/fast")
      expect(refused.status).toBe(503)
      expect(refused.type).toBe("application/problem+json")
      expect(JSON.parse(refused.body)).toMatchObject({ title: "Service Unavailable", status: 503 })

      yield* Deferred.succeed(release, undefined)
      expect(yield* Fiber.join(slow)).toMatchObject({ status: 200, body: "slow done" })
      yield* Fiber.join(shutdown)
      expect(Date.now() - started).toBeLessThan(3000)
    }))

  it.live("cuts connections still open when the drain time runs out", () =>
    Effect.gen(function* () {
      const release = yield* Deferred.make<void>()
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(
        stack(release, Duration.millis(200)),
        scope
      )
      const port = yield* Effect.provide(apiPort, context)
      const drain = yield* Effect.provide(Drain, context)
      const slow = yield* Effect.fork(Effect.either(Effect.tryPromise(() => fetch(`http://127.0.0.1:${port}/slow`))))
      while ((yield* drain.inflight) === 0) yield* Effect.sleep("10 millis")
      const started = Date.now()
      yield* Scope.close(scope, Exit.void)
      expect(Date.now() - started).toBeLessThan(2000)
      yield* Fiber.join(slow)
    }))
})
