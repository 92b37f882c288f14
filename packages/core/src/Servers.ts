/**
 * The three listeners every service runs: its API (port per service, HTTPS when a certificate is configured),
 * health on 8081 (`/healthz`, `/readyz`) and metrics on 9090, plus the drain that closes them in order.
 */
import { HttpApp, HttpMiddleware, HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Clock, Context, Duration, Effect, Layer, Option, Ref, Schedule } from "effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Https from "node:https"
import { Drain } from "./Drain.ts"
import { Draining, HeadersTooLarge } from "./Errors.ts"
import { Metrics } from "./Metrics.ts"
import { ServerConfig, type ServerSettings } from "./ServerConfig.ts"
import { ProblemContentType } from "./Problem.ts"
import { problemBody, problemResponse, ProblemTypeBase } from "./Wire.ts"

// The settings live in their own module; services keep importing them from here, with the listeners.
export { ServerConfig, type ServerSettings }

/**
 * Named readiness checks; `/readyz` is 200 only when every one passes within 2 s and the service is not draining.
 * Details (`detail`) say how a ready service runs, e.g. degraded, without making it unready.
 */
export class Readiness extends Effect.Service<Readiness>()("@kubemend/core/Readiness", {
  effect: Effect.gen(function* () {
    const checks = yield* Ref.make(new Map<string, Effect.Effect<unknown, unknown>>())
    const details = yield* Ref.make(new Map<string, Effect.Effect<Option.Option<string>>>())
    const register = (name: string, check: Effect.Effect<unknown, unknown>) => Ref.update(checks, (m) => new Map(m).set(name, check))
    /** `/readyz` shows `detail.<name>` while `value` answers one. */
    const detail = (name: string, value: Effect.Effect<Option.Option<string>>) => Ref.update(details, (m) => new Map(m).set(name, value))
    const describe = Effect.flatMap(Ref.get(details), (m) =>
      Effect.map(
        Effect.forEach([...m.entries()], ([name, value]) => Effect.map(value, Option.map((v) => [name, v] as const))),
        (found) => Object.fromEntries(found.flatMap(Option.toArray))
      ))
    const evaluate = Effect.gen(function* () {
      const all = [...(yield* Ref.get(checks)).entries()]
      const results = yield* Effect.forEach(
        all,
        ([name, check]) =>
          check.pipe(
            Effect.timeoutFail({ duration: Duration.seconds(2), onTimeout: () => "timed out" }),
            Effect.as("ok"),
            Effect.catchAllCause(() => Effect.succeed("failing")),
            Effect.map((status) => [name, status] as const)
          ),
        { concurrency: "unbounded" }
      )
      return Object.fromEntries(results)
    })
    return { register, detail, evaluate, describe } as const
  })
}) {}

/** Header bytes a request may carry (RELIABILITY.md case 8); more is answered 431 with a problem body. */
const maxHeaderSize = 16 * 1024

/**
 * Node answers a request it cannot parse itself, with no body. Header overflow gets the platform's 431 problem
 * instead; anything else keeps Node's answer (408 for a request timeout, else 400) and the connection is closed.
 */
