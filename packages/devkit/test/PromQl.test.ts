/** The dev metrics backend's PromQL endpoints over HTTP: selectors, functions, aggregation, vector arithmetic, errors. */
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { make } from "../src/Alerts.ts"
import type { DevSeries } from "../src/PromQl.ts"

const series: ReadonlyArray<DevSeries> = [
  { labels: { __name__: "container_memory_working_set_bytes", namespace: "shop", pod: "checkout-1", container: "app" }, values: [100, 200, 480] },
  { labels: { __name__: "container_memory_working_set_bytes", namespace: "shop", pod: "checkout-2", container: "app" }, value: 120 },
  { labels: { __name__: "container_memory_working_set_bytes", namespace: "other", pod: "x", container: "app" }, value: 1 },
  { labels: { __name__: "kube_pod_container_resource_limits", namespace: "shop", pod: "checkout-1", container: "app", resource: "memory" }, value: 500 },
  { labels: { __name__: "http_requests_total", namespace: "shop", pod: "checkout-1" }, values: [0, 60, 120, 180], stepSeconds: 60 }
]

const get = (url: string, path: string) => Effect.promise(() => fetch(`${url}${path}`).then(async (r) => ({ status: r.status, body: await r.json() as any })))
const q = (query: string) => `/api/v1/query?${new URLSearchParams({ query })}`

it.scoped("answers instant and range PromQL from seeded series, and bad_data for what it cannot parse", () =>
  Effect.gen(function* () {
    const backend = yield* make({ alerts: [], series })
    const values = (body: any) => body.data.result.map((r: any) => [r.metric.pod, Number(r.value[1])]).sort()
    expect(values((yield* get(backend.url, q("container_memory_working_set_bytes{namespace=\"shop\"}"))).body))
      .toEqual([["checkout-1", 480], ["checkout-2", 120]])
    expect(values((yield* get(backend.url, q("container_memory_working_set_bytes{pod=~\"checkout-.*\"} > 200"))).body))
      .toEqual([["checkout-1", 480]])
    const ratio =
      (yield* get(backend.url, q("container_memory_working_set_bytes{namespace=\"shop\",container=\"app\"} / on kube_pod_container_resource_limits"))).status
    expect(ratio).toBe(400)
    const sum = (yield* get(backend.url, q("sum by (namespace) (container_memory_working_set_bytes)"))).body.data.result
    expect(sum.map((r: any) => [r.metric.namespace, Number(r.value[1])]).sort()).toEqual([["other", 1], ["shop", 600]])
    const rate = (yield* get(backend.url, q("rate(http_requests_total[5m])"))).body.data.result
    expect(Number(rate[0].value[1])).toBeCloseTo(1)
    // `offset` moves the window back: two minutes ago the counter stood at 60.
    const earlier = (yield* get(backend.url, q("last_over_time(http_requests_total[1m] offset 2m)"))).body.data.result
    expect(Number(earlier[0].value[1])).toBe(60)
    const now = Math.floor(Date.now() / 1000)
    const range = yield* get(
      backend.url,
      `/api/v1/query_range?${new URLSearchParams({
        query: "max(container_memory_working_set_bytes{namespace=\"shop\"})",
        start: String(now - 119),
        end: String(now + 1),
        step: "60"
      })}`
    )
    expect(range.body.data.resultType).toBe("matrix")
    expect(range.body.data.result[0].values.map((v: any) => Number(v[1]))).toEqual([120, 200, 480])
    const bad = yield* get(backend.url, q("sum(("))
    expect(bad).toMatchObject({ status: 400, body: { status: "error", errorType: "bad_data" } })
  }))
