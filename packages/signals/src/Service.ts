/**
 * How the service's pieces fit: the signal routes on the API listener with the drain on top, health and metrics
 * listeners, readiness (the cluster API answers), the Warning-event watch. `main.ts` adds the live dependencies
 * (cluster, storage for audit, config); tests add the dev API server and a recording audit.
 */
import { HttpServer } from "@effect/platform"
import { Auth } from "@kubemend/core/Auth"
import { Drain } from "@kubemend/core/Drain"
import { lastAnswers } from "@kubemend/core/HttpProblems"
import { K8s } from "@kubemend/core/K8s"
import { Metrics } from "@kubemend/core/Metrics"
import { apiHeaders } from "@kubemend/core/ApiHeaders"
import { drainGuard, OpsServersLive, Readiness, serveWithDrain } from "@kubemend/core/Servers"
import { Effect, Layer } from "effect"
import { Access } from "./Access.ts"
import { Breaker } from "./Breaker.ts"
import { EventWatchLive } from "./EventWatch.ts"
import { SignalRoutes } from "./SignalRoutes.ts"
import { Intake } from "./Intake.ts"
import { SignalsMetrics } from "./SignalsMetrics.ts"

const ApiLive = Layer.unwrapEffect(Effect.map(SignalRoutes, (router) => HttpServer.serve(router.pipe(lastAnswers, drainGuard, apiHeaders))))

const ReadinessLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const readiness = yield* Readiness
    const k8s = yield* K8s
    const breaker = yield* Breaker
    yield* readiness.register(
      "kubernetes",
      Effect.gen(function* () {
        if ((yield* breaker.state) === "open") return yield* Effect.fail("kubernetes circuit breaker open")
        yield* k8s.listCr("remediationrequests", { labelSelector: "kubemend.io/none=none" })
      })
    )
  })
)

/** Intake, access and metrics; needs K8s, Audit, AuthConfig, SignalsConfig, Metrics. */
export const SignalsLive = Layer.mergeAll(Intake.Default, Access.Default).pipe(
  Layer.provideMerge(Auth.Default),
  Layer.provideMerge(Breaker.Default),
  Layer.provideMerge(SignalsMetrics.Default)
)

/** The whole service; needs K8s, Audit, AuthConfig, SignalsConfig, ServerConfig. */
export const ServerLive = serveWithDrain(ApiLive).pipe(
  Layer.provideMerge(OpsServersLive),
  Layer.provideMerge(Layer.mergeAll(ReadinessLive, EventWatchLive)),
  Layer.provideMerge(SignalsLive),
  Layer.provideMerge(Layer.mergeAll(Drain.Default, Readiness.Default, Metrics.Default))
)
