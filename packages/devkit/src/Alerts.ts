/**
 * Fake metrics backend on loopback: Prometheus' `GET /api/v1/alerts` answered from seeded alerts, so the local
 * platform registers `svc_list_alerts` and tests see the real wire format. `setFault` makes it fail (503) or
 * never answer.
 */
import { Context, Effect, Layer } from "effect"
import { listenScoped } from "./Listen.ts"
import type { DevSeries } from "./PromQl.ts"
import { handleQuery } from "./PromQlHttp.ts"

/** One alert as Prometheus reports it. */
export interface DevAlert {
  readonly labels: Readonly<Record<string, string>>
  readonly annotations?: Readonly<Record<string, string>>
  readonly state: "firing" | "pending" | "inactive"
  /** RFC 3339. */
  readonly activeAt: string
  readonly value?: string
}

export type AlertsFault = "none" | "unavailable" | "hang"

export interface DevAlertsOptions {
  readonly host?: string
  readonly port?: number
  /** Initial alerts; default `demoAlerts()`. */
  readonly alerts?: ReadonlyArray<DevAlert>
  /** Series the PromQL endpoints (`/api/v1/query`, `/api/v1/query_range`) answer from. */
  readonly series?: ReadonlyArray<DevSeries>
}

export interface DevAlertsService {
  /** Base URL, e.g. `http://127.0.0.1:41234` (what the gateway's `metricsBackend.url` takes). */
  readonly url: string
  readonly set: (alerts: ReadonlyArray<DevAlert>) => Effect.Effect<void>
  readonly setFault: (fault: AlertsFault) => Effect.Effect<void>
  readonly requests: Effect.Effect<number>
  readonly setSeries: (series: ReadonlyArray<DevSeries>) => Effect.Effect<void>
}

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString()

/** A small realistic set: a critical crash loop, warnings, a pending info alert, one in another namespace. */
export const demoAlerts = (): ReadonlyArray<DevAlert> => [
  {
    labels: { alertname: "KubePodCrashLooping", severity: "critical", namespace: "demo", pod: "checkout-7d9f" },
    annotations: { summary: "Pod demo/checkout-7d9f is crash looping", runbook_url: "https://runbooks.example.com/crashloop" },
    state: "firing",
    activeAt: minutesAgo(42),
    value: "5"
  },
  {
    labels: { alertname: "KubeDeploymentReplicasMismatch", severity: "warning", namespace: "demo", deployment: "checkout" },
    annotations: { summary: "Deployment demo/checkout has 1 of 3 replicas available" },
    state: "firing",
    activeAt: minutesAgo(30),
    value: "1"
  },
  {
    labels: { alertname: "HighMemoryUsage", severity: "warning", namespace: "demo", pod: "cart-5c8b", instance: "10.0.3.17:9100" },
    annotations: { summary: "Pod demo/cart-5c8b uses 93% of its memory limit" },
    state: "firing",
    activeAt: minutesAgo(12),
    value: "0.93"
  },
  {
    labels: { alertname: "CertificateExpiringSoon", severity: "info", namespace: "ingress" },
    annotations: { summary: "Certificate for shop.example.com expires in 14 days" },
    state: "pending",
    activeAt: minutesAgo(3),
    value: "14"
  }
]

export const make = (options: DevAlertsOptions = {}) =>
  Effect.gen(function* () {
    let alerts = options.alerts ?? demoAlerts()
    let fault: AlertsFault = "none"
    let count = 0
    let series = options.series ?? []
    const listening = yield* listenScoped((req, res) => {
      const path = (req.url ?? "").split("?")[0]
      if (req.method === "GET" && path === "/api/v1/alerts") count++
      // A fault takes the whole backend down: the alerts API and the query endpoints alike.
      if (fault === "hang") return
      if (fault === "unavailable") {
        res.writeHead(503, { "content-type": "application/json" })
        res.end(JSON.stringify({ status: "error", errorType: "unavailable", error: "backend unavailable" }))
        return
      }
      if (handleQuery(req, res, series)) return
      if (req.method !== "GET" || path !== "/api/v1/alerts") {
        res.writeHead(404, { "content-type": "application/json" })
        res.end(JSON.stringify({ status: "error", errorType: "not_found", error: "not found" }))
        return
      }
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ status: "success", data: { alerts } }))
    }, options)
    const service: DevAlertsService = {
      url: listening.url,
      set: (next) =>
        Effect.sync(() => {
          alerts = next
        }),
      setFault: (f) =>
        Effect.sync(() => {
          fault = f
        }),
      requests: Effect.sync(() => count),
      setSeries: (next) =>
        Effect.sync(() => {
          series = next
        })
    }
    return service
  })

export class DevAlerts extends Context.Tag("@kubemend/core/devkit/DevAlerts")<DevAlerts, DevAlertsService>() {
  static readonly layer = (options: DevAlertsOptions = {}) => Layer.scoped(DevAlerts, make(options))
}
