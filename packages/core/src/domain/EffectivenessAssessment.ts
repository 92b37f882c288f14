/**
 * EffectivenessAssessment, `{api_group}/v1alpha1`, named `ea-<rrName>`: created by the orchestrator when the workflow
 * has run (RR `Verifying`), assessed by the effectiveness monitor from the world (the target's pods, the triggering
 * alert, before/after metrics, the target's spec hash), then read back by the orchestrator for the RR's outcome.
 * Fields follow the reference CRD; the spec is written once by the orchestrator, the status by the monitor.
 */
import { Schema } from "effect"
import { Enum, GoDurationString, Int, optional } from "./Common.ts"
import { Condition, TargetResource } from "./Meta.ts"
import { resource } from "./Meta.ts"

export const EffectivenessAssessmentKind = "EffectivenessAssessment"
export const EffectivenessAssessmentPlural = "effectivenessassessments"

export const EffectivenessAssessmentPhase = Enum(
  "Pending",
  "WaitingForPropagation",
  "Stabilizing",
  "Assessing",
  "Completed",
  "Failed"
)
export type EffectivenessAssessmentPhase = typeof EffectivenessAssessmentPhase.Type

export const AssessmentReason = Enum(
  "Full",
  "Partial",
  "NoExecution",
  "MetricsTimedOut",
  "Expired",
  "SpecDrift",
  "AlertDecayTimeout",
  "Unrecoverable"
)
export type AssessmentReason = typeof AssessmentReason.Type

export const EffectivenessAssessmentConfig = Schema.Struct({
  /** Wait after the remediation before assessing (Go duration). */
  stabilizationWindow: GoDurationString,
  /** Extra wait before the alert is checked (proactive alerts resolve late). */
  alertCheckDelay: optional(GoDurationString),
  /** Wait before the post-remediation hash is taken (GitOps or operator-managed targets change late). */
  hashComputeDelay: optional(GoDurationString)
})

export const EffectivenessAssessmentSpec = Schema.Struct({
  /** The RR's name; the correlation id of the assessment's audit events. */
  correlationID: Schema.String,
  remediationRequestPhase: Enum("Verifying", "Completed", "Failed", "TimedOut"),
  /** The resource that raised the signal: health, alert and metrics are read for it. */
  signalTarget: TargetResource,
  /** The resource the workflow changed: its spec hash is compared. */
  remediationTarget: TargetResource,
  config: EffectivenessAssessmentConfig,
  preRemediationSpecHash: optional(Schema.String),
  remediationCreatedAt: optional(Schema.String),
  signalName: optional(Schema.String)
})
export interface EffectivenessAssessmentSpec extends Schema.Schema.Type<typeof EffectivenessAssessmentSpec> {}

export const AssessmentComponents = Schema.Struct({
  healthAssessed: optional(Schema.Boolean),
  healthScore: optional(Schema.Number),
  alertAssessed: optional(Schema.Boolean),
  alertScore: optional(Schema.Number),
  /** Rechecks of an alert still firing while the target was healthy (the alert decays after the fix). */
  alertDecayRetries: optional(Int),
  metricsAssessed: optional(Schema.Boolean),
  metricsScore: optional(Schema.Number),
  hashComputed: optional(Schema.Boolean),
  postRemediationSpecHash: optional(Schema.String),
  currentSpecHash: optional(Schema.String)
})
export interface AssessmentComponents extends Schema.Schema.Type<typeof AssessmentComponents> {}

export const EffectivenessAssessmentStatus = Schema.Struct({
  phase: optional(EffectivenessAssessmentPhase),
  assessmentReason: optional(AssessmentReason),
  components: optional(AssessmentComponents),
  /** Earliest metrics query: creation + stabilizationWindow (RFC 3339). */
  prometheusCheckAfter: optional(Schema.String),
  /** Earliest alert check: creation + stabilizationWindow + alertCheckDelay. */
  alertManagerCheckAfter: optional(Schema.String),
  /** Earliest post-remediation hash: creation + hashComputeDelay. */
  hashComputeAfter: optional(Schema.String),
  /** After it the assessment expires with what it has. */
  validityDeadline: optional(Schema.String),
  completedAt: optional(Schema.String),
  message: optional(Schema.String),
  conditions: optional(Schema.Array(Condition))
})
export interface EffectivenessAssessmentStatus extends Schema.Schema.Type<typeof EffectivenessAssessmentStatus> {}

export const EffectivenessAssessment = resource(
  EffectivenessAssessmentKind,
  EffectivenessAssessmentSpec,
  EffectivenessAssessmentStatus
)
export interface EffectivenessAssessment extends Schema.Schema.Type<typeof EffectivenessAssessment> {}
