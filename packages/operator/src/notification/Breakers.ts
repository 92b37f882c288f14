/**
 * One circuit breaker per channel (slack, webhook, pagerduty, email): core's CircuitBreaker, on Effect's Clock so
 * tests drive it with TestClock. `threshold` consecutive failed deliveries open it: deliveries on that channel are
 * not attempted until `resetTimeout` has passed, then one trial goes through (half-open); its success closes the
 * breaker, its failure opens it again. It publishes `svc_notification_channel_circuit_breaker_state` (0 closed,
 * 1 open, 2 half-open, as document 3 numbers them) and the channel's health score.
 */
import * as CircuitBreaker from "@kubemend/core/CircuitBreaker"
import { Effect } from "effect"
import { NotificationConfig } from "./NotificationConfig.ts"
import { NotificationMetrics } from "./NotificationMetrics.ts"

export class Breakers extends Effect.Service<Breakers>()("@kubemend/operator/NotificationBreakers", {
  effect: Effect.gen(function* () {
    const config = yield* NotificationConfig
    const metrics = yield* NotificationMetrics
    const breakers = new Map<string, CircuitBreaker.CircuitBreaker>()
    /** Outcomes of each channel's last deliveries (true = sent), for the health score. */
    const recent = new Map<string, Array<boolean>>()

    const of = (channel: string) =>
      Effect.suspend(() => {
        const known = breakers.get(channel)
        if (known !== undefined) return Effect.succeed(known)
        return Effect.tap(
          CircuitBreaker.make({
            name: channel,
            failureThreshold: config.breakerThreshold,
            resetTimeout: config.breakerResetTimeout,
            unavailableDetail: `${channel} circuit breaker open`,
            onState: (state, failures) =>
              Effect.zipRight(
                metrics.breakerState(channel, state),
                state === "open"
                  ? Effect.logWarning("notification channel breaker opened").pipe(Effect.annotateLogs({ channel, failures }))
                  : Effect.void
              )
          }),
          (b) => Effect.sync(() => breakers.set(channel, b))
        )
      })

    /** Runs one delivery through the channel's breaker (every failure counts) and updates its health score. */
    const run = <A, E, R>(channel: string, delivery: Effect.Effect<A, E, R>) =>
      Effect.flatMap(of(channel), (breaker) =>
        breaker.run(
          Effect.tapBoth(delivery, { onFailure: () => score(channel, false), onSuccess: () => score(channel, true) }),
          () => true
        ))

    const score = (channel: string, sent: boolean) =>
      Effect.suspend(() => {
        const outcomes = [...(recent.get(channel) ?? []), sent].slice(-20)
        recent.set(channel, outcomes)
        return metrics.healthScore(channel, (100 * outcomes.filter((x) => x).length) / outcomes.length)
      })

    /** When an open breaker lets its trial through (epoch millis). */
    const trialAt = (channel: string) => Effect.flatMap(of(channel), (b) => b.trialAt)
    const state = (channel: string) => Effect.flatMap(of(channel), (b) => b.state)

    return { run, trialAt, state } as const
  })
}) {}
