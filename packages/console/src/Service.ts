/**
 * How the console's pieces fit: its routes on the API listener (port 4180) with the drain on top, the health and
 * metrics listeners every service has, and readiness once the identity provider's discovery answered.
 */
import { HttpServer } from "@effect/platform"
import { apiHeaders } from "@kubemend/core/ApiHeaders"
import { Drain } from "@kubemend/core/Drain"
import { lastAnswers } from "@kubemend/core/HttpProblems"
import { Metrics } from "@kubemend/core/Metrics"
import { drainGuard, OpsServersLive, Readiness, ServerConfig, serveWithDrain } from "@kubemend/core/Servers"
import { Effect, Layer } from "effect"
import { ConsoleConfig } from "./ConsoleConfig.ts"
import { ConsoleRoutes } from "./ConsoleRoutes.ts"
import { Sessions } from "./Sessions.ts"

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
