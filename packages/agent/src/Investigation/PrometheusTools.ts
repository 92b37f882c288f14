/**
 * PromQL against the configured metrics backend (`monitoring.prometheus`): `prometheus_query` (instant) and
 * `prometheus_query_range`. Results are condensed before the model reads them: at most `maxSeries` series, and for a
 * range each series as first/last/min/max/avg plus a few evenly spaced points, so a week of samples fits the output
 * budget. Without a configured URL the tools are not offered.
 */
import { Duration, Effect, Option, Redacted, Schema } from "effect"
import { readFile } from "node:fs/promises"
import { GoDurationPattern } from "@kubemend/core/domain/Common"
import { parseGoDuration } from "@kubemend/core/Config"
import { AgentConfig } from "../AgentConfig.ts"
import { failed, ok, opt, tool, type Tool } from "./ToolKit.ts"

const maxSeries = 20
const pointsPerSeries = 12
const maxPointsPerQuery = 11_000

const Query = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2000))
const GoDuration = Schema.String.pipe(Schema.pattern(GoDurationPattern))

interface Series {
  readonly metric: Readonly<Record<string, string>>
  readonly value?: readonly [number, string]
  readonly values?: ReadonlyArray<readonly [number, string]>
}

const round = (n: number) => (Number.isFinite(n) ? Math.round(n * 1e4) / 1e4 : n)

/** One range series as statistics plus a handful of points. */
const condense = (s: Series) => {
  const values = (s.values ?? []).map(([t, v]) => [t, Number(v)] as const)
  const numbers = values.map(([, v]) => v).filter(Number.isFinite)
  const step = Math.max(1, Math.ceil(values.length / pointsPerSeries))
  return {
    metric: s.metric,
    samples: values.length,
    ...(numbers.length === 0 ? {} : {
      first: round(numbers[0]!),
      last: round(numbers.at(-1)!),
      min: round(Math.min(...numbers)),
      max: round(Math.max(...numbers)),
      avg: round(numbers.reduce((a, b) => a + b, 0) / numbers.length)
    }),
    points: values.filter((_, i) => i % step === 0 || i === values.length - 1)
      .map(([t, v]) => [new Date(t * 1000).toISOString(), round(v)])
  }
}

/** The answer's data as the model reads it. */
export const summarise = (data: { resultType?: string; result?: unknown }) => {
  const result = Array.isArray(data.result) ? (data.result as ReadonlyArray<Series>) : []
  if (data.resultType === "scalar" || data.resultType === "string") return { resultType: data.resultType, value: data.result }
  const shown = result.slice(0, maxSeries)
  return {
    resultType: data.resultType,
    series: result.length,
    ...(result.length > maxSeries ? { note: `showing ${maxSeries} of ${result.length} series; aggregate (sum by, topk) to narrow` } : {}),
    result: data.resultType === "matrix"
      ? shown.map(condense)
      : shown.map((s) => ({ metric: s.metric, value: s.value === undefined ? null : round(Number(s.value[1])) }))
  }
}

export const make = Effect.gen(function* () {
  const config = yield* AgentConfig
  const settings = config.prometheus
  const base = settings.url?.replace(/\/+$/, "")
  if (base === undefined || base === "") return [] as ReadonlyArray<Tool>

  const authorization = Effect.promise(async () => {
    if (settings.tokenFile !== undefined) return `Bearer ${(await readFile(settings.tokenFile, "utf8")).trim()}`
    return settings.token === undefined ? undefined : `Bearer ${Redacted.value(settings.token)}`
  })

  const query = (path: string, params: Record<string, string>) =>
    Effect.gen(function* () {
      const auth = yield* Effect.orElseSucceed(authorization, () => undefined)
      const url = `${base}${path}?${new URLSearchParams(params)}`
      const response = yield* Effect.tryPromise({
        try: (signal) => fetch(url, { signal, headers: auth === undefined ? {} : { authorization: auth } }),
        catch: (e) => `the metrics backend is unreachable (${String(e)})`
      }).pipe(
        Effect.timeoutFail({ duration: settings.timeout, onTimeout: () => `the metrics backend did not answer within ${Duration.format(settings.timeout)}` })
      )
      const body = yield* Effect.tryPromise({
        try: () => response.json() as Promise<Record<string, unknown>>,
        catch: () => `the metrics backend answered HTTP ${response.status} without JSON`
      })
      if (body["status"] !== "success") {
        return yield* Effect.fail(`${String(body["errorType"] ?? `HTTP ${response.status}`)}: ${String(body["error"] ?? "query failed")}`)
      }
      return summarise(body["data"] as { resultType?: string; result?: unknown })
    }).pipe(
      Effect.map((summary) => ok({ query: params["query"], ...summary })),
      Effect.catchAll((message) => Effect.succeed(failed(message)))
    )

  const instant = tool(
    "prometheus_query",
    "Run a PromQL instant query on the cluster's metrics backend (for example container_memory_working_set_bytes{namespace=\"shop\"}). Series are capped; aggregate to narrow.",
    Schema.Struct({ query: Query, time: opt(Schema.String.pipe(Schema.maxLength(40))) }),
    (a) => query("/api/v1/query", { query: a.query, ...(a.time === undefined ? {} : { time: a.time }) })
  )

  const range = tool(
    "prometheus_query_range",
    "Run a PromQL range query over the last `duration` (Go duration, default 1h) at `step` (default duration/60); each series comes back as first/last/min/max/avg and a few points.",
    Schema.Struct({ query: Query, duration: opt(GoDuration), step: opt(GoDuration) }),
    (a) =>
      Effect.gen(function* () {
        const span = Duration.toSeconds(Option.getOrElse(parseGoDuration(a.duration ?? "1h"), () => Duration.hours(1)))
        const requested = a.step === undefined ? undefined : Duration.toSeconds(Option.getOrElse(parseGoDuration(a.step), () => Duration.minutes(1)))
        // Prometheus refuses more than 11 000 points per series; widen the step rather than fail.
        const step = Math.max(requested ?? Math.ceil(span / 60), Math.ceil(span / maxPointsPerQuery), 1)
        const end = (yield* Effect.clockWith((c) => c.currentTimeMillis)) / 1000
        return yield* query("/api/v1/query_range", {
          query: a.query,
          start: String(end - span),
          end: String(end),
          step: String(step)
        })
      })
  )

  return [instant, range] as ReadonlyArray<Tool>
})
