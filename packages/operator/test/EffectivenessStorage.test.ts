/**
 * The effectiveness monitor's events in the real storage service: the lifecycle controllers run on their own (watches,
 * work queues, the workflow execution controller, whose Jobs the test completes as a Job controller would) against the dev API server, audit to storage (embedded PostgreSQL) with the
 * operator's ServiceAccount token, and storage's effectiveness and remediation-history endpoints then answer from
 * what the monitor measured — a healthy target scores 1, a crash-looping one 0.
 */
import { describe, expect, it } from "@effect/vitest"
import { make as makeAlerts } from "@kubemend/devkit/Alerts"
import { DevKube } from "@kubemend/devkit/kube/index"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Storage } from "@kubemend/core/Storage"
import { Duration, Effect, Layer, Logger, LogLevel, Option, Redacted, Schedule } from "effect"
import { grantStorageClient, startStorage } from "../../gateway/test/support/StorageProcess.ts"
import { renderCrds } from "../src/Crds.ts"
import { layerInProcess } from "../src/Controllers.ts"
import { LifecycleAudit } from "../src/remediation/LifecycleAudit.ts"
import { fakeAgentToken, startFakeAgent, workflowResult } from "./FakeAgent.ts"
import { apiGroup, managedNamespace, namespace, policyEngine, rr, workload, workloads } from "./LifecycleHarness.ts"

