/**
 * The monitor's audit events, shaped as the reference storage API's `EffectivenessAssessmentAuditPayload` and read by
 * storage's effectiveness, success-rate and remediation-history endpoints: one event per component
 * (`effectiveness.health.assessed` with `health_checks`, `effectiveness.alert.assessed` with `alert_resolution`,
 * `effectiveness.metrics.assessed`, `effectiveness.hash.computed` with the pre/post hashes), plus
 * `effectiveness.assessment.scheduled`, `effectiveness.alert_decay.detected` and `effectiveness.assessment.completed`
 * (with `reason`). The correlation id is the RR's name, so they join its trail.
 */
import type { EffectivenessAssessment } from "@kubemend/core/domain/EffectivenessAssessment"
import type { LifecycleAuditShape } from "../remediation/LifecycleAudit.ts"

export type EffectivenessEventType =
  | "effectiveness.assessment.scheduled"
  | "effectiveness.health.assessed"
  | "effectiveness.alert.assessed"
  | "effectiveness.alert_decay.detected"
  | "effectiveness.metrics.assessed"
  | "effectiveness.hash.computed"
  | "effectiveness.assessment.completed"

const componentOf: Record<EffectivenessEventType, string> = {
  "effectiveness.assessment.scheduled": "scheduled",
  "effectiveness.health.assessed": "health",
  "effectiveness.alert.assessed": "alert",
  "effectiveness.alert_decay.detected": "alert_decay",
  "effectiveness.metrics.assessed": "metrics",
  "effectiveness.hash.computed": "hash",
  "effectiveness.assessment.completed": "completed"
}

export const emitEffectiveness = (
  audit: LifecycleAuditShape,
  ea: EffectivenessAssessment,
  namespace: string,
  type: EffectivenessEventType,
  data: Readonly<Record<string, unknown>>
) =>
  audit.emit({
    type,
    category: "effectiveness",
    correlationId: ea.spec.correlationID,
    namespace,
    actor: { type: "service", id: "effectivenessmonitor" },
    resource: { type: "EffectivenessAssessment", id: ea.metadata.name },
    data: { correlation_id: ea.spec.correlationID, namespace, ea_name: ea.metadata.name, component: componentOf[type], ...data }
  })
