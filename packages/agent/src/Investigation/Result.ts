/**
 * Builders of the IncidentResponse: the spec's key fields (`root_cause`, `investigation_outcome`, `actionable`) next
 * to the original's (`analysis`, `root_cause_analysis`, `is_actionable`, `needs_human_review` …).
 */
import type { IncidentRequest, IncidentResponse } from "@kubemend/core/domain/Incident"
import type { HumanReviewReason } from "@kubemend/core/domain/AIAnalysis"

type Mutable<T> = { -readonly [K in keyof T]: T[K] }
export type ResponseDraft = Mutable<IncidentResponse>

/** A failed run still answers `/result` (the original returns the result of a completed or failed session). */
export const failedResponse = (request: IncidentRequest, reason: string, at: Date): IncidentResponse => ({
  incident_id: request.incident_id,
  analysis: `Investigation failed: ${reason}`,
  root_cause_analysis: { summary: `Investigation failed: ${reason}`, contributing_factors: [] },
  root_cause: "",
  confidence: 0,
  timestamp: at.toISOString(),
  investigation_outcome: "failed",
  actionable: false,
  is_actionable: null,
  selected_workflow: null,
  needs_human_review: true,
  human_review_reason: "investigation_inconclusive",
  warnings: [reason],
  alternative_workflows: [],
  validation_attempts_history: [],
  detected_labels: null,
  alignment_verdict: null
})

/** A run that stopped for a human: what was learned so far, flagged for review with a structured reason. */
export const humanReviewResponse = (
  request: IncidentRequest,
  reason: HumanReviewReason,
  summary: string,
  warnings: ReadonlyArray<string>,
  at: Date
): ResponseDraft => ({
  incident_id: request.incident_id,
  analysis: summary,
  root_cause_analysis: { summary, contributing_factors: [] },
  root_cause: summary,
  confidence: 0,
  timestamp: at.toISOString(),
  investigation_outcome: "needs_human_review",
  actionable: false,
  is_actionable: null,
  selected_workflow: null,
  needs_human_review: true,
  human_review_reason: reason,
  warnings: [...warnings],
  alternative_workflows: [],
  validation_attempts_history: [],
  detected_labels: null,
  alignment_verdict: null
})
