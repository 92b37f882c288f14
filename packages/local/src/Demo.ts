/**
 * Demo data for the local platform: a workload namespace with a crash-looping deployment, remediation requests in
 * several phases, a pending approval with a recommendation, an analysis with an interactive session, and the
 * workflows the storage catalog offers. Objects are written through the dev API server like any other client.
 */
import { parseWorkflowContent } from "@kubemend/core/StorageApi/WorkflowContent"
import { Either } from "effect"
import { createHash } from "node:crypto"

export const demoNamespace = "demo-shop"

/** Version of the demo workflows in the catalog. */
export const workflowVersion = "1.2.0"

/** Where the workflow Jobs run (the platform CR's `workflowExecution.workflowNamespace` default). */
export const workflowNamespace = "kubemend-workflows"

/**
 * What each demo image needs in memory: the local kubelet crash-loops (OOMKilled) a container whose memory limit is
 * below it. checkout 1.4.2 added an in-memory cart cache; 1.4.1 fits its 128Mi limit.
 */
export const imageWorkingSets: Readonly<Record<string, string>> = {
  "shop/checkout:1.4.2": "190Mi",
  "shop/checkout:1.4.1": "96Mi",
  "shop/recommendations:3.2.0": "300Mi"
}

const podTemplate = (app: string, image: string, memory?: string) => ({
  metadata: { labels: { app } },
  spec: { containers: [{ name: app, image, ...(memory === undefined ? {} : { resources: { limits: { memory } } }) }] }
})

/** A ReplicaSet of a Deployment's rollout history (revision 1 is the older one). */
const replicaSet = (deployment: string, name: string, revision: number, replicas: number, template: ReturnType<typeof podTemplate>) => ({
  apiVersion: "apps/v1",
  kind: "ReplicaSet",
  metadata: {
    name,
    namespace: demoNamespace,
    labels: { app: deployment },
    annotations: { "deployment.kubernetes.io/revision": String(revision) },
    ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: deployment, controller: true }]
  },
  spec: { replicas, selector: { matchLabels: { app: deployment } }, template }
})

const fingerprint = (text: string) => createHash("sha256").update(text).digest("hex")

const minutesAgo = (now: Date, minutes: number) => new Date(now.getTime() - minutes * 60_000).toISOString()

const target = (kind: string, name: string) => ({ kind, name, namespace: demoNamespace, apiVersion: kind === "Pod" ? "v1" : "apps/v1" })

