/** The effectiveness monitor's metrics under the names of spec document 3 (`svc_effectivenessmonitor_*`). */
import { Metrics } from "@kubemend/core/Metrics"
import { Effect } from "effect"

export type Component = "health" | "alert" | "metrics" | "hash"

export class EffectivenessMetrics extends Effect.Service<EffectivenessMetrics>()("@kubemend/operator/EffectivenessMetrics", {
  effect: Effect.gen(function* () {
    const m = yield* Metrics
    const p = "svc_effectivenessmonitor_"
    const scores = m.histogram({
      name: `${p}component_scores`,
      help: "Component scores of finished component assessments (0.0 to 1.0)",
      labelNames: ["component"],
      buckets: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]
    })
    const assessments = m.counter({ name: `${p}component_assessments_total`, help: "Component assessments by result", labelNames: ["component", "result"] })
    const completed = m.counter({ name: `${p}assessments_completed_total`, help: "Assessments completed, by reason", labelNames: ["reason"] })
    const expirations = m.counter({ name: `${p}validity_expirations_total`, help: "Assessments that passed their validity deadline" })
    const errors = m.counter({
      name: `${p}external_call_errors_total`,
      help: "Failed calls to the metrics backend, storage or the API server",
      labelNames: ["service", "operation", "error_type"]
    })

    return {
      /** A component finished: `result` is `success` (it passed), `failure` (it did not) or `unassessed`. */
      component: (component: Component, result: "success" | "failure" | "unassessed", score?: number) =>
        Effect.sync(() => {
          assessments.inc({ component, result })
          if (score !== undefined) scores.observe({ component }, score)
        }),
      completed: (reason: string) => Effect.sync(() => completed.inc({ reason })),
      expired: Effect.sync(() => expirations.inc()),
      externalError: (service: string, operation: string, errorType: string) => Effect.sync(() => errors.inc({ service, operation, error_type: errorType }))
    } as const
  })
}) {}
