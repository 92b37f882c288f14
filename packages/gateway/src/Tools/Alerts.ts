/**
 * `svc_list_alerts`: the firing and pending alerts of a Prometheus-compatible backend (`GET /api/v1/alerts`),
 * filtered by namespace, severity (aliases medium -> warning, low -> info) and state, sorted by severity then
 * `active_at`, with a `prioritized` pointer to the most severe, longest-firing alert. Each alert's severity is the
 * severity triage's (SeverityTriage.ts): its label when it is one of the four levels, else the rule tier or the triage
 * model; it is returned as `severity` (with `severity_source` when not from the label) and drives the filter, the
 * order and `prioritized`. Label keys that look like credentials are dropped and URLs/IP addresses in values
 * redacted (before anything reaches the triage model); past the output cap the tail is trimmed.
 *
 * The backend is reached as the operator's default one needs: with `metricsBackend.tokenFile` a bearer token (read
 * per request, since projected tokens rotate) and with `metricsBackend.caFile` its certificate checked against that
 * CA bundle.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Duration, Effect, Option, Schema } from "effect"
import { readFile } from "node:fs/promises"
import { classifySeverity, type Severity, severityRank } from "@kubemend/core/domain/Severity"
import { ToolError } from "@kubemend/core/ToolError"
import { type AlertView, makeSeverityTriage, type Triaged } from "../SeverityTriage.ts"
import { GatewayConfig } from "../GatewayConfig.ts"
import { fitCount } from "../Mcp/Output.ts"
import { redactValue } from "../Redact.ts"
import { defineTool } from "../Mcp/Tool.ts"
import { NamespaceName, optional, record, str, Text } from "./Common.ts"

/** An alert as `svc_list_alerts` answers it. */
export interface ListedAlert extends AlertView {
  /** The classified severity (`unknown` when neither label, rules nor a confident model tell). */
  readonly severity: Severity
  /** How it was found when not from a valid `severity` label. */
  readonly severity_source?: Exclude<Triaged["source"], "label">
}

const secretKey = /password|token|secret|key|credential|bearer/i

const clean = (m: unknown): Record<string, string> =>
  Object.fromEntries(
    Object.entries(record(m))
      .filter(([k, v]) => !secretKey.test(k) && typeof v === "string")
      .map(([k, v]) => [k, redactValue(v as string)])
  )

const labelSeverity = (a: AlertView): Severity => classifySeverity(a.labels["severity"])

/** Severity descending, then longest active first (earliest `active_at`); severity from the label by default. */
export const sortAlerts = <A extends AlertView>(
  alerts: ReadonlyArray<A>,
  severityOf: (a: A) => Severity = labelSeverity
): ReadonlyArray<A> =>
  [...alerts].sort((a, b) =>
    severityRank[severityOf(b)] - severityRank[severityOf(a)] ||
    (Date.parse(a.active_at) || Infinity) - (Date.parse(b.active_at) || Infinity)
  )

/** Indices into the sorted list: the pick, the others at its severity, where lower severities begin (-1: none). */
export const prioritize = <A extends AlertView>(sorted: ReadonlyArray<A>, severityOf: (a: A) => Severity = labelSeverity) => {
  if (sorted.length === 0) return { selected_index: -1, tied_indices: [] as Array<number>, also_active_start: -1 }
  const top = severityRank[severityOf(sorted[0]!)]
  const tied = sorted.flatMap((a, i) => (i > 0 && severityRank[severityOf(a)] === top ? [i] : []))
  const lower = sorted.findIndex((a) => severityRank[severityOf(a)] < top)
  return { selected_index: 0, tied_indices: tied, also_active_start: lower }
}

const severityInput: Readonly<Record<string, Severity>> = {
  critical: "critical",
  high: "high",
  warning: "warning",
  info: "info",
  medium: "warning",
  low: "info"
}

