/**
 * The workflow execution controller's metrics under spec document 3's names: every reconcile counted and timed by
 * what it came to (`started`, `running`, `completed`, `failed`, `busy`, `cooldown`, `stopped`, `idle`, `error`).
 */
import { Metrics } from "@kubemend/core/Metrics"
import { Effect } from "effect"

export type ReconcileOutcome = "started" | "running" | "completed" | "failed" | "busy" | "cooldown" | "stopped" | "idle" | "error"

export class ExecutionMetrics extends Effect.Service<ExecutionMetrics>()("@kubemend/operator/ExecutionMetrics", {
  effect: Effect.gen(function* () {
    const m = yield* Metrics
    const total = m.counter({
      name: "workflowexecution_reconciler_total",
      help: "WorkflowExecution reconciles by outcome",
      labelNames: ["outcome"]
    })
    const duration = m.histogram({
      name: "workflowexecution_reconciler_duration_seconds",
      help: "Duration of one WorkflowExecution reconcile by outcome",
      labelNames: ["outcome"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    })
    return {
      reconciled: (outcome: ReconcileOutcome, seconds: number) =>
        Effect.sync(() => {
          total.inc({ outcome })
          duration.observe({ outcome }, seconds)
        })
    } as const
  })
}) {}