/** Workloads the agent's cluster tools can inspect. The namespace is managed, so remediation is allowed. */
export const workloads = (apiGroup: string) => [
  { apiVersion: "v1", kind: "Namespace", metadata: { name: demoNamespace, labels: { [`${apiGroup}/managed`]: "true" } } },
  { apiVersion: "v1", kind: "Namespace", metadata: { name: workflowNamespace } },
  {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "checkout", namespace: demoNamespace, labels: { app: "checkout" }, generation: 2 },
    spec: { replicas: 2, selector: { matchLabels: { app: "checkout" } }, template: podTemplate("checkout", "shop/checkout:1.4.2", "128Mi") },
    status: { replicas: 2, readyReplicas: 0, unavailableReplicas: 2 }
  },
  // The rollout history (1.4.1, then the crashing 1.4.2) and the rest of the owner chains the demo's alerts name:
  // the signal service resolves every alert's target in the cluster before it makes a request.
  replicaSet("checkout", "checkout-6c4f9d7b8", 1, 0, podTemplate("checkout", "shop/checkout:1.4.1", "128Mi")),
  replicaSet("checkout", "checkout-7d9f8b6c5", 2, 2, podTemplate("checkout", "shop/checkout:1.4.2", "128Mi")),
  ...["cart", "search"].map((name) => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: demoNamespace, labels: { app: name }, generation: 2 },
    spec: { replicas: 3, selector: { matchLabels: { app: name } }, template: podTemplate(name, `shop/${name}:2.0.0`) }
  })),
  // Crash loops too (its model needs 300Mi of its 256Mi): the signal stream's KubePodCrashLooping is about it, and
  // the autonomous remediation raises its limit, while checkout waits for a person to approve its rollback.
  {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "recommendations", namespace: demoNamespace, labels: { app: "recommendations" } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: "recommendations" } },
      template: podTemplate("recommendations", "shop/recommendations:3.2.0", "256Mi")
    }
  },
  ...["cart", "search"].flatMap((name) => [
    replicaSet(name, `${name}-5b7c9d4f2`, 1, 0, podTemplate(name, `shop/${name}:1.9.3`)),
    replicaSet(name, `${name}-8f6d2c1a9`, 2, 3, podTemplate(name, `shop/${name}:2.0.0`))
  ]),
  {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "payments-db", namespace: demoNamespace, labels: { app: "payments-db" } },
    spec: { replicas: 1 }
  },
  { apiVersion: "v1", kind: "Namespace", metadata: { name: "legacy-batch" } },
  { apiVersion: "batch/v1", kind: "CronJob", metadata: { name: "report-generator", namespace: "legacy-batch" }, spec: { schedule: "0 2 * * *" } },
  {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "checkout-7d9f8b6c5-x2x7q",
      namespace: demoNamespace,
      labels: { app: "checkout" },
      ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "checkout-7d9f8b6c5", controller: true }]
    },
    spec: { containers: [{ name: "checkout", image: "shop/checkout:1.4.2", resources: { limits: { memory: "128Mi" } } }] },
    status: {
      phase: "Running",
      containerStatuses: [{
        name: "checkout",
        ready: false,
        restartCount: 14,
        lastState: { terminated: { reason: "OOMKilled", exitCode: 137 } },
        state: { waiting: { reason: "CrashLoopBackOff" } }
      }]
    }
  },
  {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: "checkout-7d9f8b6c5-x2x7q.oom", namespace: demoNamespace },
    involvedObject: { kind: "Pod", name: "checkout-7d9f8b6c5-x2x7q", namespace: demoNamespace },
    reason: "BackOff",
    type: "Warning",
    message: "Back-off restarting failed container checkout (OOMKilled, limit 128Mi)",
    count: 14
  },
  {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "checkout-db", namespace: demoNamespace },
    type: "Opaque",
    data: { password: Buffer.from("not-for-your-eyes").toString("base64") }
  }
]

const rr = (apiGroup: string, name: string, signal: string, status: Record<string, unknown>, kind = "Deployment", targetName = "checkout") => ({
  apiVersion: `${apiGroup}/v1alpha1`,
  kind: "RemediationRequest",
  metadata: { name, labels: { [`${apiGroup}/signal`]: signal } },
  spec: {
    signalName: signal,
    signalFingerprint: fingerprint(`${signal}/${kind}/${targetName}`),
    severity: "critical",
    signalType: "alert",
    signalSource: "prometheus",
    targetType: "kubernetes",
    targetResource: target(kind, targetName)
  },
  status
})

/** Remediation requests in the phases a person connecting for the first time should see. */
export const remediations = (apiGroup: string, now: Date) => [
  rr(apiGroup, "rr-checkout-oom", "KubePodCrashLooping", {
    overallPhase: "AwaitingApproval",
    startTime: minutesAgo(now, 12),
    deduplication: { firstSeenAt: minutesAgo(now, 12), lastSeenAt: minutesAgo(now, 1), occurrenceCount: 4 },
    aiAnalysisRef: { name: "ai-rr-checkout-oom", namespace: "" }
  }),
  rr(apiGroup, "rr-cart-latency", "HighLatencyP99", { overallPhase: "Analyzing", startTime: minutesAgo(now, 3) }, "Deployment", "cart"),
  rr(
    apiGroup,
    "rr-payments-disk",
    "NodeDiskPressure",
    {
      overallPhase: "Completed",
      outcome: "Remediated",
      startTime: minutesAgo(now, 180),
      completedAt: minutesAgo(now, 150)
    },
    "Deployment",
    "payments"
  ),
  rr(
    apiGroup,
    "rr-search-blocked",
    "KubePodCrashLooping",
    {
      overallPhase: "Blocked",
      blockReason: "RecentlyRemediated",
      blockMessage: "restart-pod ran on this target 2 minutes ago",
      blockedUntil: new Date(now.getTime() + 3 * 60_000).toISOString(),
      startTime: minutesAgo(now, 2)
    },
    "Deployment",
    "search"
  ),
  rr(
    apiGroup,
    "rr-ledger-failed",
    "JobFailed",
    {
      overallPhase: "Failed",
      failurePhase: "Running",
      failureReason: "workflow execution failed: job backoff limit exceeded",
      startTime: minutesAgo(now, 90),
      completedAt: minutesAgo(now, 70)
    },
    "Deployment",
    "ledger"
  )
]