const answerClientErrors = (server: Http.Server, base: string) =>
  server.on("clientError", (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || error.code === "ECONNRESET") return void socket.destroy()
    const raw = (status: number, reason: string, headers: string, body: string) =>
      socket.end(`HTTP/1.1 ${status} ${reason}\r\n${headers}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
    if (error.code === "HPE_HEADER_OVERFLOW") {
      const problem = problemBody(new HeadersTooLarge({ detail: `request headers exceed ${maxHeaderSize} bytes` }), base)
      return void raw(431, "Request Header Fields Too Large", `Content-Type: ${ProblemContentType}\r\n`, JSON.stringify(problem))
    }
    if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") return void raw(408, "Request Timeout", "", "")
    raw(400, "Bad Request", "", "")
  })

const nodeServerFor = (settings: ServerSettings, secure: boolean, base: string): Http.Server => {
  const headersTimeout = Duration.toMillis(settings.headersTimeout)
  const options = {
    headersTimeout,
    requestTimeout: Duration.toMillis(settings.requestTimeout),
    // Node checks those two timeouts only this often (default 30 s), so a slow client would outlive them; with
    // short timeouts (tests) check at least twice per headers timeout.
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeout / 2))),
    maxHeaderSize
  }
  if (secure && Option.isSome(settings.tls)) {
    return answerClientErrors(
      Https.createServer({
        ...options,
        cert: Fs.readFileSync(settings.tls.value.certFile),
        key: Fs.readFileSync(settings.tls.value.keyFile)
      }),
      base
    )
  }
  return answerClientErrors(Http.createServer(options), base)
}

/**
 * Certificates are rotated in place (a mounted Secret's files change; cert-manager, OpenShift's service CA and the
 * operator's own CA all renew before expiry), so the listener re-reads them every minute and serves the new pair to
 * new connections, without a restart.
 */
const reloadCertificates = (node: Http.Server, files: { readonly certFile: string; readonly keyFile: string }) =>
  Effect.gen(function* () {
    const read = Effect.try(() => ({ cert: Fs.readFileSync(files.certFile, "utf8"), key: Fs.readFileSync(files.keyFile, "utf8") }))
    let served = Option.match(Option.getRight(yield* Effect.either(read)), { onNone: () => "", onSome: (p) => p.cert + p.key })
    yield* read.pipe(
      Effect.flatMap((pair) =>
        pair.cert + pair.key === served
          ? Effect.void
          : Effect.sync(() => {
            ;(node as Https.Server).setSecureContext(pair)
            served = pair.cert + pair.key
          }).pipe(Effect.zipRight(Effect.logInfo("serving certificate reloaded")))
      ),
      Effect.catchAll((e) => Effect.logWarning("cannot re-read the serving certificate; serving the current one", e)),
      Effect.repeat(Schedule.spaced(Duration.minutes(1))),
      Effect.forkScoped
    )
  })

const listen = (server: Http.Server, host: string, port: number) => NodeHttpServer.make(() => server, { host, port })

/** Health listener: `/healthz` answers `ok` while the process is alive; `/readyz` runs the readiness checks. */
const healthApp = Effect.gen(function* () {
  const drain = yield* Drain
  const readiness = yield* Readiness
  return HttpRouter.empty.pipe(
    HttpRouter.get("/healthz", HttpServerResponse.text("ok")),
    HttpRouter.get(
      "/readyz",
      Effect.gen(function* () {
        if (yield* drain.isDraining) return yield* HttpServerResponse.json({ status: "draining" }, { status: 503 })
        const checks = yield* readiness.evaluate
        const detail = yield* readiness.describe
        const ready = Object.values(checks).every((s) => s === "ok")
        return yield* HttpServerResponse.json(
          { status: ready ? "ok" : "not ready", checks, ...(Object.keys(detail).length === 0 ? {} : { detail }) },
          { status: ready ? 200 : 503 }
        )
      })
    )
  )
})

const metricsApp = Effect.gen(function* () {
  const metrics = yield* Metrics
  return HttpRouter.empty.pipe(
    HttpRouter.get(
      "/metrics",
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const { body, contentType } = yield* metrics.render(request.headers["accept"])
        return HttpServerResponse.text(body, { contentType })
      })
    )
  )
})

/** Addresses the listeners actually bound (ports may be 0 in config). */
export class BoundPorts extends Context.Tag("@kubemend/core/BoundPorts")<
  BoundPorts,
  { readonly health: number; readonly metrics: number }
>() {}

const portOf = (server: HttpServer.HttpServer) => (server.address._tag === "TcpAddress" ? server.address.port : 0)

/** Health (8081) and metrics (9090) listeners, scoped to the layer. */
export const OpsServersLive = Layer.scoped(
  BoundPorts,
  Effect.gen(function* () {
    const settings = yield* ServerConfig
    const base = yield* ProblemTypeBase
    const health = yield* listen(nodeServerFor(settings, false, base), settings.host, settings.healthPort)
    yield* health.serve(yield* healthApp).pipe(
      Effect.provide(HttpServer.layerContext)
    )
    const metricsServer = yield* listen(nodeServerFor(settings, false, base), settings.host, settings.metricsPort)
    yield* metricsServer.serve(yield* metricsApp).pipe(Effect.provide(HttpServer.layerContext))
    return { health: portOf(health), metrics: portOf(metricsServer) }
  })
)

/** Tells the client not to reuse the connection: the listener is about to close. */
const closeConnection = HttpServerResponse.setHeader("connection", "close")

/**
 * New requests get 503 while draining; others count as in flight. Applied to every API app (HttpApi or raw).
 * Answers given while draining carry `Connection: close`, so clients do not send more on a closing connection.
 */
export const drainGuard = HttpMiddleware.make((app) =>
  Effect.gen(function* () {
    const drain = yield* Drain
    if (yield* drain.isDraining) {
      return closeConnection(yield* problemResponse(new Draining({ detail: "the service is shutting down" })))
    }
    // The platform writes the response inside `app`, so the header goes in through its pre-response hook.
    yield* HttpApp.appendPreResponseHandler((_, response) => Effect.map(drain.isDraining, (draining) => (draining ? closeConnection(response) : response)))
    return yield* drain.track(app)
  })
)

/** The node server behind the API listener, kept so the drain can cut connections that outlive it. */
class ApiNodeServer extends Context.Tag("@kubemend/core/ApiNodeServer")<ApiNodeServer, Http.Server>() {}

/**
 * The API listener as an `HttpServer` (for `HttpApiBuilder.serve` or `HttpServer.serve`), plus the drain finalizer.
 * Build the service's serve layer on top of this: the drain's finalizer then runs before the listener closes.
 */
export const ApiServerLive = Layer.scopedContext(
  Effect.gen(function* () {
    const settings = yield* ServerConfig
    const node = nodeServerFor(settings, true, yield* ProblemTypeBase)
    const server = yield* listen(node, settings.host, settings.port)
    if (Option.isSome(settings.tls)) yield* reloadCertificates(node, settings.tls.value)
    return Context.make(HttpServer.HttpServer, server).pipe(Context.add(ApiNodeServer, node))
  })
).pipe(Layer.provideMerge(HttpServer.layerContext))

/**
 * Once draining, a keep-alive connection is closed as soon as its response ends. Left idle it would hold
 * `server.close()` open until Node's keep-alive timeout (5 s); Node closes idle connections only when asked.
 */
const closeWhenResponsesEnd = (node: Http.Server, draining: () => boolean) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const onFinish = () => {
        if (draining()) node.closeIdleConnections()
      }
      // Node frees the connection in its own `finish` listener, added before `request` is emitted, so it is idle here.
      const onRequest = (_: Http.IncomingMessage, res: Http.ServerResponse) => void res.once("finish", onFinish)
      node.prependListener("request", onRequest)
      return onRequest
    }),
    (onRequest) => Effect.sync(() => void node.off("request", onRequest))
  )

/** Stops accepting and waits until every connection is closed; the close callback comes after the last one. */
const closeListener = (node: Http.Server) =>
  Effect.async<void>((resume) => {
    if (!node.listening) return resume(Effect.void)
    node.close(() => resume(Effect.void))
  })

/**
 * Sits on top of the served app: on shutdown flips readiness and new requests to 503, waits for in-flight work up
 * to the drain timeout, then stops accepting and waits, within the same time, for the last responses to be
 * written (keep-alive connections close as theirs end). Whatever is left when the drain time is up is cut, so the
 * listener is closed within the drain time.
 */
export const DrainOnShutdown = Layer.scopedDiscard(
  Effect.gen(function* () {
    const drain = yield* Drain
    const settings = yield* ServerConfig
    const node = yield* ApiNodeServer
    let draining = false
    yield* closeWhenResponsesEnd(node, () => draining)
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        yield* Effect.logInfo("draining").pipe(Effect.annotateLogs("timeoutSeconds", Duration.toSeconds(settings.drainTimeout)))
        const start = yield* Clock.currentTimeMillis
        draining = true
        node.closeIdleConnections()
        const finished = yield* drain.drain(settings.drainTimeout)
        const left = Duration.toMillis(settings.drainTimeout) - ((yield* Clock.currentTimeMillis) - start)
        // Finalizers are uninterruptible: the wait opts back in so the timeout can end it.
        const closed = finished && left > 0 &&
          Option.isSome(yield* Effect.timeoutOption(Effect.interruptible(closeListener(node)), Duration.millis(left)))
        if (!closed) {
          yield* Effect.logWarning("drain timeout reached; closing remaining connections")
          if (node.listening) node.close()
          node.closeAllConnections()
        }
      })
    )
  })
)

/** The bound API port. */
export const apiPort = Effect.map(HttpServer.HttpServer, portOf)

/**
 * A service's API: the served layer (`HttpApiBuilder.serve(drainGuard)` or `HttpServer.serve(app, drainGuard)`) on
 * the API listener, with the drain on top so it finalizes first.
 */
export const serveWithDrain = <E, R>(serve: Layer.Layer<never, E, R>) => DrainOnShutdown.pipe(Layer.provideMerge(serve), Layer.provideMerge(ApiServerLive))
