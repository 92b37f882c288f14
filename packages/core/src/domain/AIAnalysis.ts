/**
 * AIAnalysis, `{api_group}/v1alpha1`: the analysis child of an RR. The gateway reads `status.phase`,
 * `status.investigationSession.id`, `status.selectedWorkflow`, `status.humanReviewReason` and
 * `status.rootCauseAnalysis`; the controllers write the rest.
 */
import { Schema } from "effect"
import { Enum, Int, Loose, optional, StringMap } from "./Common.ts"
import { Condition, ObjectReference, resource, TargetResource } from "./Meta.ts"
import { SeverityLenient } from "./Severity.ts"

export const AIAnalysisKind = "AIAnalysis"
export const AIAnalysisPlural = "aianalyses"

export const AIAnalysisPhase = Enum("Pending", "Investigating", "Analyzing", "Completed", "Failed")
export type AIAnalysisPhase = typeof AIAnalysisPhase.Type

export const HumanReviewReasonValues = [
  "workflow_not_found",
  "image_mismatch",
  "parameter_validation_failed",
  "no_matching_workflows",
  "low_confidence",
  "llm_parsing_error",
  "investigation_inconclusive",
  "rca_incomplete",
  "alignment_check_failed",
  "operator_escalation",
  "decision_expired"
] as const

/** Why an analysis needs a human (`status.humanReviewReason`, agent `human_review_reason`). */
export const HumanReviewReason = Enum(...HumanReviewReasonValues)
export type HumanReviewReason = typeof HumanReviewReason.Type

export const SubReasonValues = [
  "WorkflowNotFound",
  "ImageMismatch",
  "ParameterValidationFailed",
  "NoMatchingWorkflows",
  "LowConfidence",
  "LLMParsingError",
  "ValidationError",
  "TransientError",
  "PermanentError",
  "InvestigationInconclusive",
  "ProblemResolved",
  "NotActionable",
  "MaxRetriesExceeded",
  "SessionRegenerationExceeded",
  "RcaIncomplete",
  "InvestigationFailed",
  "OperatorEscalation",
  "DecisionExpired"
] as const

/** Finer classification next to the reason (`status.subReason`, metric label `sub_reason`). */
export const SubReason = Enum(...SubReasonValues)
export type SubReason = typeof SubReason.Type

/** `status.reason` of an AIAnalysis; `InteractiveCancelled` / `ParentCancelled` came with interactive sessions. */
export const AIAnalysisReason = Enum(
  "AnalysisCompleted",
  "WorkflowResolutionFailed",
  "WorkflowNotNeeded",
  "NoWorkflowSelected",
  "RegoEvaluationError",
  "TransientError",
  "APIError",
  "InteractiveCancelled",
  "ParentCancelled"
)
export type AIAnalysisReason = typeof AIAnalysisReason.Type

export const SignalContext = Schema.Struct({
  fingerprint: optional(Schema.String),
  severity: optional(SeverityLenient),
  signalName: optional(Schema.String),
  signalMode: optional(Enum("reactive", "proactive")),
  environment: optional(Schema.String),
  businessPriority: optional(Schema.String),
  targetResource: optional(TargetResource),
  enrichmentResults: optional(Loose),
  signalAnnotations: optional(StringMap)
})

export const AIAnalysisSpec = Schema.Struct({
  remediationRequestRef: ObjectReference,
  remediationId: optional(Schema.String),
  analysisRequest: optional(
    Schema.Struct({
      signalContext: optional(SignalContext),
      analysisTypes: optional(Schema.Array(Schema.String))
    })
  ),
  timeoutConfig: optional(
    Schema.Struct({ analyzingTimeout: optional(Schema.String), investigatingTimeout: optional(Schema.String) })
  )
})
export interface AIAnalysisSpec extends Schema.Schema.Type<typeof AIAnalysisSpec> {}

/** The agent session backing the analysis; a non-empty `id` is what `svc_await_session` waits for. */
export const InvestigationSessionRef = Schema.Struct({
  id: optional(Schema.String),
  generation: optional(Int),
  interactive: optional(Schema.Boolean),
  createdAt: optional(Schema.String),
  lastPolled: optional(Schema.String),
  pollCount: optional(Int),
  backoffUntil: optional(Schema.String),
  consecutiveGetResultErrors: optional(Int)
})

export const SelectedWorkflow = Schema.Struct({
  workflowId: Schema.String,
  version: optional(Schema.String),
  workflowName: optional(Schema.String),
  actionType: optional(Schema.String),
  executionBundle: optional(Schema.String),
  executionBundleDigest: optional(Schema.String),
  executionEngine: optional(Schema.String),
  serviceAccountName: optional(Schema.String),
  confidence: optional(Schema.Number),
  rationale: optional(Schema.String),
  parameters: optional(Loose),
  engineConfig: optional(Loose)
})
export interface SelectedWorkflow extends Schema.Schema.Type<typeof SelectedWorkflow> {}

export const RootCauseAnalysis = Schema.Struct({
  summary: optional(Schema.String),
  severity: optional(SeverityLenient),
  signalType: optional(Schema.String),
  contributingFactors: optional(Schema.Array(Schema.String)),
  remediationTarget: optional(TargetResource)
})

export const AlternativeWorkflowStatus = Schema.Struct({
  workflowId: Schema.String,
  executionBundle: optional(Schema.String),
  confidence: optional(Schema.Number),
  rationale: optional(Schema.String)
})

export const AIAnalysisStatus = Schema.Struct({
  phase: optional(AIAnalysisPhase),
  reason: optional(AIAnalysisReason),
  subReason: optional(SubReason),
  message: optional(Schema.String),
  investigationSession: optional(InvestigationSessionRef),
  investigationId: optional(Schema.String),
  selectedWorkflow: optional(SelectedWorkflow),
  alternativeWorkflows: optional(Schema.Array(AlternativeWorkflowStatus)),
  rootCause: optional(Schema.String),
  rootCauseAnalysis: optional(RootCauseAnalysis),
  needsHumanReview: optional(Schema.Boolean),
  humanReviewReason: optional(HumanReviewReason),
  approvalRequired: optional(Schema.Boolean),
  approvalReason: optional(Schema.String),
  approvalContext: optional(Loose),
  actionability: optional(Enum("Actionable", "NotActionable")),
  alignmentVerdict: optional(Loose),
  degradedMode: optional(Schema.Boolean),
  consecutiveFailures: optional(Int),
  warnings: optional(Schema.Array(Schema.String)),
  startedAt: optional(Schema.String),
  completedAt: optional(Schema.String),
  observedGeneration: optional(Int),
  conditions: optional(Schema.Array(Condition))
})
export interface AIAnalysisStatus extends Schema.Schema.Type<typeof AIAnalysisStatus> {}

export const AIAnalysis = resource(AIAnalysisKind, AIAnalysisSpec, AIAnalysisStatus)
export interface AIAnalysis extends Schema.Schema.Type<typeof AIAnalysis> {}
