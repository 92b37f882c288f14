/**
 * The gateway's API app: its routers (MCP here; A2A, status stream and agent card join through `routers`) behind
 * the middleware every request passes: request metrics, the drain guard (503 while shutting down),
 * `Impersonate-*` stripping and the answer to an unknown route or a defect (core's `lastAnswers`). Served on the API
 * listener (8443, HTTPS when configured).
 */
import { HttpMiddleware, HttpRouter, HttpServer, HttpServerRequest } from "@effect/platform"
import { Clock, Effect, Layer } from "effect"
import { lastAnswers } from "@kubemend/core/HttpProblems"
import { apiHeaders } from "@kubemend/core/ApiHeaders"
import { drainGuard } from "@kubemend/core/Servers"
import { stripImpersonation } from "./Edge/Headers.ts"
import { GatewayMetrics } from "./GatewayMetrics.ts"
import { McpRoutes } from "./McpRoutes.ts"

const knownEndpoints = new Set(["/mcp", "/a2a/invoke", "/", "/a2a/status", "/a2a/access", "/.well-known/agent-card.json"])

/** `af_http_requests_total` / `af_http_request_duration_seconds` by endpoint, method and status. */
export const requestMetrics = HttpMiddleware.make((app) =>
  Effect.gen(function* () {
    const metrics = yield* GatewayMetrics
    const request = yield* HttpServerRequest.HttpServerRequest
    const start = yield* Clock.currentTimeMillis
    const path = request.url.split("?")[0] ?? ""
    const endpoint = knownEndpoints.has(path) ? path : "other"
    return yield* app.pipe(
      Effect.tap((response) =>
        Effect.flatMap(Clock.currentTimeMillis, (end) => metrics.request(endpoint, request.method, response.status, (end - start) / 1000))
      )
    )
  })
)

const concatAll = <E1, R1, E2, R2>(
  first: HttpRouter.HttpRouter<E1, R1>,
  rest: ReadonlyArray<HttpRouter.HttpRouter<E2, R2>>
): HttpRouter.HttpRouter<E1 | E2, R1 | R2> => rest.reduce<HttpRouter.HttpRouter<E1 | E2, R1 | R2>>((acc, r) => HttpRouter.concat(acc, r), first)

/** Serves `routers` (plus MCP) with the gateway middleware on the API HttpServer. */
export const serveGateway = <E = never, R = never, RR = never>(
  routers: ReadonlyArray<Effect.Effect<HttpRouter.HttpRouter<E, R>, never, RR>> = []
) =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const mcp = yield* McpRoutes
      const extra = yield* Effect.all(routers)
      return HttpServer.serve(concatAll(mcp, extra).pipe(lastAnswers, stripImpersonation, drainGuard, requestMetrics, apiHeaders))
    })
  )
