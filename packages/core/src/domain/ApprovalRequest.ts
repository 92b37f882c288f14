/**
 * RemediationApprovalRequest (RAR), `{api_group}/v1alpha1`, named `rar-<rrName>` in the controller namespace. The
 * spec is immutable; decisions go to the status subresource. A RAR whose `status.decision` is empty or absent is
 * `Pending`.
 */
import { Schema } from "effect"
import { Enum, Int, NonEmpty, optional } from "./Common.ts"
import { Condition, LocalRef, ObjectReference, resource } from "./Meta.ts"

export const RARKind = "RemediationApprovalRequest"
export const RARPlural = "remediationapprovalrequests"
export const rarNameFor = (rrName: string) => `rar-${rrName}`

/** Decisions that can be stored in `status.decision` (besides the empty initial value). */
export const RarDecision = Enum("Approved", "Rejected", "Expired")
export type RarDecision = typeof RarDecision.Type

/** The decisions `svc_approve` accepts. */
export const ApprovalDecisionInput = Enum("Approved", "Rejected")
export type ApprovalDecisionInput = typeof ApprovalDecisionInput.Type

/** What a RAR's decision reads as: `Pending` until a decision is stored. */
export type RarDecisionView = "Pending" | RarDecision

/** Lower-case filter of `svc_list_approval_requests` (empty means all). */
export const RarDecisionFilter = Enum("pending", "approved", "rejected", "expired")

/** The stored value: `""` (or absent) is pending. */
export const StoredRarDecision = Enum("", "Approved", "Rejected", "Expired")

/** `Pending` for an absent status or empty decision, else the stored decision. */
export const rarDecision = (status: { readonly decision?: string | undefined } | undefined): RarDecisionView => {
  const d = status?.decision
  return d === "Approved" || d === "Rejected" || d === "Expired" ? d : "Pending"
}

export const ConfidenceLevel = Enum("low", "medium", "high")

export const RecommendedWorkflow = Schema.Struct({
  workflowId: NonEmpty,
  version: Schema.String,
  workflowName: optional(Schema.String),
  executionBundle: optional(Schema.String),
  executionBundleDigest: optional(Schema.String),
  rationale: optional(Schema.String)
})

export const RecommendedAction = Schema.Struct({ action: Schema.String, rationale: Schema.String })
export const AlternativeConsidered = Schema.Struct({ approach: Schema.String, prosCons: Schema.String })

export const PolicyEvaluation = Schema.Struct({
  policyName: Schema.String,
  matchedRules: optional(Schema.Array(Schema.String)),
  decision: optional(Schema.String)
})

export const RemediationApprovalRequestSpec = Schema.Struct({
  remediationRequestRef: ObjectReference,
  aiAnalysisRef: LocalRef,
  confidence: Schema.Number.pipe(Schema.between(0, 1)),
  confidenceLevel: ConfidenceLevel,
  reason: optional(Schema.String),
  whyApprovalRequired: optional(Schema.String),
  recommendedWorkflow: RecommendedWorkflow,
  recommendedActions: optional(Schema.Array(RecommendedAction)),
  investigationSummary: optional(Schema.String),
  evidenceCollected: optional(Schema.Array(Schema.String)),
  alternativesConsidered: optional(Schema.Array(AlternativeConsidered)),
  policyEvaluation: optional(PolicyEvaluation),
  /** Deadline of the decision; after it the orchestrator stores `Expired` and fails the RR. */
  requiredBy: Schema.String
})
export interface RemediationApprovalRequestSpec extends Schema.Schema.Type<typeof RemediationApprovalRequestSpec> {}

/** An approver's choice of another workflow than the recommended one (valid with `Approved` only). */
export const WorkflowOverride = Schema.Struct({
  /**
   * The name of a RemediationWorkflow, its catalog `workflowName` (see core `WorkflowOverride.ts`; a catalog id is
   * still accepted from older clients). Checked when the decision is made.
   */
  workflowName: optional(Schema.String),
  parameters: optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  rationale: optional(Schema.String)
})

export const RemediationApprovalRequestStatus = Schema.Struct({
  decision: optional(StoredRarDecision),
  decidedBy: optional(Schema.String),
  decidedAt: optional(Schema.String),
  decidedVia: optional(Schema.String),
  decisionMessage: optional(Schema.String),
  workflowOverride: optional(WorkflowOverride),
  expired: optional(Schema.Boolean),
  timeRemaining: optional(Schema.String),
  createdAt: optional(Schema.String),
  reason: optional(Schema.String),
  message: optional(Schema.String),
  observedGeneration: optional(Int),
  conditions: optional(Schema.Array(Condition))
})
export interface RemediationApprovalRequestStatus extends Schema.Schema.Type<typeof RemediationApprovalRequestStatus> {}

export const RemediationApprovalRequest = resource(
  RARKind,
  RemediationApprovalRequestSpec,
  RemediationApprovalRequestStatus
)
export interface RemediationApprovalRequest extends Schema.Schema.Type<typeof RemediationApprovalRequest> {}
