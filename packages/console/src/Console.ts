/**
 * How the console's pieces fit: its routes on the API listener (port 4180) with the drain on top, the health and
 * metrics listeners every service has, and readiness once the identity provider's discovery answered.
 */
import { HttpMiddleware, HttpServer, HttpServerError, HttpServerRequest } from "@effect/platform"
import { apiHeaders } from "@kubemend/core/ApiHeaders"
import { Drain } from "@kubemend/core/Drain"
import { InternalError } from "@kubemend/core/Errors"
import { noRoute } from "@kubemend/core/HttpProblems"
import { Metrics } from "@kubemend/core/Metrics"
import { drainGuard, OpsServersLive, Readiness, ServerConfig, serveWithDrain } from "@kubemend/core/Servers"
import { problemResponse } from "@kubemend/core/Wire"
import { Cause, Effect, Layer } from "effect"
import { ConsoleConfig } from "./ConsoleConfig.ts"
import { ConsoleRoutes } from "./Http.ts"
import { Sessions } from "./Sessions.ts"

/** An unknown route a 404 problem, a defect (our bug) a logged 500 without internals. */
const lastAnswers = HttpMiddleware.make((app) =>
  app.pipe(
    Effect.catchAll((e) =>
      HttpServerError.isServerError(e) && e._tag === "RouteNotFound" ? problemResponse(noRoute(e.request), e.request.url) : Effect.fail(e)
    ),
    Effect.catchAllDefect((defect) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        yield* Effect.logError("request failed", Cause.die(defect))
        return yield* problemResponse(new InternalError({}), request.url)
      })
    )
  )
)

const ApiLive = Layer.unwrapEffect(Effect.map(ConsoleRoutes, (router) => HttpServer.serve(router.pipe(lastAnswers, drainGuard, apiHeaders))))

const ReadinessLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const readiness = yield* Readiness
    const sessions = yield* Sessions
    yield* readiness.register("issuer", sessions.discover)
  })
)

/** The whole service; needs ConsoleConfig and ServerConfig. */
export const ConsoleLive = serveWithDrain(ApiLive).pipe(
  Layer.provideMerge(OpsServersLive),
  Layer.provideMerge(ReadinessLive),
  Layer.provideMerge(Sessions.Default),
  Layer.provideMerge(Layer.mergeAll(Drain.Default, Readiness.Default, Metrics.Default))
)

/** What `main.ts` runs: the settings from the `console` config provider, API on 4180. */
export const consoleLive = ConsoleLive.pipe(
  Layer.provide(Layer.mergeAll(ConsoleConfig.layerConfig, ServerConfig.layerConfig(4180)))
)
