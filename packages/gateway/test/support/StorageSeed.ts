/** In-memory storage answers for the gateway tests (the shapes of the storage API contract). */
import type { MemoryStorageData } from "../../src/GatewayStorage.ts"

const workflow = (id: string, name: string, component: ReadonlyArray<string>, actionType: string) => ({
  workflowId: id,
  workflowName: name,
  actionType,
  version: "1.0.0",
  schemaVersion: "1.0",
  name,
  description: { what: `${name} workflow`, whenToUse: "when it helps" },
  content: "kind: RemediationWorkflow",
  contentHash: "0".repeat(64),
  executionEngine: "job",
  labels: { severity: ["*"], component, environment: ["*"], priority: "*" },
  status: "Active" as const,
  isLatestVersion: true,
  createdAt: "2025-01-01T00:00:00Z",
  updatedAt: "2025-01-01T00:00:00Z"
})

const event = (n: number, type: string, actor: string) => ({
  version: "1.0",
  event_id: `00000000-0000-4000-8000-${n.toString().padStart(12, "0")}`,
  event_type: type,
  event_timestamp: `2025-01-01T00:0${n}:00Z`,
  event_category: "apifrontend" as const,
  event_action: "executed",
  event_outcome: "success" as const,
  correlation_id: "rr-api-done",
  actor_id: actor,
  event_data: { event_type: type, detail: `step ${n}` }
})

export const storageSeed: MemoryStorageData = {
  workflows: [
    workflow("wf-restart", "restart-deployment", ["deployment"], "RestartDeployment"),
    workflow("wf-scale", "scale-deployment", ["deployment"], "ScaleReplicas"),
    workflow("wf-evict", "evict-pod", ["pod"], "EvictPod")
  ],
  effectiveness: [{ workflow_id: "wf-restart", success_rate: 0.9, avg_duration: "1m30s", sample_size: 20, avg_effectiveness_score: 0.8 }],
  history: {
    "demo/Deployment/api": {
      targetResource: "demo/Deployment/api",
      currentSpecHash: "sha256:abc",
      regressionDetected: false,
      tier1: {
        window: "24h",
        chain: [{
          remediationUID: "uid-1",
          actionType: "RestartDeployment",
          outcome: "Remediated",
          effectivenessScore: 0.9,
          signalResolved: true,
          hashMatch: "postRemediation",
          assessmentReason: null,
          completedAt: "2025-01-01T00:00:00Z"
        }]
      },
      tier2: { window: "2160h", chain: [] }
    }
  },
  events: [
    event(1, "apifrontend.rr.created", "sre-user"),
    event(2, "apifrontend.user.decision", "remediation-approver-user"),
    event(3, "orchestrator.lifecycle.completed", "system")
  ]
}

/** A RemediationWorkflow manifest as a platform team applies it (catalog tests register it in storage). */
export const scalingWorkflowYaml = (name: string, version = "1.0.0") =>
  `apiVersion: kubemend.io/v1alpha1
kind: RemediationWorkflow
metadata:
  name: ${name}
spec:
  version: "${version}"
  actionType: ScaleReplicas
  description: { what: Scale a Deployment, whenToUse: it needs more replicas }
  labels: { severity: ["*"], component: ["*"], environment: ["*"], priority: "*" }
  execution: { engine: job, bundle: "ghcr.io/kubemend/${name}:${version}" }
  parameters:
    - { name: TARGET_NAME, type: string, required: true, description: the Deployment }
`
