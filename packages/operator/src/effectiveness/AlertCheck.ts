/**
 * The alert component's source: whether the alert that raised the RR still fires. The metrics backend's alerts API
 * (Prometheus `GET /api/v1/alerts`, what the dev metrics backend serves) decides: a matching alert `firing` or
 * `pending` is still active. A match has the RR's `alertname`, agrees on the identifying labels the signal carried
 * (namespace, pod, workload, node, container), and points at the signal's target (its namespace; its workload label,
 * or a pod named after it). Without an answer from the backend, a resolved signal the
 * signal service recorded after the remediation (`gateway.signal.resolved` in storage) counts as resolved.
 */
import { Storage } from "@kubemend/core/Storage"
import { Context, Duration, Effect, Layer, Option } from "effect"
import { EffectivenessConfig, metricsAuthHeader } from "./EffectivenessConfig.ts"
import { EffectivenessMetrics } from "./EffectivenessMetrics.ts"

export type AlertState =
  | { readonly _tag: "NotApplicable"; readonly details: string }
  | { readonly _tag: "Unavailable"; readonly details: string }
  | { readonly _tag: "Resolved"; readonly details: string; readonly source: "metrics-backend" | "signal-service" }
  | { readonly _tag: "Firing"; readonly details: string; readonly activeCount: number }

export interface AlertQuery {
  readonly rrName: string
  readonly signalName: string
  readonly signalType: string | undefined
  readonly signalLabels: Readonly<Record<string, string>>
  /** The resource that raised the signal. */
  readonly target: { readonly kind: string; readonly name: string; readonly namespace?: string | undefined }
  /** Clock millis of the remediation; resolved signals before it do not count. */
  readonly since: number
  /** The metrics backend URL in force (the platform CR may override the config). */
  readonly metricsUrl: Option.Option<string>
}

export interface AlertCheckShape {
  readonly check: (q: AlertQuery) => Effect.Effect<AlertState>
}

const identifying = ["namespace", "pod", "deployment", "statefulset", "daemonset", "replicaset", "job", "node", "container", "persistentvolumeclaim"]

/** Signals that are alerts (Prometheus/Alertmanager); Kubernetes events and interactive RRs have no alert to resolve. */
const isAlert = (signalType: string | undefined) => signalType === undefined || signalType === "alert" || signalType === "prometheus"

/** The alert's labels point at the signal's target: its namespace, and its workload, pod (by name prefix) or node. */
const aboutTarget = (labels: Record<string, unknown>, t: AlertQuery["target"]) => {
  if (labels["namespace"] !== undefined && t.namespace !== undefined && labels["namespace"] !== t.namespace) return false
  const kind = t.kind.toLowerCase()
  const named = labels[kind]
  if (typeof named === "string") return named === t.name
  const pod = labels["pod"]
  if (typeof pod === "string") return t.kind === "Pod" ? pod === t.name : pod.startsWith(`${t.name}-`)
  return true
}

const matches = (labels: Record<string, unknown>, q: AlertQuery) =>
  labels["alertname"] === q.signalName &&
  identifying.every((k) => q.signalLabels[k] === undefined || labels[k] === undefined || labels[k] === q.signalLabels[k]) &&
  aboutTarget(labels, q.target)

export class AlertCheck extends Context.Tag("@kubemend/operator/AlertCheck")<AlertCheck, AlertCheckShape>() {
  /** The metrics backend in force, and storage's resolved signals when a Storage service is in the context. */
  static readonly make = Effect.gen(function* () {
    const storage = yield* Effect.serviceOption(Storage)
    const config = yield* EffectivenessConfig
    const metrics = yield* EffectivenessMetrics
    const timeout = config.requestTimeout

    const fetchAlerts = (url: string) =>
      Effect.gen(function* () {
        const auth = yield* metricsAuthHeader(config)
        return yield* Effect.tryPromise({
          try: async (signal) => {
            const res = await fetch(`${url.replace(/\/+$/, "")}/api/v1/alerts`, {
              signal,
              headers: { accept: "application/json", ...auth }
            })
            if (!res.ok) throw new Error(`status ${res.status}`)
            const body = (await res.json()) as { data?: { alerts?: Array<{ labels?: Record<string, unknown>; state?: unknown }> } }
            return body.data?.alerts ?? []
          },
          catch: (e) => String(e)
        }).pipe(Effect.timeoutFail({ duration: timeout, onTimeout: () => `no answer within ${Duration.format(timeout)}` }))
      })

    const resolvedSignal = (q: AlertQuery) =>
      Option.match(storage, {
        onNone: () => Effect.succeed(false),
        onSome: (s) =>
          s.queryEvents({ correlation_id: q.rrName, event_type: "gateway.signal.resolved", limit: 50 }).pipe(
            Effect.map((r) => r.data.some((e) => Date.parse(e.event_timestamp) >= q.since)),
            Effect.timeoutFail({ duration: timeout, onTimeout: () => "timeout" as const }),
            Effect.catchAll(() => Effect.as(metrics.externalError("storage", "query_events", "unavailable"), false))
          )
      })

    const check = (q: AlertQuery): Effect.Effect<AlertState> =>
      Effect.gen(function* () {
        if (!isAlert(q.signalType)) return { _tag: "NotApplicable", details: `signal type ${q.signalType} raises no alert` } as const
        if (Option.isNone(q.metricsUrl)) {
          return (yield* resolvedSignal(q))
            ? { _tag: "Resolved", details: "the signal service recorded the alert resolved", source: "signal-service" } as const
            : { _tag: "NotApplicable", details: "no metrics backend configured (monitoring.metricsURL)" } as const
        }
        const listed = yield* Effect.either(fetchAlerts(q.metricsUrl.value))
        if (listed._tag === "Left") {
          yield* metrics.externalError("metrics-backend", "list_alerts", listed.left.startsWith("no answer") ? "timeout" : "unavailable")
          return (yield* resolvedSignal(q))
            ? { _tag: "Resolved", details: "the signal service recorded the alert resolved", source: "signal-service" } as const
            : { _tag: "Unavailable", details: `metrics backend: ${listed.left}` } as const
        }
        const active = listed.right.filter((a) => (a.state === "firing" || a.state === "pending") && matches(a.labels ?? {}, q))
        return active.length === 0
          ? { _tag: "Resolved", details: `${q.signalName} is no longer active`, source: "metrics-backend" } as const
          : { _tag: "Firing", details: `${q.signalName} is still ${String(active[0]!.state)}`, activeCount: active.length } as const
      })

    return { check } satisfies AlertCheckShape
  })

  static readonly layer = Layer.effect(AlertCheck, AlertCheck.make)
}
