/** The notification controller's metrics under the names of spec document 3 (`svc_notification_*`). */
import { Metrics } from "@kubemend/core/Metrics"
import { Effect } from "effect"
import type { BreakerState } from "@kubemend/core/CircuitBreaker"

const breakerNumber: Record<BreakerState, number> = { closed: 0, open: 1, half_open: 2 }

export class NotificationMetrics extends Effect.Service<NotificationMetrics>()("@kubemend/operator/NotificationMetrics", {
  effect: Effect.gen(function* () {
    const m = yield* Metrics
    const p = "svc_notification_"
    const active = m.gauge({ name: `${p}reconciler_active`, help: "NotificationRequests by phase", labelNames: ["phase"] })
    const attempts = m.counter({ name: `${p}delivery_attempts_total`, help: "Delivery attempts", labelNames: ["channel", "status"] })
    const duration = m.histogram({
      name: `${p}delivery_duration_seconds`,
      help: "Duration of one delivery attempt",
      labelNames: ["channel"],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
    })
    const retries = m.counter({ name: `${p}delivery_retries_total`, help: "Deliveries scheduled for another attempt", labelNames: ["channel"] })
    const breaker = m.gauge({ name: `${p}channel_circuit_breaker_state`, help: "Channel breaker: 0 closed, 1 open, 2 half-open", labelNames: ["channel"] })
    const health = m.gauge({
      name: `${p}channel_health_score`,
      help: "Share of the channel's last 20 deliveries that were sent (0-100)",
      labelNames: ["channel"]
    })
    const phases = new Map<string, string>()

    return {
      /** The request's current phase (undefined when it is gone). */
      phase: (name: string, phase: string | undefined) =>
        Effect.sync(() => {
          if (phase === undefined) phases.delete(name)
          else phases.set(name, phase)
          const counts = new Map<string, number>()
          for (const p of ["Pending", "Sending", "Sent", "Retrying", "PartiallySent", "Failed"]) counts.set(p, 0)
          for (const p of phases.values()) counts.set(p, (counts.get(p) ?? 0) + 1)
          for (const [p, n] of counts) active.set({ phase: p }, n)
        }),
      attempt: (channel: string, status: "success" | "failure", seconds: number) =>
        Effect.sync(() => {
          attempts.inc({ channel, status })
          duration.observe({ channel }, seconds)
        }),
      retry: (channel: string) => Effect.sync(() => retries.inc({ channel })),
      breakerState: (channel: string, state: BreakerState) => Effect.sync(() => breaker.set({ channel }, breakerNumber[state])),
      healthScore: (channel: string, score: number) => Effect.sync(() => health.set({ channel }, score))
    } as const
  })
}) {}
