/**
 * Between the RR and the agent: the IncidentRequest an RR becomes, and the AIAnalysis status an IncidentResponse
 * becomes (workflow, root cause, human review, approval routing against the confidence threshold).
 */
import type { IncidentRequest, IncidentResponse } from "@kubemend/core/AgentApi"
import type { HumanReviewReason, SubReason } from "@kubemend/core/domain/AIAnalysis"
import { classifySeverity } from "@kubemend/core/domain/Severity"
import type { KubeObject } from "@kubemend/core/K8s"
import { isInteractive, iso, type RemediationRequest, statusField } from "../remediation/Objects.ts"

const priorityBySeverity: Readonly<Record<string, string>> = { critical: "P0", high: "P1", warning: "P2", info: "P3" }

const text = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined)
const record = (v: unknown): Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {}

/** Drops undefined values (the status is written as JSON; `exactOptionalPropertyTypes` keeps keys honest). */
export const compact = <A extends Record<string, unknown>>(o: A): A => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as A

/** The SignalProcessing's enrichment as the agent's `enrichment_results` (Kubernetes context, business classification). */
const enrichmentOf = (sp: KubeObject | undefined) => {
  const e = record(sp === undefined ? undefined : statusField(sp, "enrichmentResults"))
  const k = e["kubernetesContext"]
  const criticality = text(record(e["businessClassification"])["criticality"])
  if (k === undefined && criticality === undefined) return {}
  return {
    enrichment_results: {
      ...(k === undefined ? {} : { kubernetesContext: record(k) }),
      ...(criticality === undefined ? {} : { businessClassification: { criticality } })
    }
  }
}

/** The analysis request of `rr`; the SignalProcessing child adds environment, priority and its enrichment. */
export const incidentRequest = (
  rr: RemediationRequest,
  signalProcessing: KubeObject | undefined,
  apiGroup: string
): IncidentRequest => {
  const spec = rr.spec
  const t = spec.targetResource
  const severity = classifySeverity(spec.severity)
  const labels = spec.signalLabels ?? {}
  const annotations = spec.signalAnnotations ?? {}
  const sp = signalProcessing === undefined ? undefined : (x: string) => text(statusField(signalProcessing, x))
  const dedup = rr.status?.deduplication
  return {
    incident_id: rr.metadata.name,
    remediation_id: rr.metadata.name,
    signal_name: spec.signalName,
    severity,
    signal_source: spec.signalSource ?? "unknown",
    resource_namespace: t.namespace ?? "",
    resource_kind: t.kind,
    resource_name: t.name,
    resource_api_version: t.apiVersion ?? "",
    error_message: spec.description ?? annotations["description"] ?? annotations["summary"] ?? spec.signalName,
    environment: sp?.("environment") ?? labels["environment"] ?? "unknown",
    priority: sp?.("priority") ?? labels["priority"] ?? priorityBySeverity[severity] ?? "P2",
    risk_tolerance: labels["risk_tolerance"] ?? "medium",
    business_category: labels["business_category"] ?? "unknown",
    cluster_name: labels["cluster"] ?? "local",
    ...(dedup?.occurrenceCount === undefined ? {} : { occurrence_count: dedup.occurrenceCount }),
    ...(spec.firingTime === undefined ? {} : { firing_time: spec.firingTime }),
    ...(spec.receivedTime === undefined ? {} : { received_time: spec.receivedTime }),
    ...(spec.signalLabels === undefined ? {} : { signal_labels: spec.signalLabels }),
    ...(spec.signalAnnotations === undefined ? {} : { signal_annotations: spec.signalAnnotations }),
    signal_mode: "reactive",
    ...enrichmentOf(signalProcessing),
    interactive: isInteractive(rr, apiGroup)
  }
}

const subReasonOf: Readonly<Record<HumanReviewReason, SubReason>> = {
  workflow_not_found: "WorkflowNotFound",
  image_mismatch: "ImageMismatch",
  parameter_validation_failed: "ParameterValidationFailed",
  no_matching_workflows: "NoMatchingWorkflows",
  low_confidence: "LowConfidence",
  llm_parsing_error: "LLMParsingError",
  investigation_inconclusive: "InvestigationInconclusive",
  rca_incomplete: "RcaIncomplete",
  alignment_check_failed: "ValidationError",
  operator_escalation: "OperatorEscalation",
  decision_expired: "DecisionExpired"
}

export interface Classified {
  readonly workflowId: string | undefined
  readonly inconclusive: boolean
  readonly approvalRequired: boolean
  /** The whole AIAnalysis status to write. */
  readonly status: Record<string, unknown>
}

