/**
 * The drain's connection handling over real HTTP with keep-alive clients: a response that ends during the drain
 * closes its connection at once (Node would keep it idle for its 5 s keep-alive timeout and hold `server.close()`
 * open), a response still being written when the drain time is up is cut; and the grace in-flight work gets.
 */
import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Layer, Scope, TestClock } from "effect"
import * as Http from "node:http"
import { bounded, Drain, graceOf, graceOver } from "../src/Drain.ts"
import { Metrics } from "../src/Metrics.ts"
import { apiPort, drainGuard, OpsServersLive, Readiness, ServerConfig, serveWithDrain } from "../src/Servers.ts"

/** Far above what any of these shutdowns may take, so only the connection handling can make them quick. */
const longDrain = Duration.seconds(20)
/** Node's keep-alive timeout is 5 s (plus 1 s of slack): a lingering connection shows as a shutdown that long. */
const prompt = 2500

const stack = (release: Deferred.Deferred<void>, drainTimeout: Duration.Duration) => {
  const app = HttpRouter.empty.pipe(
    HttpRouter.get("/slow", Effect.as(Deferred.await(release), HttpServerResponse.text("slow done"))),
    // As the long-lived streams do: headers and a first chunk go out, then the response is handed to a writer of
    // its own and the request is done (no longer in flight). The rest is written once released.
    HttpRouter.get(
      "/detached",
      Effect.gen(function* () {
        const res = NodeHttpServerRequest.toServerResponse(yield* HttpServerRequest.HttpServerRequest)
        res.writeHead(200, { "content-type": "text/plain" })
        res.write("first;")
        yield* Effect.forkDaemon(Effect.andThen(Deferred.await(release), Effect.sync(() => res.end("last"))))
        // The platform writes nothing to a response it sees as ended.
        Object.defineProperty(res, "writableEnded", { get: () => true, configurable: true })
        return HttpServerResponse.empty()
      })
    )
  )
  return serveWithDrain(HttpServer.serve(app, drainGuard)).pipe(
    Layer.provideMerge(OpsServersLive),
    Layer.provideMerge(Layer.mergeAll(Drain.Default, Readiness.Default, Metrics.Default)),
    Layer.provideMerge(ServerConfig.layer({ drainTimeout }))
  )
}

interface Reply {
  readonly connection: string | undefined
  /** The whole body, or `cut` when the connection ends before it. */
  readonly body: Promise<string>
  readonly firstChunk: Promise<void>
}

/** A GET through `agent`; resolves once the response headers are in. */
const get = (agent: Http.Agent, port: number, path: string) =>
  Effect.promise(() =>
    new Promise<Reply>((resolve, reject) => {
      Http.get({ host: "127.0.0.1", port, path, agent }, (res) => {
        let text = ""
        let first = () => {}
        const firstChunk = new Promise<void>((r) => (first = r))
        const body = new Promise<string>((done) => {
          res.on("data", (d: Buffer) => {
            text += d.toString()
            first()
          })
          res.on("end", () => done(res.complete ? text : "cut"))
          res.on("error", () => done("cut"))
        })
        resolve({ connection: res.headers.connection, body, firstChunk })
      }).on("error", reject)
    })
  )

const keepAliveAgent = Effect.acquireRelease(
  Effect.sync(() => new Http.Agent({ keepAlive: true })),
  (agent) => Effect.sync(() => agent.destroy())
)

const running = (drainTimeout: Duration.Duration) =>
  Effect.gen(function* () {
    const release = yield* Deferred.make<void>()
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(stack(release, drainTimeout), scope)
    const port = yield* Effect.provide(apiPort, context)
    const drain = yield* Effect.provide(Drain, context)
    /** Starts the shutdown in the background and returns once draining has begun. */
    const shutdown = Effect.gen(function* () {
      const fiber = yield* Effect.fork(Scope.close(scope, Exit.void))
      while (!(yield* drain.isDraining)) yield* Effect.sleep("5 millis")
      return fiber
    })
    const inflight = Effect.gen(function* () {
      while ((yield* drain.inflight) === 0) yield* Effect.sleep("5 millis")
    })
    return { release: Deferred.succeed(release, undefined), port, shutdown, inflight }
  })