export const analyses = (apiGroup: string, now: Date) => [
  {
    apiVersion: `${apiGroup}/v1alpha1`,
    kind: "AIAnalysis",
    metadata: { name: "ai-rr-checkout-oom", labels: { [`${apiGroup}/remediation-request`]: "rr-checkout-oom" } },
    spec: { remediationRequestRef: { name: "rr-checkout-oom", kind: "RemediationRequest" } },
    status: {
      phase: "Completed",
      investigationSession: { id: "5b0e7a52-3f0c-4d55-9a61-1f2f7f7c9e11", createdAt: minutesAgo(now, 11) },
      selectedWorkflow: {
        workflowId: workflowIdOf("rollback-deployment"),
        version: workflowVersion,
        workflowName: "rollback-deployment",
        actionType: "RollbackDeployment",
        confidence: 0.72
      },
      rootCauseAnalysis: {
        summary: "checkout is OOMKilled: its 128Mi limit is below the 190Mi working set since release 1.4.2",
        severity: "critical",
        contributingFactors: ["memory limit 128Mi", "release 1.4.2 added an in-memory cart cache"]
      },
      approvalRequired: true,
      approvalReason: "confidence 0.72 is below the auto-approval threshold 0.8"
    }
  }
]

export const approvals = (apiGroup: string, now: Date) => [
  {
    apiVersion: `${apiGroup}/v1alpha1`,
    kind: "RemediationApprovalRequest",
    metadata: { name: "rar-rr-checkout-oom" },
    spec: {
      remediationRequestRef: { name: "rr-checkout-oom", kind: "RemediationRequest" },
      aiAnalysisRef: { name: "ai-rr-checkout-oom" },
      confidence: 0.72,
      confidenceLevel: "medium",
      whyApprovalRequired: "confidence 0.72 is below the auto-approval threshold 0.8",
      investigationSummary: "checkout pods are OOMKilled (exit 137) 14 times in 12 minutes; the limit is 128Mi",
      recommendedWorkflow: {
        workflowId: workflowIdOf("rollback-deployment"),
        version: workflowVersion,
        workflowName: "rollback-deployment",
        rationale: "roll back to 1.4.1, which fits the 128Mi limit"
      },
      recommendedActions: [{
        action: "Roll checkout back to revision 1 (shop/checkout:1.4.1)",
        rationale: "1.4.2's cart cache needs 190Mi; 1.4.1 ran within 128Mi"
      }],
      evidenceCollected: [
        "pod checkout-7d9f8b6c5-x2x7q lastState OOMKilled",
        "event BackOff x14",
        "ReplicaSet checkout-6c4f9d7b8 (revision 1) ran shop/checkout:1.4.1"
      ],
      alternativesConsidered: [
        { approach: "raise the memory limit to 256Mi", prosCons: "keeps 1.4.2, but commits more memory per pod" },
        { approach: "restart the pods", prosCons: "fast, but the OOM returns within minutes" }
      ],
      requiredBy: new Date(now.getTime() + 15 * 60_000).toISOString()
    },
    status: { createdAt: minutesAgo(now, 10) }
  }
]

/**
 * RemediationWorkflow documents registered in the storage catalog. Their labels accept any component, environment
 * and priority, so discovery finds them for every demo incident (interactive ones too, whose severity is unknown).
 * The version is bumped with every content change: a `.data/` kept from an earlier run refuses the same version
 * with different content.
 */
