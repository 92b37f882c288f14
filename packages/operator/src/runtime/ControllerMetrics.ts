/**
 * Reconcile and work-queue metrics under controller-runtime's names, so the usual dashboards and alerts apply:
 * `controller_runtime_reconcile_total{controller,result}`, `controller_runtime_reconcile_errors_total`,
 * `controller_runtime_reconcile_time_seconds`, `controller_runtime_active_workers`, `workqueue_depth`,
 * `workqueue_adds_total`, `workqueue_retries_total`, `workqueue_queue_duration_seconds`,
 * `workqueue_work_duration_seconds`.
 */
import { Metrics } from "@kubemend/core/Metrics"
import { Effect } from "effect"
import type { WorkQueueObserver } from "./WorkQueue.ts"

export type ReconcileResult = "success" | "error" | "requeue_after"

const buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

export class ControllerMetrics extends Effect.Service<ControllerMetrics>()("@kubemend/operator/ControllerMetrics", {
  effect: Effect.gen(function* () {
    const m = yield* Metrics
    const reconcileTotal = m.counter({
      name: "controller_runtime_reconcile_total",
      help: "Total number of reconciliations per controller",
      labelNames: ["controller", "result"]
    })
    const reconcileErrors = m.counter({
      name: "controller_runtime_reconcile_errors_total",
      help: "Total number of reconciliation errors per controller",
      labelNames: ["controller"]
    })
    const reconcileTime = m.histogram({
      name: "controller_runtime_reconcile_time_seconds",
      help: "Length of time per reconciliation per controller",
      labelNames: ["controller"],
      buckets
    })
    const activeWorkers = m.gauge({
      name: "controller_runtime_active_workers",
      help: "Number of currently used workers per controller",
      labelNames: ["controller"]
    })
    const maxWorkers = m.gauge({
      name: "controller_runtime_max_concurrent_reconciles",
      help: "Maximum number of concurrent reconciles per controller",
      labelNames: ["controller"]
    })
    const depth = m.gauge({ name: "workqueue_depth", help: "Current depth of workqueue", labelNames: ["name"] })
    const adds = m.counter({ name: "workqueue_adds_total", help: "Total number of adds handled by workqueue", labelNames: ["name"] })
    const retries = m.counter({
      name: "workqueue_retries_total",
      help: "Total number of retries handled by workqueue",
      labelNames: ["name"]
    })
    const queueDuration = m.histogram({
      name: "workqueue_queue_duration_seconds",
      help: "How long in seconds an item stays in workqueue before being requested",
      labelNames: ["name"],
      buckets
    })
    const workDuration = m.histogram({
      name: "workqueue_work_duration_seconds",
      help: "How long in seconds processing an item from workqueue takes",
      labelNames: ["name"],
      buckets
    })

    const observer: WorkQueueObserver = {
      depth: (name, n) => depth.set({ name }, n),
      added: (name) => adds.inc({ name }),
      retried: (name) => retries.inc({ name }),
      waited: (name, seconds) => queueDuration.observe({ name }, seconds)
    }

    return {
      observer,
      workers: (controller: string, n: number) => Effect.sync(() => maxWorkers.set({ controller }, n)),
      active: (controller: string, delta: number) => Effect.sync(() => activeWorkers.inc({ controller }, delta)),
      reconciled: (controller: string, result: ReconcileResult, seconds: number) =>
        Effect.sync(() => {
          reconcileTotal.inc({ controller, result })
          if (result === "error") reconcileErrors.inc({ controller })
          reconcileTime.observe({ controller }, seconds)
          workDuration.observe({ name: controller }, seconds)
        })
    } as const
  }),
  dependencies: [Metrics.Default]
}) {}
