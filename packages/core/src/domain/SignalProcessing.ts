/**
 * SignalProcessing, `{api_group}/v1alpha1`, named `sp-<rrName>`: the orchestrator's record of the signal it is
 * processing. The signal-processing controller enriches it from the cluster (namespace, workload, owner chain,
 * detected labels) and classifies it with policy.rego (environment, priority, criticality, actionable); the
 * orchestrator hands `status.enrichmentResults` and the classification to the analysis
 * (`analysisRequest.signalContext`); the terminal cascade patches `status.phase` to `Failed`. No reference CRD
 * exists; `enrichmentResults` has the shape of the AIAnalysis' `signalContext.enrichmentResults`.
 */
import { Schema } from "effect"
import { Enum, Loose, NonEmpty, optional, StringMap } from "./Common.ts"
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
    labels: optional(StringMap),
    annotations: optional(StringMap)
  })
})

export const SignalProcessingStatus = Schema.Struct({
  phase: optional(SignalProcessingPhase),
  /** Classification the analysis passes on to the agent. */
  environment: optional(Schema.String),
  priority: optional(Schema.String),
  severity: optional(Schema.String),
  /** Business criticality: Critical, High, Medium or Low. */
  criticality: optional(Schema.String),
  /** False: the policy says there is nothing to remediate (the request completes with NoActionRequired). */
  actionable: optional(Schema.Boolean),
  signalMode: optional(Enum("reactive", "proactive")),
  /** `kubernetesContext` (namespace, workload, ownerChain, degradedMode), `detectedLabels`, `businessClassification`. */
  enrichmentResults: optional(Loose),
  /** Set when the policy engine could not classify and the built-in rule did. */
  policyDegraded: optional(Schema.Boolean),
  startTime: optional(Schema.String),
  completedAt: optional(Schema.String),
  message: optional(Schema.String),
  conditions: optional(Schema.Array(Condition))
})

/** The resource (`SignalProcessing` alone names the platform CR's `signalProcessing` block). */
export const SignalProcessingResource = resource(SignalProcessingKind, SignalProcessingSpec, SignalProcessingStatus)
export interface SignalProcessingResource extends Schema.Schema.Type<typeof SignalProcessingResource> {}
