/** The ingestion metrics of document 3 (`gateway_*`: the original's signal gateway names them so). */
import { Metrics } from "@kubemend/core/Metrics"
import { Effect } from "effect"

export class SignalsMetrics extends Effect.Service<SignalsMetrics>()("@kubemend/signals/SignalsMetrics", {
  effect: Effect.gen(function* () {
    const m = yield* Metrics
    const received = m.counter({ name: "gateway_signals_received_total", help: "Signals received", labelNames: ["source_type", "severity"] })
    const deduplicated = m.counter({
      name: "gateway_signals_deduplicated_total",
      help: "Signals folded into an existing remediation request",
      labelNames: ["signal_name"]
    })
    const rejected = m.counter({ name: "gateway_signals_rejected_total", help: "Signals rejected", labelNames: ["reason"] })
    const created = m.counter({ name: "gateway_crds_created_total", help: "Remediation requests created", labelNames: ["source_type", "status"] })
    const creationErrors = m.counter({
      name: "gateway_crd_creation_errors_total",
      help: "Remediation requests that could not be created",
      labelNames: ["error_type"]
    })
    const duration = m.histogram({
      name: "gateway_http_request_duration_seconds",
      help: "Signal API request duration",
      labelNames: ["endpoint", "method", "status"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
    })
    const breaker = m.gauge({ name: "gateway_circuit_breaker_state", help: "Circuit breaker state: 0 closed, 1 half-open, 2 open", labelNames: ["name"] })
    return {
      received: (source: string, severity: string) => Effect.sync(() => received.inc({ source_type: source, severity })),
      deduplicated: (signalName: string) => Effect.sync(() => deduplicated.inc({ signal_name: signalName })),
      rejected: (reason: string) => Effect.sync(() => rejected.inc({ reason })),
      created: (source: string, status: string) => Effect.sync(() => created.inc({ source_type: source, status })),
      creationError: (errorType: string) => Effect.sync(() => creationErrors.inc({ error_type: errorType })),
      observe: (endpoint: string, method: string, status: number, seconds: number) =>
        Effect.sync(() => duration.observe({ endpoint, method, status: String(status) }, seconds)),
      breakerState: (name: string, state: 0 | 1 | 2) => Effect.sync(() => breaker.set({ name }, state))
    } as const
  })
}) {}
