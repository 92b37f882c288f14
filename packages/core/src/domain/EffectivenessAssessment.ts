/**
 * EffectivenessAssessment, `{api_group}/v1alpha1`, named `ea-<rrName>`: created by the orchestrator when the workflow
 * has run (RR `Verifying`); after the stabilization window it records whether the remediation was effective and the
 * RR completes. The phase values follow the reference CRD; the other fields are the ones the orchestrator writes.
 */
import { Schema } from "effect"
import { Enum, GoDurationString, optional } from "./Common.ts"
import { Condition, LocalRef, ObjectReference, resource, TargetResource } from "./Meta.ts"

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

export const EffectivenessAssessmentSpec = Schema.Struct({
  remediationRequestRef: ObjectReference,
  workflowExecutionRef: optional(LocalRef),
  /** The resource the workflow changed. */
  targetResource: TargetResource,
  /** Wait after the workflow before assessing (Go duration). */
  stabilizationWindow: GoDurationString
})

export const EffectivenessAssessmentStatus = Schema.Struct({
  phase: optional(EffectivenessAssessmentPhase),
  /** When the stabilization window ends (RFC 3339). */
  assessAfter: optional(Schema.String),
  effective: optional(Schema.Boolean),
  reason: optional(Schema.String),
  assessedAt: optional(Schema.String),
  completedAt: optional(Schema.String),
  message: optional(Schema.String),
  conditions: optional(Schema.Array(Condition))
})

export const EffectivenessAssessment = resource(
  EffectivenessAssessmentKind,
  EffectivenessAssessmentSpec,
  EffectivenessAssessmentStatus
)
export interface EffectivenessAssessment extends Schema.Schema.Type<typeof EffectivenessAssessment> {}
