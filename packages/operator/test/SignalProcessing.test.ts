/**
 * Signal processing and policy: the SignalProcessing of a request is enriched from the cluster (namespace labels,
 * workload, owner chain, detected labels) and classified by policy.rego through the policy engine's REST API; the
 * analysis gets the enrichment; approval.rego decides approval (a production rule honoured), and an unreachable
 * engine means approval required, counted as degraded, never auto-approval.
 */
import { describe, expect, it } from "@effect/vitest"
import type { KubeObject } from "@kubemend/core/K8s"
import { Duration, Effect, Option } from "effect"
import { defaultPolicies } from "../src/policy/Defaults.ts"
import { harness, managedNamespace, rr, sample, workloads } from "./LifecycleHarness.ts"

const config = { stabilizationWindow: Duration.minutes(1) }

const owner = (apiVersion: string, kind: string, name: string) => [{ apiVersion, kind, name, uid: `${name}-uid`, controller: true }]

/** The shop namespace (labelled production) with a Helm/Argo CD-managed Deployment, its ReplicaSet and Pod, an HPA and a PDB. */
const shop: ReadonlyArray<KubeObject> = [
  { ...managedNamespace(), metadata: { name: workloads, labels: { "kubemend.io/managed": "true", environment: "production", "kubemend.io/priority": "P1" } } },
  {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "checkout",
      namespace: workloads,
      uid: "checkout-uid",
      labels: { "app.kubernetes.io/managed-by": "Helm", "argocd.argoproj.io/instance": "shop", "kubemend.io/criticality": "High" }
    },
    spec: { replicas: 2, selector: { matchLabels: { app: "checkout" } }, template: { metadata: { labels: { app: "checkout", tier: "web" } } } }
  },
  {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: "checkout-7d9f", namespace: workloads, ownerReferences: owner("apps/v1", "Deployment", "checkout") }
  },
  {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "checkout-7d9f-abcde", namespace: workloads, ownerReferences: owner("apps/v1", "ReplicaSet", "checkout-7d9f") }
  },
  {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: { name: "checkout", namespace: workloads },
    spec: { scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "checkout" }, minReplicas: 2, maxReplicas: 5 }
  },
  {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: { name: "checkout", namespace: workloads },
    spec: { minAvailable: 1, selector: { matchLabels: { app: "checkout" } } }
  }
]

const podAlert = (name: string, labels: Record<string, string> = {}) => {
  const o = rr(name) as { spec: Record<string, unknown> }
  return {
    ...o,
    spec: { ...o.spec, signalLabels: { alertname: "KubePodCrashLooping", namespace: workloads, pod: "checkout-7d9f-abcde", ...labels } }
  } as KubeObject
}

const productionApproval = `package approval
import rego.v1
default require_approval := false
require_approval if input.confidence < input.threshold
require_approval if input.environment == "production"
reasons contains "production changes need a person's approval" if input.environment == "production"
`