/** Wall time of `effect` in milliseconds. */
const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const start = Date.now()
    return Effect.map(effect, (a) => [a, Date.now() - start] as const)
  })

describe("drain and keep-alive connections", () => {
  it.live("a request answered during the drain says Connection: close, and the listener closes right after", () =>
    Effect.scoped(Effect.gen(function* () {
      const agent = yield* keepAliveAgent
      const s = yield* running(longDrain)
      const slow = yield* Effect.fork(get(agent, s.port, "/slow"))
      yield* s.inflight
      const shutdown = yield* s.shutdown
      yield* s.release
      const reply = yield* Fiber.join(slow)
      expect(reply.connection).toBe("close")
      expect(yield* Effect.promise(() => reply.body)).toBe("slow done")
      const [, elapsed] = yield* timed(Fiber.join(shutdown))
      expect(elapsed).toBeLessThan(prompt)
    })), { timeout: 30_000 })

  it.live(
    "a keep-alive response whose headers went out before the drain closes its connection as soon as it ends",
    () =>
      Effect.scoped(Effect.gen(function* () {
        const agent = yield* keepAliveAgent
        const s = yield* running(longDrain)
        const reply = yield* get(agent, s.port, "/detached")
        expect(reply.connection).toBe("keep-alive")
        yield* Effect.promise(() => reply.firstChunk)
        // Nothing is in flight, but a response is still being written: the listener waits for it (a cut would
        // show in the body), then must not keep its keep-alive connection open.
        const shutdown = yield* s.shutdown
        yield* s.release
        expect(yield* Effect.promise(() => reply.body)).toBe("first;last")
        const [, elapsed] = yield* timed(Fiber.join(shutdown))
        expect(elapsed).toBeLessThan(prompt)
      })),
    { timeout: 30_000 }
  )

  it.live("a response still being written when the drain time is up is cut, and the listener closes", () =>
    Effect.scoped(Effect.gen(function* () {
      const agent = yield* keepAliveAgent
      const s = yield* running(Duration.millis(300))
      const reply = yield* get(agent, s.port, "/detached")
      yield* Effect.promise(() => reply.firstChunk)
      const [, elapsed] = yield* timed(Effect.flatMap(s.shutdown, Fiber.join))
      expect(elapsed).toBeLessThan(prompt)
      expect(yield* Effect.promise(() => reply.body)).toBe("cut")
    })), { timeout: 30_000 })
})

