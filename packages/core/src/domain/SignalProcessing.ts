/**
 * SignalProcessing, `{api_group}/v1alpha1`, named `sp-<rrName>`: the orchestrator's record of the signal it is
 * processing (enrichment and classification). The analysis reads `status.environment` and `status.priority` when it
 * builds the agent's request; the terminal cascade patches `status.phase` to `Failed`. No reference CRD exists; the
 * fields are the ones the lifecycle controllers write.
 */
import { Schema } from "effect"
import { Enum, NonEmpty, optional, StringMap } from "./Common.ts"
import { Condition, ObjectReference, resource, TargetResource } from "./Meta.ts"

export const SignalProcessingKind = "SignalProcessing"
export const SignalProcessingPlural = "signalprocessings"

export const SignalProcessingPhase = Enum("Pending", "Enriching", "Classifying", "Categorizing", "Completed", "Failed")
export type SignalProcessingPhase = typeof SignalProcessingPhase.Type

export const SignalProcessingSpec = Schema.Struct({
  remediationRequestRef: ObjectReference,
  signal: Schema.Struct({
    name: NonEmpty,
    fingerprint: NonEmpty,
    severity: Schema.String,
    targetResource: TargetResource,
    labels: optional(StringMap)
  })
})

export const SignalProcessingStatus = Schema.Struct({
  phase: optional(SignalProcessingPhase),
  /** Classification the analysis passes on to the agent. */
  environment: optional(Schema.String),
  priority: optional(Schema.String),
  severity: optional(Schema.String),
  completedAt: optional(Schema.String),
  message: optional(Schema.String),
  conditions: optional(Schema.Array(Condition))
})

/** The resource (`SignalProcessing` alone names the platform CR's `signalProcessing` block). */
export const SignalProcessingResource = resource(SignalProcessingKind, SignalProcessingSpec, SignalProcessingStatus)
export interface SignalProcessingResource extends Schema.Schema.Type<typeof SignalProcessingResource> {}
