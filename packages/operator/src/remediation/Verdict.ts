/**
 * What a finished assessment says about the remediation, and the RR outcome it sets (reference RR CRD):
 * - `effective`: every assessed component passed (health at the healthy threshold, the alert resolved, metrics not
 *   worse) -> `Remediated`;
 * - `ineffective`: the target is still unhealthy, the alert kept firing (`AlertDecayTimeout`) or metrics got
 *   worse -> `Inconclusive`, or `ManualReviewRequired` when it completes an ineffective chain on its fingerprint;
 * - `undetermined`: the target changed under the assessment (`SpecDrift`) or is gone (`Unrecoverable`), or nothing
 *   could be assessed -> `Inconclusive`; it neither counts for nor breaks an ineffective chain;
 * - `expired`: the validity deadline passed before every component was assessed (and none had failed) ->
 *   `VerificationTimedOut`.
 */
import type { AssessmentComponents, EffectivenessAssessmentStatus } from "@kubemend/core/domain/EffectivenessAssessment"

export type Verdict = "effective" | "ineffective" | "undetermined" | "expired"

/** Score at or above which the metrics comparison counts as "not worse". */
export const metricsPass = 0.5

export const failedComponents = (c: AssessmentComponents, healthyThreshold: number): ReadonlyArray<string> => [
  ...(c.healthAssessed === true && (c.healthScore ?? 0) < healthyThreshold ? ["health"] : []),
  ...(c.alertAssessed === true && (c.alertScore ?? 0) < 1 ? ["alert"] : []),
  ...(c.metricsAssessed === true && (c.metricsScore ?? 0) < metricsPass ? ["metrics"] : [])
]

export const verdictOf = (status: EffectivenessAssessmentStatus | undefined, healthyThreshold: number): Verdict | undefined => {
  if (status?.phase !== "Completed" && status?.phase !== "Failed") return undefined
  const reason = status.assessmentReason
  if (reason === "SpecDrift" || reason === "Unrecoverable" || status.phase === "Failed") return "undetermined"
  const c = status.components ?? {}
  if (failedComponents(c, healthyThreshold).length > 0 || reason === "AlertDecayTimeout") return "ineffective"
  // Expired with nothing failed: what passed is not the whole picture, so it is not called effective.
  if (reason === "Expired") return "expired"
  const assessed = c.healthAssessed === true || c.alertAssessed === true || c.metricsAssessed === true
  return assessed ? "effective" : "undetermined"
}

/** Weighted score as storage computes it (health 0.40, alert 0.35, metrics 0.25 over the assessed ones). */
export const scoreOf = (c: AssessmentComponents, reason: string | undefined): number | null => {
  if (reason === "SpecDrift") return 0
  const parts: Array<readonly [number | undefined, boolean | undefined, number]> = [
    [c.healthScore, c.healthAssessed, 0.4],
    [c.alertScore, c.alertAssessed, 0.35],
    [c.metricsScore, c.metricsAssessed, 0.25]
  ]
  let weighted = 0
  let weight = 0
  for (const [score, assessed, w] of parts) {
    if (assessed === true && score !== undefined) {
      weighted += score * w
      weight += w
    }
  }
  return weight === 0 ? null : Math.round((weighted / weight) * 10000) / 10000
}
