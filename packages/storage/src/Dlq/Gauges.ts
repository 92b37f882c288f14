/** The dead-letter queue's metrics, the same whichever backend holds the queue. */
import { Metrics } from "@kubemend/core/Metrics"
import { Effect } from "effect"

/** The `stream` label of every DLQ metric (one queue, for audit events and notification records alike). */
const stream = "audit"

/** Why a write was refused: the queue is at capacity, or (Valkey backend) the queue itself cannot be reached. */
export type RefusalReason = "full" | "unavailable"

export const makeGauges = (capacity: number) =>
  Effect.map(Metrics, (metrics) => {
    const warning = metrics.gauge({ name: "datastorage_dlq_warning", help: "1 when the dead-letter queue is at 80% of capacity", labelNames: ["stream"] })
    const critical = metrics.gauge({ name: "datastorage_dlq_critical", help: "1 when the dead-letter queue is at 90% of capacity", labelNames: ["stream"] })
    const depth = metrics.gauge({ name: "datastorage_dlq_depth", help: "Events waiting in the dead-letter queue", labelNames: ["stream"] })
    const refused = metrics.counter({
      name: "datastorage_dlq_refused_total",
      help: "Events refused because the dead-letter queue was full or unreachable",
      labelNames: ["stream", "reason"]
    })
    return {
      /** Publishes the number of events waiting. */
      publish: (events: number) =>
        Effect.sync(() => {
          depth.set({ stream }, events)
          warning.set({ stream }, events >= capacity * 0.8 ? 1 : 0)
          critical.set({ stream }, events >= capacity * 0.9 ? 1 : 0)
        }),
      refuse: (events: number, reason: RefusalReason) => Effect.sync(() => refused.inc({ stream, reason }, events))
    } as const
  })
