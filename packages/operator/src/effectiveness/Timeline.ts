/**
 * When each part of an assessment may happen, from the EA's creation (the reference CRD's status fields):
 * - `hashComputeAfter` = creation + hashComputeDelay (GitOps or an operator changes the target after the workflow);
 * - `prometheusCheckAfter` = creation + stabilizationWindow (health and metrics);
 * - `alertManagerCheckAfter` = that + alertCheckDelay (a proactive alert resolves late);
 * - `validityDeadline` = creation + validityWindow. A validity window that would end before the alert may even be
 *   checked is stretched to a full window after that check, so a short monitor window never expires every
 *   assessment unseen.
 */
import { parseGoDuration } from "@kubemend/core/Config"
import type { EffectivenessAssessmentSpec } from "@kubemend/core/domain/EffectivenessAssessment"
import { Duration, Option } from "effect"

export interface Timeline {
  readonly hashComputeAfter: number
  readonly prometheusCheckAfter: number
  readonly alertManagerCheckAfter: number
  readonly validityDeadline: number
}

const millis = (text: string | undefined, fallback: Duration.Duration) =>
  Duration.toMillis(text === undefined ? fallback : Option.getOrElse(parseGoDuration(text), () => fallback))

export const timelineOf = (
  spec: EffectivenessAssessmentSpec,
  createdAt: number,
  settings: { readonly validityWindow: Duration.Duration; readonly stabilizationWindow: Duration.Duration }
): Timeline => {
  const stabilization = millis(spec.config.stabilizationWindow, settings.stabilizationWindow)
  const prometheusCheckAfter = createdAt + stabilization
  const alertManagerCheckAfter = prometheusCheckAfter + millis(spec.config.alertCheckDelay, Duration.zero)
  const validity = Duration.toMillis(settings.validityWindow)
  const validityDeadline = createdAt + validity > alertManagerCheckAfter ? createdAt + validity : alertManagerCheckAfter + validity
  return {
    hashComputeAfter: createdAt + millis(spec.config.hashComputeDelay, Duration.zero),
    prometheusCheckAfter,
    alertManagerCheckAfter,
    validityDeadline
  }
}
