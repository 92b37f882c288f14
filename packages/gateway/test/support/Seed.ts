/**
 * Demo cluster state for the gateway tests: persona RBAC rendered from Personas.ts, and RemediationRequests,
 * approval requests and analyses in the controller namespace.
 */
import { devkitRbacSpec, renderRbac } from "@kubemend/core/Personas"

export const namespace = "kubemend-system"
export const apiGroup = "kubemend.io"
const apiVersion = `${apiGroup}/v1alpha1`

const fp = (n: number) => n.toString(16).padStart(64, "0")
const inMinutes = (m: number) => new Date(Date.now() + m * 60_000).toISOString()

const rr = (name: string, phase: string, kind: string, target: string, n: number, status: Record<string, unknown> = {}) => ({
  apiVersion,
  kind: "RemediationRequest",
  metadata: { name, namespace },
  spec: {
    signalName: "KubePodCrashLooping",
    signalFingerprint: fp(n),
    severity: "critical",
    targetType: "kubernetes",
    targetResource: { apiVersion: kind === "Pod" ? "v1" : "apps/v1", kind, name: target, namespace: "demo" }
  },
  status: { overallPhase: phase, ...status }
})

const rar = (name: string, rrName: string, requiredBy: string, status: Record<string, unknown> = {}) => ({
  apiVersion,
  kind: "RemediationApprovalRequest",
  metadata: { name, namespace },
  spec: {
    remediationRequestRef: { name: rrName, namespace },
    aiAnalysisRef: { name: `ai-${rrName}` },
    confidence: 0.72,
    confidenceLevel: "medium",
    whyApprovalRequired: "production namespace",
    investigationSummary: "checkout crash loops after the last config change",
    recommendedWorkflow: { workflowId: "wf-restart", version: "1.0.0", workflowName: "restart-deployment" },
    recommendedActions: [{ action: "restart", rationale: "clears the bad config cache" }],
    evidenceCollected: ["pod restarts: 14", "OOMKilled: no"],
    alternativesConsidered: [{ approach: "scale up", prosCons: "does not fix the crash" }],
    requiredBy
  },
  ...(Object.keys(status).length === 0 ? {} : { status })
})

const aia = (rrName: string, sessionId?: string) => ({
  apiVersion,
  kind: "AIAnalysis",
  metadata: { name: `ai-${rrName}`, namespace },
  spec: { remediationRequestRef: { name: rrName, namespace } },
  status: { phase: "Investigating", ...(sessionId === undefined ? {} : { investigationSession: { id: sessionId } }) }
})

/** The children of the completed rr-api-done: what `get_remediation` tells about its analysis, run and outcome. */
const apiDoneStory = [
  {
    apiVersion,
    kind: "AIAnalysis",
    metadata: { name: "ai-rr-api-done", namespace },
    spec: { remediationRequestRef: { name: "rr-api-done", namespace } },
    status: {
      phase: "Completed",
      rootCauseAnalysis: { summary: "api pods run out of file descriptors", severity: "high", contributingFactors: ["ulimit 1024"] },
      selectedWorkflow: { workflowId: "wf-restart", version: "1.0.0", workflowName: "restart-deployment", actionType: "RestartDeployment", confidence: 0.91 }
    }
  },
  {
    apiVersion,
    kind: "WorkflowExecution",
    metadata: { name: "we-rr-api-done", namespace },
    spec: { workflowRef: { workflowId: "wf-restart", workflowName: "restart-deployment" } },
    status: { phase: "Completed", startTime: "2025-01-01T00:03:00Z", completionTime: "2025-01-01T00:04:30Z", executionStatus: { status: "Succeeded" } }
  },
  {
    apiVersion,
    kind: "EffectivenessAssessment",
    metadata: { name: "ea-rr-api-done", namespace },
    spec: {},
    status: {
      phase: "Completed",
      assessmentReason: "full",
      components: { healthAssessed: true, healthScore: 1, alertAssessed: true, alertScore: 1, metricsAssessed: false, hashComputed: true }
    }
  }
]

export const demoObjects = () => [
  { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
  ...renderRbac(devkitRbacSpec({ apiGroup, toolPrefix: "svc" })).clusterRoles,
  ...renderRbac(devkitRbacSpec({ apiGroup, toolPrefix: "svc" })).clusterRoleBindings,
  rr("rr-checkout-crash", "Analyzing", "Deployment", "checkout", 1),
  rr("rr-cart-oom", "AwaitingApproval", "Deployment", "cart", 2),
  rr("rr-api-done", "Completed", "Deployment", "api", 3, {
    outcome: "Remediated",
    aiAnalysisRef: { name: "ai-rr-api-done" },
    workflowExecutionRef: { name: "we-rr-api-done" },
    effectivenessAssessmentRef: { name: "ea-rr-api-done" }
  }),
  rr("rr-db-blocked", "Blocked", "Pod", "db-0", 4, { blockReason: "ResourceBusy", blockMessage: "a workflow is running" }),
  rr("rr-cache-pending", "Processing", "Deployment", "cache", 5),
  rr("rr-search-running", "Running", "Deployment", "search", 6),
  rar("rar-rr-cart-oom", "rr-cart-oom", inMinutes(15)),
  rar("rar-rr-api-done", "rr-api-done", inMinutes(-60), { decision: "Approved", decidedBy: "remediation-approver-user" }),
  rar("rar-rr-old", "rr-old", inMinutes(-30), { decision: "Expired", decidedBy: "system", expired: true }),
  rar("rar-rr-db-blocked", "rr-db-blocked", inMinutes(5)),
  aia("rr-checkout-crash", "ka-session-1"),
  aia("rr-cache-pending"),
  ...apiDoneStory
]
