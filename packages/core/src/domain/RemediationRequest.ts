/**
 * RemediationRequest (RR), `{api_group}/v1alpha1`. Field names follow the original CRD; the phase list follows the
 * spec. Only what identifies the remediation is required in `spec` (target, fingerprint, signal name); every status
 * field is optional, and fields not named here are ignored on decode.
 */
import { Schema } from "effect"
import { Int, optional, StringMap } from "./Common.ts"
import { ObjectReference, resource, TargetResource, Condition } from "./Meta.ts"
import { BlockReason, RROutcome, RRPhaseInput } from "./Phases.ts"
import { SeverityLenient } from "./Severity.ts"

export const RRKind = "RemediationRequest"
export const RRPlural = "remediationrequests"

/** Source system of the signal's target. */
export const TargetType = Schema.Literal("kubernetes", "aws", "azure", "gcp", "datadog")

/** The signal fingerprint: SHA-256 hex of the signal identity (what creators must write). */
export const SignalFingerprint = Schema.String.pipe(
  Schema.pattern(/^[a-f0-9]{64}$/, { message: () => "must be 64 lower-case hex characters (SHA-256)" })
)

export const RemediationRequestSpec = Schema.Struct({
  signalName: Schema.String,
  /** Read leniently: a fingerprint written by another producer is not re-validated on read. */
  signalFingerprint: Schema.String,
  severity: optional(SeverityLenient),
  signalType: optional(Schema.String),
  signalSource: optional(Schema.String),
  targetType: optional(Schema.String),
  targetResource: TargetResource,
  firingTime: optional(Schema.String),
  receivedTime: optional(Schema.String),
  signalLabels: optional(StringMap),
  signalAnnotations: optional(StringMap),
  providerData: optional(Schema.String),
  originalPayload: optional(Schema.String),
  /** Free-text description given when an RR is created through the gateway (`svc_remediate`). */
  description: optional(Schema.String)
})
export interface RemediationRequestSpec extends Schema.Schema.Type<typeof RemediationRequestSpec> {}

export const Deduplication = Schema.Struct({
  firstSeenAt: optional(Schema.String),
  lastSeenAt: optional(Schema.String),
  occurrenceCount: optional(Int)
})

/** The workflow the analysis selected (`status.selectedWorkflowRef` in the original). */
export const SelectedWorkflowRef = Schema.Struct({
  workflowId: Schema.String,
  version: optional(Schema.String),
  executionBundle: optional(Schema.String),
  executionBundleDigest: optional(Schema.String),
  workflowName: optional(Schema.String)
})

export const RRTimeoutConfig = Schema.Struct({
  global: optional(Schema.String),
  processing: optional(Schema.String),
  analyzing: optional(Schema.String),
  executing: optional(Schema.String),
  awaitingApproval: optional(Schema.String),
  verifying: optional(Schema.String)
})

export const RemediationRequestStatus = Schema.Struct({
  overallPhase: optional(RRPhaseInput),
  message: optional(Schema.String),
  outcome: optional(RROutcome),
  startTime: optional(Schema.String),
  completedAt: optional(Schema.String),
  processingStartTime: optional(Schema.String),
  analyzingStartTime: optional(Schema.String),
  executingStartTime: optional(Schema.String),
  blockReason: optional(BlockReason),
  blockMessage: optional(Schema.String),
  blockedUntil: optional(Schema.String),
  consecutiveFailureCount: optional(Int),
  duplicateOf: optional(Schema.String),
  duplicateCount: optional(Int),
  deduplication: optional(Deduplication),
  skipReason: optional(Schema.String),
  skipMessage: optional(Schema.String),
  failurePhase: optional(Schema.String),
  failureReason: optional(Schema.String),
  timeoutPhase: optional(RRPhaseInput),
  timeoutTime: optional(Schema.String),
  timeoutConfig: optional(RRTimeoutConfig),
  requiresManualReview: optional(Schema.Boolean),
  selectedWorkflowRef: optional(SelectedWorkflowRef),
  signalProcessingRef: optional(ObjectReference),
  aiAnalysisRef: optional(ObjectReference),
  workflowExecutionRef: optional(ObjectReference),
  effectivenessAssessmentRef: optional(ObjectReference),
  notificationRequestRefs: optional(Schema.Array(ObjectReference)),
  remediationTarget: optional(TargetResource),
  verificationDeadline: optional(Schema.String),
  preRemediationSpecHash: optional(Schema.String),
  nextAllowedExecution: optional(Schema.String),
  retentionExpiryTime: optional(Schema.String),
  lastModifiedAt: optional(Schema.String),
  lastModifiedBy: optional(Schema.String),
  observedGeneration: optional(Int),
  conditions: optional(Schema.Array(Condition))
})
export interface RemediationRequestStatus extends Schema.Schema.Type<typeof RemediationRequestStatus> {}

export const RemediationRequest = resource(RRKind, RemediationRequestSpec, RemediationRequestStatus)
export interface RemediationRequest extends Schema.Schema.Type<typeof RemediationRequest> {}
export interface RemediationRequestEncoded extends Schema.Schema.Encoded<typeof RemediationRequest> {}
