/**
 * The metrics component's source: the target's workload metrics on the metrics backend (Prometheus
 * `GET /api/v1/query`) over the time since the remediation, against the same length of time just before it (the
 * `offset` modifier, so the backend's own clock anchors both windows). A small built-in set, each lower-is-better:
 * container restarts, memory working set over the limit, and the share of CPU periods throttled. Each query with data
 * in both windows scores 1 (improved by over 10%), 0.5 (within 10%: not worse) or 0 (worse); the component's score
 * is their mean. No query with data on both sides, or no backend, is "not assessed", never a failure.
 */
import { Context, Duration, Effect, Layer, Option } from "effect"
import { EffectivenessConfig, metricsAuthHeader } from "./EffectivenessConfig.ts"
import { EffectivenessMetrics } from "./EffectivenessMetrics.ts"

export interface MetricsQuery {
  readonly target: { readonly kind: string; readonly name: string; readonly namespace?: string | undefined }
  /** Length of each window: the time from the remediation to the check. */
  readonly windowSeconds: number
  readonly metricsUrl: Option.Option<string>
}

export type MetricsState =
  | { readonly _tag: "NotAssessed"; readonly details: string }
  | { readonly _tag: "Compared"; readonly score: number; readonly details: string; readonly deltas: Readonly<Record<string, number>> }

export interface MetricsCheckShape {
  readonly compare: (q: MetricsQuery) => Effect.Effect<MetricsState>
}

const workloadKinds = new Set(["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"])
const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** The built-in queries; `w` is `[window] offset ...` for one side. */
const queries = (w: (metric: string, extra?: string) => string) => ({
  restarts: `sum(increase(${w("kube_pod_container_status_restarts_total")}))`,
  memory: `max(max_over_time(${w("container_memory_working_set_bytes", `container!=""`)})) / max(max_over_time(${
    w("kube_pod_container_resource_limits", `resource="memory"`)
  }))`,
  cpu: `sum(increase(${w("container_cpu_cfs_throttled_periods_total")})) / sum(increase(${w("container_cpu_cfs_periods_total")}))`
})

/** 1 improved, 0.5 within 10% (not worse), 0 worse. */
export const compareValues = (before: number, after: number) => after < before * 0.9 ? 1 : after <= before * 1.1 + 1e-9 ? 0.5 : 0

export class MetricsCheck extends Context.Tag("@kubemend/operator/MetricsCheck")<MetricsCheck, MetricsCheckShape>() {
  static readonly make = Effect.gen(function* () {
    const config = yield* EffectivenessConfig
    const metrics = yield* EffectivenessMetrics
    const timeout = config.requestTimeout

    /** The single value of an instant query; none when it has no sample or a non-finite one (e.g. 0/0). */
    const value = (url: string, query: string) =>
      Effect.gen(function* () {
        const auth = yield* metricsAuthHeader(config)
        return yield* Effect.tryPromise({
          try: async (signal) => {
            const res = await fetch(`${url.replace(/\/+$/, "")}/api/v1/query?${new URLSearchParams({ query })}`, {
              signal,
              headers: { accept: "application/json", ...auth }
            })
            const body = (await res.json().catch(() => ({}))) as { error?: string; data?: { result?: Array<{ value?: [number, string] }> } }
            if (!res.ok) throw new Error(`status ${res.status}${body.error === undefined ? "" : `: ${body.error}`}`)
            const v = Number(body.data?.result?.[0]?.value?.[1])
            return Number.isFinite(v) ? Option.some(v) : Option.none<number>()
          },
          catch: (e) => (e instanceof Error ? e.message : String(e))
        }).pipe(Effect.timeoutFail({ duration: timeout, onTimeout: () => `no answer within ${Duration.format(timeout)}` }))
      })

    const compare = (q: MetricsQuery): Effect.Effect<MetricsState> =>
      Effect.gen(function* () {
        if (Option.isNone(q.metricsUrl)) return { _tag: "NotAssessed", details: "no metrics backend configured (monitoring.metricsURL)" } as const
        const t = q.target
        if (t.kind !== "Pod" && !workloadKinds.has(t.kind)) return { _tag: "NotAssessed", details: `${t.kind} has no workload metrics to compare` } as const
        const pod = t.kind === "Pod" ? `pod=${JSON.stringify(t.name)}` : `pod=~${JSON.stringify(`${escapeRegex(t.name)}-.*`)}`
        const sel = [...(t.namespace === undefined ? [] : [`namespace=${JSON.stringify(t.namespace)}`]), pod].join(",")
        const window = Math.max(60, Math.round(q.windowSeconds))
        const side = (offset: number) => (metric: string, extra?: string) =>
          `${metric}{${[sel, ...(extra === undefined ? [] : [extra])].join(",")}}[${window}s]${offset > 0 ? ` offset ${offset}s` : ""}`
        const before = queries(side(window))
        const after = queries(side(0))
        const deltas: Record<string, number> = {}
        const scores: Array<number> = []
        const names = ["restarts", "memory", "cpu"] as const
        for (const name of names) {
          const pair = yield* Effect.either(Effect.all([value(q.metricsUrl.value, before[name]), value(q.metricsUrl.value, after[name])]))
          if (pair._tag === "Left") {
            yield* metrics.externalError("metrics-backend", "query", pair.left.startsWith("no answer") ? "timeout" : "unavailable")
            return { _tag: "NotAssessed", details: `metrics backend: ${pair.left}` } as const
          }
          const [b, a] = pair.right
          if (Option.isNone(b) || Option.isNone(a)) continue
          deltas[`${name}_before`] = b.value
          deltas[`${name}_after`] = a.value
          scores.push(compareValues(b.value, a.value))
        }
        if (scores.length === 0) {
          return {
            _tag: "NotAssessed",
            details: `no restart, memory or CPU throttling samples for ${t.kind} ${t.name} before and after the remediation`
          } as const
        }
        const score = Math.round((scores.reduce((x, y) => x + y, 0) / scores.length) * 10000) / 10000
        const compared = names.filter((n) => deltas[`${n}_before`] !== undefined)
        return { _tag: "Compared", score, deltas, details: `compared ${compared.join(", ")} over ${window}s before and after the remediation` } as const
      })

    return { compare } satisfies MetricsCheckShape
  })

  static readonly layer = Layer.effect(MetricsCheck, MetricsCheck.make)
}