export const workflowDocuments = [
  {
    name: "increase-memory-limit",
    actionType: "IncreaseMemoryLimit",
    what: "Raise a container's memory limit",
    whenToUse: "OOMKilled containers whose working set exceeds the limit",
    extra: [["MEMORY_LIMIT", "string", "New memory limit (default: twice the current one)", false, "^[0-9]+(Mi|Gi)$"]]
  },
  {
    name: "restart-pod",
    actionType: "RestartPod",
    what: "Delete a pod so its controller recreates it",
    whenToUse: "A pod stuck in a bad state that a restart clears"
  },
  {
    name: "rollback-deployment",
    actionType: "RollbackDeployment",
    what: "Roll a deployment back to its previous revision",
    whenToUse: "A release that introduced a regression"
  },
  {
    name: "scale-replicas",
    actionType: "ScaleReplicas",
    what: "Set a workload's replica count",
    whenToUse: "Too few replicas for the load",
    extra: [["REPLICAS", "integer", "Replica count", true]]
  },
  {
    name: "patch-hpa",
    actionType: "PatchHPA",
    what: "Raise a HorizontalPodAutoscaler's maximum",
    whenToUse: "The autoscaler is pinned at its maximum",
    extra: [["MAX_REPLICAS", "integer", "New maxReplicas", true]]
  },
  {
    name: "relax-pdb",
    actionType: "RelaxPDB",
    what: "Loosen a PodDisruptionBudget",
    whenToUse: "A budget blocks a drain or rollout",
    extra: [["MAX_UNAVAILABLE", "string", "New maxUnavailable (default: minAvailable lowered by one)", false]]
  },
  {
    name: "remove-taint",
    actionType: "RemoveTaint",
    what: "Remove a taint from a node",
    whenToUse: "Pods pending because of a stale taint",
    cluster: true,
    extra: [["TAINT_KEY", "string", "Key of the taint to remove", true]]
  },
  {
    name: "cordon-drain-node",
    actionType: "CordonDrainNode",
    what: "Cordon a node and evict its pods",
    whenToUse: "A failing node whose pods should move",
    cluster: true
  }
].map((w) => ({
  name: w.name,
  actionType: w.actionType,
  what: w.what,
  whenToUse: w.whenToUse,
  content: [
    "apiVersion: kubemend.io/v1alpha1",
    "kind: RemediationWorkflow",
    "metadata:",
    `  name: ${w.name}`,
    "spec:",
    `  version: ${workflowVersion}`,
    `  actionType: ${w.actionType}`,
    "  description:",
    `    what: ${w.what}`,
    `    whenToUse: ${w.whenToUse}`,
    "  labels:",
    "    severity: [critical, high, warning]",
    "    component: ['*']",
    "    environment: ['*']",
    "    priority: '*'",
    "  execution:",
    "    engine: job",
    `    bundle: registry.example/kubemend/${w.name}:${workflowVersion}`,
    "  parameters:",
    "    - name: TARGET_NAME",
    "      type: string",
    "      description: Name of the target resource",
    "      required: true",
    "      pattern: '^[a-z0-9.-]+$'",
    "    - name: TARGET_NAMESPACE",
    "      type: string",
    "      description: Namespace of the target resource",
    `      required: ${w.cluster === true ? "false" : "true"}`,
    ...(w.extra ?? []).flatMap(([name, type, description, required, pattern]) => [
      `    - name: ${String(name)}`,
      `      type: ${String(type)}`,
      `      description: ${JSON.stringify(String(description))}`,
      `      required: ${String(required)}`,
      ...(pattern === undefined ? [] : [`      pattern: '${String(pattern)}'`])
    ])
  ].join("\n") + "\n"
}))

/** The catalog id storage gives a demo workflow (deterministic: UUIDv5 of its content hash). */
export const workflowIdOf = (name: string): string => {
  const doc = workflowDocuments.find((w) => w.name === name)
  if (doc === undefined) throw new Error(`no demo workflow named ${name}`)
  return Either.getOrThrowWith(parseWorkflowContent(doc.content), (e) => new Error(e)).workflowId
}