export const alertTools = Effect.gen(function* () {
  const config = yield* GatewayConfig
  if (!config.severityTriageEnabled || Option.isNone(config.metricsBackendUrl)) return []
  const url = `${config.metricsBackendUrl.value.replace(/\/+$/, "")}/api/v1/alerts`
  const triage = yield* makeSeverityTriage

  const unavailable = new ToolError({ message: "the metrics backend is unavailable, please retry later", code: "metrics_unavailable" })
  // A CA that cannot be read is a configuration error: the gateway does not start rather than trust anything else.
  const ca = yield* Option.match(config.metricsBackendCaFile, {
    onNone: () => Effect.succeed(undefined),
    onSome: (file) => Effect.orDieWith(Effect.tryPromise(() => readFile(file, "utf8")), (e) => new Error(`metricsBackend.caFile ${file}: ${String(e)}`))
  })
  const client = yield* NodeHttpClient.make.pipe(
    Effect.provideServiceEffect(NodeHttpClient.HttpAgent, NodeHttpClient.makeAgent(ca === undefined ? {} : { ca }))
  )
  const bearer = Option.match(config.metricsBackendTokenFile, {
    onNone: () => Effect.succeed(undefined),
    onSome: (file) => Effect.mapError(Effect.tryPromise(() => readFile(file, "utf8")), () => unavailable)
  })

  const fetchAlerts = Effect.gen(function* () {
    const token = (yield* bearer)?.trim()
    const request = HttpClientRequest.get(url).pipe(
      HttpClientRequest.acceptJson,
      token === undefined || token === "" ? (r) => r : HttpClientRequest.bearerToken(token)
    )
    const response = yield* HttpClient.filterStatusOk(client).execute(request).pipe(Effect.mapError(() => unavailable))
    return yield* Effect.mapError(response.json, () => unavailable)
  }).pipe(
    Effect.timeoutFail({
      duration: config.backendTimeout,
      onTimeout: () =>
        new ToolError({ message: `the metrics backend did not answer within ${Duration.format(config.backendTimeout)}`, code: "metrics_unavailable" })
    })
  )

  return [
    defineTool({
      name: "list_alerts",
      description:
        "List currently firing or pending alerts, optionally filtered by namespace, severity (critical, high, warning, info) or state (firing, pending).",
      input: Schema.Struct({ namespace: optional(NamespaceName), severity: optional(Text(32)), state: optional(Text(32)) }),
      run: (input, ctx) =>
        Effect.gen(function* () {
          const wanted = input.severity === undefined || input.severity === "" ? undefined : severityInput[input.severity.trim().toLowerCase()]
          if (input.severity !== undefined && input.severity !== "" && wanted === undefined) {
            return yield* new ToolError({ message: "severity must be one of critical, high, warning, info", code: "invalid_arguments" })
          }
          const state = input.state?.trim().toLowerCase() ?? ""
          if (state !== "" && state !== "firing" && state !== "pending") {
            return yield* new ToolError({ message: "state must be firing or pending", code: "invalid_arguments" })
          }
          const body = record(yield* fetchAlerts)
          const raw = Array.isArray(record(body.data).alerts) ? (record(body.data).alerts as ReadonlyArray<unknown>) : []
          const views = raw.map(record).flatMap((a): Array<AlertView> => {
            const labels = record(a.labels)
            if (input.namespace !== undefined && labels["namespace"] !== input.namespace) return []
            const view = { labels: clean(labels), annotations: clean(a.annotations), state: str(a.state) ?? "", active_at: str(a.activeAt) ?? "" }
            if (view.state !== "firing" && view.state !== "pending") return []
            if (state !== "" && view.state !== state) return []
            return [view]
          })
          const who = { userId: ctx.caller.principal.user, clientIp: ctx.caller.clientIp }
          const classified = yield* Effect.forEach(views, (view) =>
            Effect.map(triage.classify(view, who), (t): ListedAlert => ({
              ...view,
              severity: t.severity,
              ...(t.source === "label" ? {} : { severity_source: t.source })
            })), { concurrency: 4 })
          const bySeverity = (a: ListedAlert) => a.severity
          const alerts = sortAlerts(classified.filter((a) => wanted === undefined || a.severity === wanted), bySeverity)
          const build = (n: number) => {
            const kept = alerts.slice(0, n)
            return { alerts: kept, count: kept.length, total_count: alerts.length, truncated: n < alerts.length, prioritized: prioritize(kept, bySeverity) }
          }
          return build(fitCount(alerts.length, build, config.maxToolOutputBytes))
        })
    })
  ]
})
