/**
 * One assessment step per component. Each answers the status fields it decided and the audit events to emit once
 * those fields are written (so a failed write followed by a retry does not emit twice). A component that cannot be
 * assessed for good (a kind without pods, a signal without an alert, no metric samples) is written as assessed
 * `false` with its reason in the event, which the verdict and storage's score skip.
 */
import type { AssessmentComponents, EffectivenessAssessment } from "@kubemend/core/domain/EffectivenessAssessment"
import type { K8sService } from "@kubemend/core/K8s"
import { Effect, Option } from "effect"
import type { AlertCheckShape, AlertQuery } from "./AlertCheck.ts"
import type { EffectivenessEventType } from "./EffectivenessAudit.ts"
import type { EffectivenessMetrics } from "./EffectivenessMetrics.ts"
import { assessHealth } from "./Health.ts"
import type { MetricsCheckShape, MetricsQuery } from "./MetricsCheck.ts"
import { metricsPass } from "../remediation/Verdict.ts"

export interface Event {
  readonly type: EffectivenessEventType
  readonly data: Readonly<Record<string, unknown>>
}

export interface Step {
  readonly components: Partial<AssessmentComponents>
  readonly events: ReadonlyArray<Event>
}

export const nothing: Step = { components: {}, events: [] }

export const healthStep = (k8s: K8sService, metrics: EffectivenessMetrics, ea: EffectivenessAssessment, since: number, healthyThreshold: number) =>
  Effect.gen(function* () {
    const health = yield* assessHealth(k8s, ea.spec.signalTarget, ea.spec.remediationTarget, since)
    if (Option.isNone(health)) {
      yield* metrics.component("health", "unassessed")
      return {
        components: { healthAssessed: false },
        events: [{
          type: "effectiveness.health.assessed",
          data: { assessed: false, score: null, details: `${ea.spec.signalTarget.kind} has no pods or Ready condition to read` }
        }]
      } satisfies Step
    }
    const h = health.value
    yield* metrics.component("health", h.score >= healthyThreshold ? "success" : "failure", h.score)
    return {
      components: { healthAssessed: true, healthScore: h.score },
      events: [{ type: "effectiveness.health.assessed", data: { assessed: true, score: h.score, details: h.details, health_checks: h.checks } }]
    } satisfies Step
  })

/** The alert's step; a decaying alert only counts a retry (the reconciler derives the next check from the count). */
type AlertOutcome = Step

export const alertStep = (
  alerts: AlertCheckShape,
  metrics: EffectivenessMetrics,
  query: AlertQuery,
  current: AssessmentComponents,
  healthy: boolean,
  now: number
) =>
  Effect.gen(function* () {
    const state = yield* alerts.check(query)
    const done = (score: number | null, details: string, resolution: Record<string, unknown>): AlertOutcome => ({
      components: score === null ? { alertAssessed: false } : { alertAssessed: true, alertScore: score },
      events: [{ type: "effectiveness.alert.assessed", data: { assessed: score !== null, score, details, alert_resolution: resolution } }]
    })
    switch (state._tag) {
      case "NotApplicable":
        yield* metrics.component("alert", "unassessed")
        return done(null, state.details, {})
      case "Unavailable":
        return nothing
      case "Resolved":
        yield* metrics.component("alert", "success", 1)
        return done(1, state.details, {
          alert_resolved: true,
          active_count: 0,
          resolution_time_seconds: Math.max(0, Math.round((now - query.since) / 1000))
        })
      case "Firing": {
        if (healthy) {
          // The target recovered but the alert's lookback window still sees the old samples: wait for it to decay.
          const retries = (current.alertDecayRetries ?? 0) + 1
          return {
            components: { alertDecayRetries: retries },
            events: retries === 1
              ? [{ type: "effectiveness.alert_decay.detected", data: { assessed: false, details: `${state.details} while the target is healthy; rechecking` } }]
              : []
          } satisfies AlertOutcome
        }
        yield* metrics.component("alert", "failure", 0)
        return done(0, state.details, { alert_resolved: false, active_count: state.activeCount, resolution_time_seconds: null })
      }
    }
  })

/** The alert decayed too slowly: the validity deadline came with the alert still firing. */
export const alertDecayTimeout = (metrics: EffectivenessMetrics, current: AssessmentComponents) =>
  Effect.as(
    metrics.component("alert", "failure", 0),
    {
      components: { alertAssessed: true, alertScore: 0 },
      events: [{
        type: "effectiveness.alert.assessed",
        data: {
          assessed: true,
          score: 0,
          details: `the alert was still firing after ${current.alertDecayRetries ?? 0} rechecks`,
          alert_resolution: { alert_resolved: false, active_count: 1, resolution_time_seconds: null }
        }
      }]
    } satisfies Step
  )

/** The before/after comparison of the target's workload metrics; one that cannot be made is not assessed, with why. */
export const metricsStep = (check: MetricsCheckShape, metrics: EffectivenessMetrics, query: MetricsQuery) =>
  Effect.gen(function* () {
    const state = yield* check.compare(query)
    if (state._tag === "NotAssessed") {
      yield* metrics.component("metrics", "unassessed")
      return {
        components: { metricsAssessed: false },
        events: [{ type: "effectiveness.metrics.assessed", data: { assessed: false, score: null, details: state.details } }]
      } satisfies Step
    }
    yield* metrics.component("metrics", state.score >= metricsPass ? "success" : "failure", state.score)
    return {
      components: { metricsAssessed: true, metricsScore: state.score },
      events: [{ type: "effectiveness.metrics.assessed", data: { assessed: true, score: state.score, details: state.details, metric_deltas: state.deltas } }]
    } satisfies Step
  })