describe("effectiveness in storage", () => {
  it.live("a recovered and a still-broken target: storage scores them from the monitor's events", () =>
    Effect.gen(function* () {
      const kube = yield* DevKube.scoped({ apiGroup })
      kube.seed([
        { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
        { apiVersion: "v1", kind: "Namespace", metadata: { name: "kubemend-workflows" } },
        managedNamespace(),
        ...renderCrds(apiGroup),
        ...workload("checkout"),
        ...workload("cart", { ready: 0 })
      ])
      const storage = yield* startStorage(kube, namespace)
      const token = Redacted.make(kube.registerServiceAccountToken(namespace, "kubemend-operator"))
      grantStorageClient(kube, namespace, "kubemend-operator")
      const alerts = yield* makeAlerts({
        alerts: [{ labels: { alertname: "KubePodCrashLooping", namespace: workloads, pod: "cart-0" }, state: "firing", activeAt: new Date().toISOString() }],
        // checkout restarted every 10 s in the minute before the remediation and not since (the check looks 60 s back).
        series: [{
          labels: { __name__: "kube_pod_container_status_restarts_total", namespace: workloads, pod: "checkout-0", container: "app" },
          values: [0, 1, 2, 3, 4, 5, 6, 6, 6, 6, 6, 6, 6],
          stepSeconds: 10
        }]
      })
      const storageLayer = Storage.layer({ baseUrl: storage.url, token })
      // The workflow the agent selects, in the catalog the execution controller reads it from.
      const catalog = yield* Effect.provide(Storage, storageLayer)
      yield* catalog.registerActionType({
        name: "IncreaseMemoryLimit",
        description: { what: "Raise a memory limit", whenToUse: "OOMKilled" },
        registeredBy: "test"
      })
      const { workflow } = yield* catalog.registerWorkflow({
        source: "api",
        registeredBy: "test",
        content: [
          "apiVersion: kubemend.io/v1alpha1",
          "kind: RemediationWorkflow",
          "metadata:",
          "  name: increase-memory-limit",
          "spec:",
          "  version: 1.0.0",
          "  actionType: IncreaseMemoryLimit",
          "  description:",
          "    what: Raise a memory limit",
          "    whenToUse: OOMKilled",
          "  labels:",
          "    severity: ['*']",
          "    component: ['*']",
          "    environment: ['*']",
          "    priority: '*'",
          "  execution:",
          "    engine: job",
          "    bundle: registry.example/increase-memory-limit:1.0.0",
          "  parameters:",
          "    - { name: MEMORY_LIMIT, type: string, required: true, description: limit }"
        ].join("\n") + "\n"
      })
      const agent = yield* startFakeAgent
      agent.script = () => ({
        polls: 1,
        result: { confidence: 0.95, selected_workflow: { ...workflowResult().selected_workflow!, workflow_id: workflow.workflowId } }
      })
      // Plays the Job controller: every workflow Job succeeds.
      yield* Effect.sync(() => {
        for (const job of kube.list("batch/v1", "Job", "kubemend-workflows")) {
          if (job.status === undefined) kube.put({ ...job, status: { succeeded: 1, conditions: [{ type: "Complete", status: "True", reason: "Completed" }] } })
        }
      }).pipe(Effect.repeat(Schedule.spaced("20 millis")), Effect.forkScoped)
      const opa = yield* policyEngine()
      yield* Logger.withMinimumLogLevel(
        Layer.build(layerInProcess({
          kubeconfig: kube.kubeConfig(),
          namespace,
          apiGroup,
          agentUrl: agent.url,
          agentToken: Option.some(Redacted.make(fakeAgentToken)),
          policy: { url: opa.url },
          pollInterval: Duration.millis(20),
          stabilizationWindow: Duration.millis(200),
          execution: { pollInterval: Duration.millis(50) },
          audit: LifecycleAudit.layerStorage({ baseUrl: storage.url, token }, { flushInterval: Duration.millis(100) }),
          storage: storageLayer,
          effectiveness: { metricsUrl: Option.some(alerts.url) }
        })),
        LogLevel.Warning
      )
      const k8s = yield* K8sLive.make({ namespace, apiGroup, kubeconfig: kube.kubeConfig() })
      yield* k8s.createCr("remediationrequests", rr("rr-healed"))
      yield* k8s.createCr("remediationrequests", rr("rr-broken", { fingerprint: "b".repeat(64), target: "cart" }))
      const outcome = (name: string) =>
        k8s.getCr("remediationrequests", name).pipe(
          Effect.map((o) => (o.status as { outcome?: string } | undefined)?.outcome),
          Effect.filterOrFail((o): o is string => o !== undefined, () => new Error(`${name} has no outcome yet`)),
          Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("20 seconds")))
        )
      expect(yield* outcome("rr-healed")).toBe("Remediated")
      expect(yield* outcome("rr-broken")).toBe("Inconclusive")

      const client = yield* Effect.provide(Storage, storageLayer)
      const scored = (name: string) =>
        client.effectiveness(name).pipe(
          Effect.filterOrFail((s) => s.assessment_status !== "in_progress", () => new Error("in progress")),
          Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo("15 seconds")))
        )
      const healed = yield* scored("rr-healed")
      expect(healed).toMatchObject({
        score: 1,
        assessment_status: "Full",
        components: { health_assessed: true, health_score: 1, alert_assessed: true, alert_score: 1, metrics_assessed: true, metrics_score: 1 },
        // The execution captured the spec before the run; the test's Job changed nothing, so the hashes match.
        hash_comparison: { hash_match: true }
      })
      expect(healed.hash_comparison?.post_remediation_spec_hash).toMatch(/^sha256:[0-9a-f]{64}$/)
      const broken = yield* scored("rr-broken")
      expect(broken).toMatchObject({ score: 0, components: { health_score: 0, alert_score: 0 } })
      expect(broken.components.health_details).toContain("CrashLoopBackOff")

      // The RR's completion event may still be in the operator's audit buffer: read until it is there.
      const history = yield* client.remediationHistory({ targetKind: "Deployment", targetName: "cart", targetNamespace: workloads }).pipe(
        Effect.filterOrFail((h) => h.tier1.chain[0]?.outcome === "Inconclusive", () => new Error("no outcome yet")),
        Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo("15 seconds"))),
        Effect.orElse(() => client.remediationHistory({ targetKind: "Deployment", targetName: "cart", targetNamespace: workloads }))
      )
      expect(history.tier1.chain).toEqual([
        expect.objectContaining({
          remediationUID: "rr-broken",
          outcome: "Inconclusive",
          effectivenessScore: 0,
          signalResolved: false,
          healthChecks: expect.objectContaining({ crash_loops: true, ready_replicas: 0 })
        })
      ])
    }).pipe(Effect.scoped), { timeout: 120_000 })
})
