/**
 * One circuit breaker per channel (slack, webhook, pagerduty, email), on Effect's Clock so tests drive it with
 * TestClock. `threshold` consecutive failed deliveries open it: deliveries on that channel are not attempted until
 * `resetTimeout` has passed, then one trial goes through (half-open); its success closes the breaker, its failure
 * opens it again. The gateway's and the agent's breakers are bound to their own metrics and audit; this one
 * publishes `svc_notification_channel_circuit_breaker_state` (0 closed, 1 open, 2 half-open, as document 3 numbers
 * them) and the channel's health score.
 */
import { Clock, Duration, Effect } from "effect"
import { NotificationConfig } from "./NotificationConfig.ts"
import { NotificationMetrics } from "./NotificationMetrics.ts"

export type BreakerState = "closed" | "open" | "half_open"

interface Entry {
  state: BreakerState
  failures: number
  openedAt: number
  /** Outcomes of the last deliveries (true = sent), for the health score. */
  recent: Array<boolean>
}

export class Breakers extends Effect.Service<Breakers>()("@kubemend/operator/NotificationBreakers", {
  effect: Effect.gen(function* () {
    const config = yield* NotificationConfig
    const metrics = yield* NotificationMetrics
    const entries = new Map<string, Entry>()
    const entry = (channel: string) => {
      let e = entries.get(channel)
      if (e === undefined) entries.set(channel, e = { state: "closed", failures: 0, openedAt: 0, recent: [] })
      return e
    }
    const set = (channel: string, e: Entry, state: BreakerState) => {
      e.state = state
      return metrics.breakerState(channel, state)
    }

    /** None when a delivery may be attempted now; otherwise when the breaker lets a trial through. */
    const admit = (channel: string) =>
      Effect.gen(function* () {
        const e = entry(channel)
        if (e.state !== "open") return undefined
        const now = yield* Clock.currentTimeMillis
        const reopen = e.openedAt + Duration.toMillis(config.breakerResetTimeout)
        if (now < reopen) return reopen
        yield* set(channel, e, "half_open")
        return undefined
      })

    const record = (channel: string, sent: boolean) =>
      Effect.gen(function* () {
        const e = entry(channel)
        e.recent = [...e.recent, sent].slice(-20)
        yield* metrics.healthScore(channel, (100 * e.recent.filter((x) => x).length) / e.recent.length)
        if (sent) {
          e.failures = 0
          if (e.state !== "closed") yield* set(channel, e, "closed")
          return
        }
        e.failures++
        if (e.state === "half_open" || (e.state === "closed" && e.failures >= config.breakerThreshold)) {
          e.openedAt = yield* Clock.currentTimeMillis
          yield* set(channel, e, "open")
          yield* Effect.logWarning("notification channel breaker opened").pipe(Effect.annotateLogs({ channel, failures: e.failures }))
        }
      })

    const state = (channel: string) => Effect.sync(() => entry(channel).state)

    return { admit, record, state } as const
  })
}) {}