/** approval.rego's answer for this analysis (`remediation/PolicyEngine.ts`). */
export interface PolicyApproval {
  readonly requireApproval: boolean
  readonly reasons: ReadonlyArray<string>
  readonly degraded: boolean
}

/**
 * The AIAnalysis status of a completed session. With `approval` (approval.rego's decision) the policy decides
 * whether a selected workflow needs approval; without it, the built-in rule (confidence below the threshold, or
 * human review asked for).
 */
export const classify = (r: IncidentResponse, threshold: number, now: number, approval?: PolicyApproval): Classified => {
  const selected = r.selected_workflow ?? undefined
  const workflowId = text(selected?.workflow_id) ?? text(selected?.name)
  const review = r.human_review_reason ?? undefined
  const inconclusive = workflowId === undefined &&
    (r.investigation_outcome === "inconclusive" || review === "investigation_inconclusive")
  const needsReview = r.needs_human_review || review !== undefined
  const builtIn = r.confidence < threshold || needsReview
  const approvalRequired = workflowId !== undefined && (approval?.requireApproval ?? builtIn)
  const rca = record(r.root_cause_analysis)
  const target = record(rca["remediation_target"])
  const remediationTarget = text(target["kind"]) !== undefined && text(target["name"]) !== undefined
    ? compact({
      kind: text(target["kind"]),
      name: text(target["name"]),
      namespace: text(target["namespace"]),
      apiVersion: text(target["api_version"]) ?? text(target["apiVersion"])
    })
    : undefined
  const factors = Array.isArray(rca["contributing_factors"])
    ? (rca["contributing_factors"] as ReadonlyArray<unknown>).filter((x): x is string => typeof x === "string")
    : undefined
  const summary = text(r.root_cause) ?? text(rca["summary"]) ?? r.analysis
  const outcome = r.investigation_outcome ?? (workflowId !== undefined ? "workflow_selected" : "no_action_needed")
  const subReason: SubReason | undefined = review !== undefined
    ? subReasonOf[review]
    : inconclusive
    ? "InvestigationInconclusive"
    : workflowId === undefined
    ? (outcome === "resolved" ? "ProblemResolved" : "NotActionable")
    : undefined
  const status = compact({
    phase: "Completed",
    reason: workflowId !== undefined ? "AnalysisCompleted" : needsReview || inconclusive ? "WorkflowResolutionFailed" : "WorkflowNotNeeded",
    subReason,
    message: `investigation outcome: ${outcome}`,
    selectedWorkflow: workflowId === undefined
      ? undefined
      : compact({
        workflowId,
        version: text(selected?.version),
        workflowName: text(selected?.["workflow_name"]) ?? text(selected?.name),
        actionType: text(selected?.action_type),
        executionBundle: text(selected?.execution_bundle),
        executionEngine: text(selected?.["execution_engine"]),
        confidence: selected?.confidence ?? r.confidence,
        rationale: text(selected?.rationale),
        parameters: selected?.parameters
      }),
    alternativeWorkflows: r.alternative_workflows?.map((a) =>
      compact({ workflowId: a.workflow_id, executionBundle: a.execution_bundle ?? undefined, confidence: a.confidence, rationale: a.rationale })
    ),
    rootCause: summary,
    rootCauseAnalysis: compact({
      summary,
      severity: text(rca["severity"]) === undefined ? undefined : classifySeverity(text(rca["severity"])),
      contributingFactors: factors,
      remediationTarget
    }),
    needsHumanReview: needsReview || inconclusive,
    humanReviewReason: review ?? (inconclusive ? "investigation_inconclusive" : undefined),
    approvalRequired,
    approvalReason: !approvalRequired
      ? undefined
      : approval !== undefined
      ? approval.reasons.length > 0 ? approval.reasons.join("; ") : "approval.rego requires approval"
      : needsReview && r.confidence >= threshold
      ? `the investigation asks for human review (${review ?? "unspecified"})`
      : `confidence ${r.confidence} is below the auto-approval threshold ${threshold}`,
    approvalContext: compact({
      confidence: r.confidence,
      threshold,
      investigationOutcome: outcome,
      policyName: approval === undefined ? undefined : "approval.rego",
      policyDecision: approval === undefined ? undefined : approval.requireApproval ? "RequireApproval" : "AutoApprove",
      policyReasons: approval === undefined || approval.reasons.length === 0 ? undefined : [...approval.reasons],
      policyDegraded: approval?.degraded
    }),
    actionability: (r.actionable ?? r.is_actionable ?? workflowId !== undefined) ? "Actionable" : "NotActionable",
    warnings: r.warnings === undefined || r.warnings.length === 0 ? undefined : [...r.warnings],
    completedAt: iso(now)
  })
  return { workflowId, inconclusive, approvalRequired, status }
}
