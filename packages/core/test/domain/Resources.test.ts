import { assert, describe, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { parse } from "yaml"
import {
  AIAnalysis,
  InvestigationSession,
  rarDecision,
  RemediationApprovalRequest,
  RemediationRequest,
  WorkflowExecution,
  formatTargetResource,
  issuesFromParseError
} from "../../src/domain/index.ts"

const rrYaml = `
apiVersion: kubemend.io/v1alpha1
kind: RemediationRequest
metadata:
  name: rr-7f3a9c
  namespace: kubemend-system
  uid: 0b0e7c8e-1111-4c2b-9d55-2f1d1c1a0001
  resourceVersion: "48211"
  generation: 1
  creationTimestamp: "2025-11-20T09:14:02Z"
  labels:
    kubemend.io/signal-name: OOMKilled
  managedFields: [{ manager: gateway }]
spec:
  signalName: OOMKilled
  signalFingerprint: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
  severity: medium
  signalType: prometheus-alert
  signalSource: alertmanager
  targetType: kubernetes
  targetResource:
    apiVersion: apps/v1
    kind: Deployment
    name: payments-api
    namespace: payments
  firingTime: "2025-11-20T09:13:40Z"
  receivedTime: "2025-11-20T09:14:01Z"
  signalLabels: { alertname: KubePodOOMKilled, team: payments }
  futureSpecField: whatever
status:
  overallPhase: Blocked
  blockReason: ConsecutiveFailures
  blockMessage: 3 consecutive failures for this fingerprint
  blockedUntil: "2025-11-20T10:14:02Z"
  consecutiveFailureCount: 3
  deduplication:
    firstSeenAt: "2025-11-20T09:14:01Z"
    lastSeenAt: "2025-11-20T09:20:01Z"
    occurrenceCount: 4
  aiAnalysisRef: { kind: AIAnalysis, name: ai-rr-7f3a9c, namespace: kubemend-system }
  selectedWorkflowRef: { workflowId: 5d0e9a52-3c1f-5b7e-9a1d-8f2c4b6e0a11, version: v1.2.0, executionBundle: quay.io/acme/oom@sha256:abc }
  conditions:
    - { type: Ready, status: "False", reason: Blocked, lastTransitionTime: "2025-11-20T09:15:00Z" }
`

const rarYaml = `
apiVersion: kubemend.io/v1alpha1
kind: RemediationApprovalRequest
metadata: { name: rar-rr-7f3a9c, namespace: kubemend-system }
spec:
  remediationRequestRef: { kind: RemediationRequest, name: rr-7f3a9c, namespace: kubemend-system }
  aiAnalysisRef: { name: ai-rr-7f3a9c }
  confidence: 0.72
  confidenceLevel: medium
  reason: production namespace requires approval
  whyApprovalRequired: environment=production and confidence below 0.8
  recommendedWorkflow:
    workflowId: 5d0e9a52-3c1f-5b7e-9a1d-8f2c4b6e0a11
    version: v1.2.0
    executionBundle: quay.io/acme/oom@sha256:abc
    rationale: memory limit too low for the observed working set
  recommendedActions:
    - { action: IncreaseMemoryLimit, rationale: container killed at 512Mi }
  investigationSummary: payments-api OOMKilled 4 times in 6 minutes
  evidenceCollected: ["kubectl describe pod: OOMKilled", "memory working set 510Mi"]
  alternativesConsidered:
    - { approach: RestartPod, prosCons: fast but does not fix the limit }
  policyEvaluation: { policyName: approval.rego, matchedRules: [production], decision: ManualReviewRequired }
  requiredBy: "2025-11-20T09:30:00Z"
status:
  createdAt: "2025-11-20T09:15:00Z"
  timeRemaining: 14m
`

const aiaYaml = `
apiVersion: kubemend.io/v1alpha1
kind: AIAnalysis
metadata: { name: ai-rr-7f3a9c, namespace: kubemend-system }
spec:
  remediationRequestRef: { kind: RemediationRequest, name: rr-7f3a9c, namespace: kubemend-system }
  remediationId: rr-7f3a9c
  analysisRequest:
    signalContext:
      fingerprint: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
      severity: critical
      signalName: OOMKilled
      environment: production
      businessPriority: P1
      targetResource: { kind: Deployment, name: payments-api, namespace: payments }
      enrichmentResults: { kubernetesContext: { namespace: { name: payments } } }
    analysisTypes: [investigation, root-cause, workflow-selection]
status:
  phase: Completed
  reason: AnalysisCompleted
  needsHumanReview: true
  humanReviewReason: operator_escalation
  subReason: OperatorEscalation
  approvalRequired: true
  investigationSession: { id: 3f2b8a6e-0c4d-4e8f-9a1b-2c3d4e5f6a7b, generation: 0, pollCount: 7 }
  selectedWorkflow:
    workflowId: 5d0e9a52-3c1f-5b7e-9a1d-8f2c4b6e0a11
    version: v1.2.0
    executionBundle: quay.io/acme/oom@sha256:abc
    confidence: 0.72
    rationale: memory limit too low
    parameters: { MEMORY_LIMIT: 1Gi }
  rootCauseAnalysis:
    summary: container memory limit (512Mi) below working set
    severity: high
    signalType: OOMKilled
    contributingFactors: [traffic spike]
  postRCAContext: { setAt: "2025-11-20T09:14:50Z" }
`

const decodeRR = Schema.decodeUnknownEither(RemediationRequest)

describe("RemediationRequest", () => {
  it("decodes a realistic RR; unknown fields are ignored, aliases resolved", () => {
    const rr = Schema.decodeUnknownSync(RemediationRequest)(parse(rrYaml))
    assert.strictEqual(rr.metadata.name, "rr-7f3a9c")
    assert.strictEqual(rr.spec.targetResource.kind, "Deployment")
    assert.strictEqual(rr.spec.severity, "warning")
    assert.strictEqual(rr.status?.overallPhase, "Blocked")
    assert.strictEqual(rr.status?.blockReason, "ConsecutiveFailures")
    assert.strictEqual(rr.status?.blockedUntil, "2025-11-20T10:14:02Z")
    assert.deepStrictEqual(rr.status?.deduplication, {
      firstSeenAt: "2025-11-20T09:14:01Z",
      lastSeenAt: "2025-11-20T09:20:01Z",
      occurrenceCount: 4
    })
    assert.isFalse("futureSpecField" in rr.spec)
    assert.isFalse("managedFields" in rr.metadata)
  })

  it("keeps unknown fields with onExcessProperty: preserve", () => {
    const rr = Schema.decodeUnknownSync(RemediationRequest)(parse(rrYaml), { onExcessProperty: "preserve" })
    assert.strictEqual((rr.spec as unknown as Record<string, unknown>).futureSpecField, "whatever")
  })

  it("decodes an RR without status and with an original Executing phase", () => {
    const doc = parse(rrYaml)
    delete doc.status
    assert.isTrue(Either.isRight(decodeRR(doc)))
    const r = decodeRR({ ...parse(rrYaml), status: { overallPhase: "Executing" } })
    assert.isTrue(Either.isRight(r) && r.right.status?.overallPhase === "Running")
  })

  it("names the path of a missing target", () => {
    const doc = parse(rrYaml)
    delete doc.spec.targetResource.kind
    const r = decodeRR(doc, { errors: "all" })
    assert.isTrue(Either.isLeft(r))
    if (Either.isLeft(r)) {
      assert.deepStrictEqual(issuesFromParseError(r.left), [{ path: "spec.targetResource.kind", message: "is required" }])
    }
  })

  it("formats a WorkflowExecution target", () => {
    assert.strictEqual(formatTargetResource({ kind: "Deployment", name: "a", namespace: "ns" }), "ns/Deployment/a")
    assert.strictEqual(formatTargetResource({ kind: "Node", name: "n1" }), "Node/n1")
  })
})

describe("RemediationApprovalRequest", () => {
  it("decodes a pending RAR", () => {
    const rar = Schema.decodeUnknownSync(RemediationApprovalRequest)(parse(rarYaml))
    assert.strictEqual(rar.spec.confidenceLevel, "medium")
    assert.strictEqual(rar.spec.recommendedWorkflow.version, "v1.2.0")
    assert.deepStrictEqual(rar.spec.alternativesConsidered, [
      { approach: "RestartPod", prosCons: "fast but does not fix the limit" }
    ])
    assert.strictEqual(rarDecision(rar.status), "Pending")
  })

  it("decodes a decided RAR with a workflow override", () => {
    const doc = parse(rarYaml)
    doc.status = {
      decision: "Approved",
      decidedBy: "alice",
      decidedAt: "2025-11-20T09:20:00Z",
      decisionMessage: "looks right",
      workflowOverride: { workflowName: "oom-increase-memory-conservative", rationale: "User override" }
    }
    const rar = Schema.decodeUnknownSync(RemediationApprovalRequest)(doc)
    assert.strictEqual(rarDecision(rar.status), "Approved")
    assert.strictEqual(rar.status?.workflowOverride?.workflowName, "oom-increase-memory-conservative")
  })

  it("rarDecision: empty or absent is Pending", () => {
    assert.strictEqual(rarDecision(undefined), "Pending")
    assert.strictEqual(rarDecision({}), "Pending")
    assert.strictEqual(rarDecision({ decision: "" }), "Pending")
    assert.strictEqual(rarDecision({ decision: "Rejected" }), "Rejected")
    assert.strictEqual(rarDecision({ decision: "Expired" }), "Expired")
  })

  it("rejects a confidence outside 0..1 and an unknown decision, naming the fields", () => {
    const doc = parse(rarYaml)
    doc.spec.confidence = 1.4
    doc.status = { decision: "Maybe" }
    const r = Schema.decodeUnknownEither(RemediationApprovalRequest)(doc, { errors: "all" })
    assert.isTrue(Either.isLeft(r))
    if (Either.isLeft(r)) {
      const paths = issuesFromParseError(r.left).map((i) => i.path)
      assert.deepStrictEqual(paths, ["spec.confidence", "status.decision"])
    }
  })
})

describe("AIAnalysis", () => {
  it("decodes the fields the gateway reads", () => {
    const aia = Schema.decodeUnknownSync(AIAnalysis)(parse(aiaYaml))
    assert.strictEqual(aia.status?.phase, "Completed")
    assert.strictEqual(aia.status?.investigationSession?.id, "3f2b8a6e-0c4d-4e8f-9a1b-2c3d4e5f6a7b")
    assert.strictEqual(aia.status?.selectedWorkflow?.workflowId, "5d0e9a52-3c1f-5b7e-9a1d-8f2c4b6e0a11")
    assert.strictEqual(aia.status?.humanReviewReason, "operator_escalation")
    assert.strictEqual(aia.status?.subReason, "OperatorEscalation")
    assert.strictEqual(aia.status?.rootCauseAnalysis?.summary, "container memory limit (512Mi) below working set")
  })

  it("accepts the interactive cancellation reasons and rejects unknown review reasons", () => {
    for (const reason of ["InteractiveCancelled", "ParentCancelled"]) {
      const doc = parse(aiaYaml)
      doc.status = { phase: "Failed", reason }
      assert.isTrue(Either.isRight(Schema.decodeUnknownEither(AIAnalysis)(doc)), reason)
    }
    const doc = parse(aiaYaml)
    doc.status.humanReviewReason = "felt_like_it"
    const r = Schema.decodeUnknownEither(AIAnalysis)(doc)
    assert.isTrue(Either.isLeft(r))
    if (Either.isLeft(r)) assert.strictEqual(issuesFromParseError(r.left)[0]?.path, "status.humanReviewReason")
  })
})

describe("InvestigationSession and WorkflowExecution", () => {
  it("decodes an interactive session tolerantly", () => {
    const is = Schema.decodeUnknownSync(InvestigationSession)(parse(`
metadata: { name: is-rr-7f3a9c, namespace: kubemend-system }
spec:
  remediationRequestRef: { name: rr-7f3a9c, namespace: kubemend-system }
  userIdentity: { username: alice, groups: [kubemend-sre] }
  joinMode: takeover
  a2aTaskID: task-1
  somethingNew: 1
status: { phase: Active, leaseHolder: alice }
`))
    assert.strictEqual(is.spec.joinMode, "takeover")
    assert.strictEqual(is.status?.phase, "Active")
  })

  it("decodes a workflow execution", () => {
    const we = Schema.decodeUnknownSync(WorkflowExecution)(parse(`
metadata: { name: we-rr-7f3a9c, namespace: kubemend-system }
spec:
  remediationRequestRef: { name: rr-7f3a9c }
  targetResource: payments/Deployment/payments-api
  workflowRef: { workflowId: 5d0e9a52-3c1f-5b7e-9a1d-8f2c4b6e0a11, version: v1.2.0, executionBundle: quay.io/acme/oom@sha256:abc }
  parameters: { MEMORY_LIMIT: 1Gi }
status: { phase: Running, startTime: "2025-11-20T09:21:00Z" }
`))
    assert.strictEqual(we.status?.phase, "Running")
    assert.strictEqual(we.spec.workflowRef.workflowId, "5d0e9a52-3c1f-5b7e-9a1d-8f2c4b6e0a11")
  })
})