describe("grace of in-flight work", () => {
  it("is the drain time less a fifth of it, at most 1 s", () => {
    expect(Duration.toMillis(graceOf(Duration.seconds(15)))).toBe(14_000)
    expect(Duration.toMillis(graceOf(Duration.seconds(2)))).toBe(1600)
    expect(Duration.toMillis(graceOf(Duration.zero))).toBe(0)
  })

  it.effect("is over `grace` after draining starts, not before", () =>
    Effect.gen(function* () {
      const drain = yield* Drain
      const shutdown = drain.shutdown(Duration.seconds(2))
      const over = yield* Effect.fork(graceOver(shutdown))
      yield* TestClock.adjust("10 seconds")
      expect(over.unsafePoll()).toBeNull()
      yield* Effect.fork(drain.drain(Duration.seconds(2)))
      yield* TestClock.adjust("1599 millis")
      expect(over.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(over)
    }).pipe(Effect.provide(Drain.Default)))

  it.effect("stops stoppable work when the grace is over, and refuses such work after that", () =>
    Effect.gen(function* () {
      const drain = yield* Drain
      const shutdown = drain.shutdown(Duration.seconds(2))
      // Tracked, as the gateway's calls are: the drain waits for it, and its watcher stops it when the grace is over.
      const work = yield* Effect.fork(shutdown.track(Effect.exit(Effect.fork(shutdown.stopAtGraceOver(Effect.never)).pipe(Effect.flatMap(Fiber.join)))))
      const quick = yield* shutdown.stopAtGraceOver(Effect.succeed("done"))
      expect(quick).toBe("done")
      yield* TestClock.adjust("1 minute")
      expect(work.unsafePoll()).toBeNull()
      yield* Effect.yieldNow()
      const drained = yield* Effect.fork(drain.drain(Duration.seconds(2)))
      yield* TestClock.adjust("1599 millis")
      expect(work.unsafePoll()).toBeNull()
      expect(yield* shutdown.graceIsOver).toBe(false)
      yield* TestClock.adjust("1 millis")
      const exit = yield* Fiber.join(work)
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect(yield* shutdown.graceIsOver).toBe(true)
      // Stopped work is done: the drain finishes before its timeout.
      expect(yield* Fiber.join(drained)).toBe(true)
      const late = yield* Effect.exit(Effect.fork(shutdown.stopAtGraceOver(Effect.succeed("late"))).pipe(Effect.flatMap(Fiber.join)))
      expect(Exit.isInterrupted(late)).toBe(true)
    }).pipe(Effect.provide(Drain.Default)))

  it.effect("counts tracked work and waits for it, also when it is interrupted", () =>
    Effect.gen(function* () {
      const drain = yield* Drain
      const release = yield* Deferred.make<void>()
      const a = yield* Effect.fork(drain.track(Deferred.await(release)))
      const b = yield* Effect.fork(drain.track(Effect.never))
      yield* Effect.yieldNow()
      expect(yield* drain.inflight).toBe(2)
      const drained = yield* Effect.fork(drain.drain(Duration.seconds(5)))
      yield* Fiber.interrupt(b)
      expect(yield* drain.inflight).toBe(1)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(a)
      expect(yield* Fiber.join(drained)).toBe(true)
      expect(yield* drain.inflight).toBe(0)
    }).pipe(Effect.provide(Drain.Default)))

  it.effect("the grace watcher ends with the drain, so no timer of it outlives a shutdown", () =>
    Effect.gen(function* () {
      const drain = yield* Drain
      const shutdown = drain.shutdown(Duration.seconds(2))
      expect(yield* shutdown.stopAtGraceOver(Effect.succeed(1))).toBe(1)
      // Nothing in flight: the drain is done at once and takes the watcher with it.
      expect(yield* drain.drain(Duration.seconds(2))).toBe(true)
      yield* TestClock.adjust("1 minute")
      expect(yield* shutdown.graceIsOver).toBe(false)
    }).pipe(Effect.provide(Drain.Default)))

  it.effect("hands out one Shutdown per grace, so asking on every request starts no more watchers", () =>
    Effect.gen(function* () {
      const drain = yield* Drain
      const first = drain.shutdown(Duration.seconds(2))
      expect(drain.shutdown(Duration.seconds(2))).toBe(first)
      expect(drain.shutdown(Duration.seconds(5))).not.toBe(first)
    }).pipe(Effect.provide(Drain.Default)))

  it.effect("bounded work fails with its timeout, or with its shutdown answer once the grace is over", () =>
    Effect.gen(function* () {
      const drain = yield* Drain
      const shutdown = drain.shutdown(Duration.seconds(2))
      const limit = bounded({ shutdown, duration: "10 seconds", onTimeout: () => "timeout" as const, onShutdown: () => "shutdown" as const })
      const timedOut = yield* Effect.fork(Effect.flip(limit(Effect.never)))
      yield* TestClock.adjust("10 seconds")
      expect(yield* Fiber.join(timedOut)).toBe("timeout")

      const stopped = yield* Effect.fork(drain.track(Effect.flip(limit(Effect.never))))
      yield* Effect.yieldNow()
      yield* Effect.fork(drain.drain(Duration.seconds(2)))
      yield* TestClock.adjust("1600 millis")
      expect(yield* Fiber.join(stopped)).toBe("shutdown")
    }).pipe(Effect.provide(Drain.Default)))
})
