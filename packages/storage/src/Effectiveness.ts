/**
 * Effectiveness from the Effectiveness Monitor's component events (original: DD-017 v2.1):
 * score = (health × 0.40 + alert × 0.35 + metrics × 0.25) / (weights of the components that have a score);
 * `SpecDrift` forces 0.0 (the target changed during the assessment, so the score says nothing).
 */
import type { AuditEvent } from "@kubemend/core/domain/Audit"
import type { EffectivenessScoreResponse } from "@kubemend/core/StorageApi"

const weights = { health: 0.4, alert: 0.35, metrics: 0.25 } as const
type Component = keyof typeof weights

const componentOf: Record<string, Component> = {
  "effectiveness.health.assessed": "health",
  "effectiveness.alert.assessed": "alert",
  "effectiveness.metrics.assessed": "metrics"
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null)

export const isEffectivenessEvent = (e: AuditEvent) => e.event_type.startsWith("effectiveness.")

/** The score of one remediation from its events (any order; the last event of each component wins). */
export const scoreOf = (correlationId: string, events: ReadonlyArray<AuditEvent>, now: Date): EffectivenessScoreResponse => {
  const last = new Map<string, AuditEvent>()
  for (const e of events) if (isEffectivenessEvent(e)) last.set(e.event_type, e)
  const component = (c: Component) => {
    const e = [...last.values()].find((x) => componentOf[x.event_type] === c)
    const score = e === undefined ? null : num(e.event_data["score"])
    const assessed = e !== undefined && (e.event_data["assessed"] === true || (e.event_data["assessed"] === undefined && score !== null))
    const details = e !== undefined && typeof e.event_data["details"] === "string" ? e.event_data["details"] : undefined
    return { assessed, score: assessed ? score : null, details }
  }
  const parts = { health: component("health"), alert: component("alert"), metrics: component("metrics") }
  let weighted = 0
  let weight = 0
  for (const c of Object.keys(weights) as Array<Component>) {
    const s = parts[c].score
    if (s !== null) {
      weighted += s * weights[c]
      weight += weights[c]
    }
  }
  const completed = last.get("effectiveness.assessment.completed")
  const reason = completed === undefined ? undefined : typeof completed.event_data["reason"] === "string" ? completed.event_data["reason"] : "Full"
  const hash = last.get("effectiveness.hash.computed")?.event_data
  const score = reason === "SpecDrift" ? 0 : weight === 0 ? null : Math.round((weighted / weight) * 10000) / 10000
  return {
    correlation_id: correlationId,
    score,
    components: {
      health_assessed: parts.health.assessed,
      health_score: parts.health.score,
      ...(parts.health.details === undefined ? {} : { health_details: parts.health.details }),
      alert_assessed: parts.alert.assessed,
      alert_score: parts.alert.score,
      ...(parts.alert.details === undefined ? {} : { alert_details: parts.alert.details }),
      metrics_assessed: parts.metrics.assessed,
      metrics_score: parts.metrics.score,
      ...(parts.metrics.details === undefined ? {} : { metrics_details: parts.metrics.details })
    },
    ...(hash === undefined
      ? {}
      : {
        hash_comparison: {
          ...(typeof hash["pre_remediation_spec_hash"] === "string" ? { pre_remediation_spec_hash: hash["pre_remediation_spec_hash"] } : {}),
          ...(typeof hash["post_remediation_spec_hash"] === "string" ? { post_remediation_spec_hash: hash["post_remediation_spec_hash"] } : {}),
          hash_match: typeof hash["hash_match"] === "boolean" ? hash["hash_match"] : null
        }
      }),
    assessment_status: reason ?? (last.size === 0 ? "no_data" : "in_progress"),
    computed_at: now.toISOString()
  }
}

/** Whether the alert that triggered the remediation resolved, when the monitor said so. */
export const signalResolved = (events: ReadonlyArray<AuditEvent>): boolean | null => {
  const alert = [...events].reverse().find((e) => e.event_type === "effectiveness.alert.assessed")
  if (alert === undefined) return null
  const resolution = alert.event_data["alert_resolution"]
  if (typeof resolution === "object" && resolution !== null && "alert_resolved" in resolution) {
    const r = (resolution as Record<string, unknown>)["alert_resolved"]
    if (typeof r === "boolean") return r
  }
  const s = num(alert.event_data["score"])
  return s === null ? null : s >= 1
}
