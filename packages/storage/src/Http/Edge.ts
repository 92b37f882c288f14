/**
 * Middleware around the whole API app: HTTP request metrics labelled by route template (the body limit is core's
 * `bodyLimit`).
 */
import { HttpApi, HttpMiddleware, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Metrics } from "@kubemend/core/Metrics"
import { StorageApi, StorageOpenApiPath } from "@kubemend/core/StorageApi"
import { Clock, Effect } from "effect"

/** `[method, template, matcher]` for every endpoint; templates without parameters are tried first. */
const routes = (() => {
  const all: Array<readonly [string, string, RegExp]> = [["GET", StorageOpenApiPath, new RegExp(`^${StorageOpenApiPath}$`)]]
  HttpApi.reflect(StorageApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const pattern = endpoint.path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z_]+/g, "[^/]+")
      all.push([endpoint.method, endpoint.path, new RegExp(`^${pattern}$`)])
    }
  })
  return all.sort((a, b) => (a[1].includes(":") ? 1 : 0) - (b[1].includes(":") ? 1 : 0))
})()

export const routeOf = (method: string, url: string): string => {
  const path = url.split("?")[0] ?? url
  return routes.find(([m, , re]) => m === method && re.test(path))?.[1] ?? "unmatched"
}

export const requestMetrics = HttpMiddleware.make((app) =>
  Effect.gen(function* () {
    const metrics = yield* Metrics
    const total = metrics.counter({
      name: "datastorage_http_requests_total",
      help: "HTTP requests by route and status",
      labelNames: ["method", "route", "status"]
    })
    const duration = metrics.histogram({
      name: "datastorage_http_request_duration_seconds",
      help: "HTTP request duration by route",
      labelNames: ["method", "route"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    })
    const request = yield* HttpServerRequest.HttpServerRequest
    const route = routeOf(request.method, request.url)
    const start = yield* Clock.currentTimeMillis
    const record = (status: number) =>
      Effect.map(Clock.currentTimeMillis, (end) => {
        total.inc({ method: request.method, route, status: String(status) })
        duration.observe({ method: request.method, route }, (end - start) / 1000)
      })
    return yield* app.pipe(
      Effect.tap((response: HttpServerResponse.HttpServerResponse) => record(response.status)),
      Effect.tapErrorCause(() => record(500))
    )
  })
)