describe("signal processing and policy", () => {
  it.scoped("enrichment and classification are written to the SignalProcessing and handed to the analysis", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config, seed: [...shop, podAlert("rr-a")] })
      h.agent.script = () => ({ result: { confidence: 0.95 } })
      yield* h.settle
      const sp = Option.getOrThrow(yield* h.get("signalprocessings", "sp-rr-a"))
      expect(sp.status).toMatchObject({
        phase: "Completed",
        environment: "production",
        priority: "P1",
        criticality: "High",
        actionable: true,
        policyDegraded: false,
        enrichmentResults: {
          kubernetesContext: {
            namespace: { name: workloads, labels: { environment: "production" } },
            workload: { kind: "Deployment", name: "checkout", labels: { "app.kubernetes.io/managed-by": "Helm" } },
            ownerChain: [
              { kind: "ReplicaSet", name: "checkout-7d9f", namespace: workloads, api_version: "apps/v1" },
              { kind: "Deployment", name: "checkout", namespace: workloads, api_version: "apps/v1" }
            ],
            degradedMode: false
          },
          detectedLabels: {
            gitOpsManaged: true,
            gitOpsTool: "argocd",
            helmManaged: true,
            hpaEnabled: true,
            pdbProtected: true,
            stateful: false,
            failedDetections: []
          },
          businessClassification: { criticality: "High" }
        }
      })
      const ai = Option.getOrThrow(yield* h.get("aianalyses", "ai-rr-a"))
      expect(ai.spec.analysisRequest.signalContext).toMatchObject({
        environment: "production",
        businessPriority: "P1",
        enrichmentResults: { detectedLabels: { hpaEnabled: true }, businessClassification: { criticality: "High" } }
      })
      expect(h.agent.submitted[0]).toMatchObject({
        environment: "production",
        priority: "P1",
        enrichment_results: { kubernetesContext: { workload: { name: "checkout" } }, businessClassification: { criticality: "High" } }
      })
      // The shipped approval.rego: 0.95 is above the threshold, so no approval in any environment.
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("Running")
      const metrics = yield* h.metrics
      expect(sample(metrics, "signalprocessing_processing_total", { phase: "Enriching", result: "success" })).toBe(1)
      expect(sample(metrics, "signalprocessing_processing_total", { phase: "Classifying", result: "success" })).toBe(1)
      expect(sample(metrics, "signalprocessing_processing_duration_seconds_count", { phase: "Completed" })).toBe(1)
      expect(sample(metrics, "aianalysis_rego_evaluations_total", { outcome: "AutoApprove", degraded: "false" })).toBe(1)
      expect(sample(metrics, "aianalysis_approval_decisions_total", { decision: "auto_approved", environment: "production" })).toBe(1)
      expect(sample(metrics, "aianalysis_confidence_score_distribution_count", { signal_type: "alert" })).toBe(1)
    }))

  it.scoped("a policy requiring approval for environment=production is honoured; staging is auto-approved", () =>
    Effect.gen(function* () {
      const staging: KubeObject = {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "staging", labels: { "kubemend.io/managed": "true", environment: "staging" } }
      }
      const stagingDeployment: KubeObject = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "checkout", namespace: "staging" } }
      const h = yield* harness({
        config,
        policies: { "approval.rego": productionApproval },
        seed: [...shop, staging, stagingDeployment, rr("rr-prod"), rr("rr-stage", { fingerprint: "b".repeat(64), targetNamespace: "staging" })]
      })
      h.agent.script = () => ({ result: { confidence: 0.99 } })
      yield* h.settle
      expect((yield* h.rr("rr-prod")).status.overallPhase).toBe("AwaitingApproval")
      expect((yield* h.rr("rr-stage")).status.overallPhase).toBe("Running")
      const ai = Option.getOrThrow(yield* h.get("aianalyses", "ai-rr-prod"))
      expect(ai.status).toMatchObject({
        approvalRequired: true,
        approvalReason: "production changes need a person's approval",
        approvalContext: { policyName: "approval.rego", policyDecision: "RequireApproval", policyDegraded: false }
      })
      const rar = Option.getOrThrow(yield* h.get("remediationapprovalrequests", "rar-rr-prod"))
      expect(rar.spec).toMatchObject({
        confidence: 0.99,
        whyApprovalRequired: "production changes need a person's approval",
        policyEvaluation: { policyName: "approval.rego", matchedRules: ["production changes need a person's approval"], decision: "RequireApproval" }
      })
      const metrics = yield* h.metrics
      expect(sample(metrics, "aianalysis_approval_decisions_total", { decision: "requires_approval", environment: "production" })).toBe(1)
      expect(sample(metrics, "aianalysis_approval_decisions_total", { decision: "auto_approved", environment: "staging" })).toBe(1)
    }))

  it.scoped("an unreachable policy engine: built-in classification, and approval required (degraded), never auto-approval", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config: { ...config, policy: { requestTimeout: Duration.seconds(1) } }, seed: [...shop, rr("rr-a")] })
      h.agent.script = () => ({ result: { confidence: 0.99 } })
      h.opa.setFault("unavailable")
      yield* h.settle
      expect(Option.getOrThrow(yield* h.get("signalprocessings", "sp-rr-a")).status).toMatchObject({
        phase: "Completed",
        environment: "production",
        priority: "P1",
        policyDegraded: true,
        message: expect.stringContaining("policy engine unavailable")
      })
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("AwaitingApproval")
      const ai = Option.getOrThrow(yield* h.get("aianalyses", "ai-rr-a"))
      expect(ai.status.approvalReason).toContain("policy engine unavailable")
      const rar = Option.getOrThrow(yield* h.get("remediationapprovalrequests", "rar-rr-a"))
      expect(rar.spec.policyEvaluation.decision).toBe("RequireApproval (policy engine degraded)")
      const metrics = yield* h.metrics
      expect(sample(metrics, "aianalysis_rego_evaluations_total", { outcome: "RequireApproval", degraded: "true" })).toBe(1)
      expect(sample(metrics, "aianalysis_rego_evaluations_total", { outcome: "AutoApprove" })).toBe(0)
      expect(sample(metrics, "signalprocessing_processing_total", { phase: "Classifying", result: "degraded" })).toBe(1)
    }))

  it.scoped("a policy that answers no decision is treated as degraded: approval required", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config, policies: { "approval.rego": "package approval\nnote := \"nothing decided\"\n" }, seed: [...shop, rr("rr-a")] })
      h.agent.script = () => ({ result: { confidence: 0.99 } })
      yield* h.settle
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("AwaitingApproval")
      expect(sample(yield* h.metrics, "aianalysis_rego_evaluations_total", { outcome: "RequireApproval", degraded: "true" })).toBe(1)
    }))

  it.scoped("a signal policy.rego calls not actionable completes NoActionRequired without an analysis", () =>
    Effect.gen(function* () {
      const quietHours = defaultPolicies["policy.rego"].replace(
        "default actionable := true",
        "default actionable := true\n\nactionable := false if input.signal.severity == \"info\""
      )
      const info = rr("rr-info") as { spec: Record<string, unknown> }
      const h = yield* harness({
        config,
        policies: { "policy.rego": quietHours },
        seed: [...shop, { ...info, spec: { ...info.spec, severity: "info" } } as KubeObject]
      })
      yield* h.settle
      expect((yield* h.rr("rr-info")).status).toMatchObject({ overallPhase: "Completed", outcome: "NoActionRequired" })
      expect(Option.isNone(yield* h.get("aianalyses", "ai-rr-info"))).toBe(true)
      expect(h.agent.submitted).toEqual([])
    }))

  it.scoped("a target that is gone degrades the enrichment (counted by error type) and the remediation goes on", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config, seed: [shop[0]!, rr("rr-a", { target: "vanished" })] })
      h.agent.script = () => ({ result: { confidence: 0.95 } })
      yield* h.settle
      const sp = Option.getOrThrow(yield* h.get("signalprocessings", "sp-rr-a"))
      expect(sp.status).toMatchObject({
        phase: "Completed",
        environment: "production",
        enrichmentResults: {
          kubernetesContext: { degradedMode: true, ownerChain: [] },
          detectedLabels: { hpaEnabled: false, failedDetections: ["hpaEnabled", "pdbProtected"] }
        }
      })
      expect(sample(yield* h.metrics, "signalprocessing_enrichment_errors_total", { error_type: "target_not_found" })).toBe(1)
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("Running")
    }))
})
