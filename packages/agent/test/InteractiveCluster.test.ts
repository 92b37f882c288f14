/**
 * Interactive sessions against the devkit's dev API server (leases and CRs over real HTTP), through the MCP SDK
 * client: progress notifications during `start`, a REST cancel of an interactive session, and `start_autonomous`.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { DevKube } from "@kubemend/devkit/kube/DevKube"
import type { KubeObject } from "@kubemend/core/K8s"
import { ScriptedLlm, type Script } from "@kubemend/devkit/ScriptedLlm"
import { connect, text } from "./McpClient.ts"
import { AgentOnDevKube, appNs, auditEvents, awaitEnd, client, cluster, fetchRaw, namespace } from "./Harness.ts"

const rr = (name: string, signalName: string): ReadonlyArray<KubeObject> => [
  {
    apiVersion: "kubemend.io/v1alpha1",
    kind: "RemediationRequest",
    metadata: { name, namespace },
    spec: {
      signalName,
      signalFingerprint: "b".repeat(64),
      severity: "high",
      targetResource: { apiVersion: "apps/v1", kind: "Deployment", name: "checkout", namespace: appNs }
    },
    status: { overallPhase: "Analyzing", aiAnalysisRef: { name: `aia-${name}` } }
  },
  {
    apiVersion: "kubemend.io/v1alpha1",
    kind: "AIAnalysis",
    metadata: { name: `aia-${name}`, namespace },
    spec: { remediationRequestRef: { name } },
    status: { phase: "Investigating" }
  }
]

const opening = "The checkout deployment runs 2 replicas and its pods are OOMKilled."

const scripts: ReadonlyArray<Script> = [
  {
    name: "progress",
    match: "signal_name: ProgressStart",
    turns: [
      {
        text: "Reading the deployment.",
        toolCalls: [{ name: "cluster_get", arguments: { kind: "Deployment", api_version: "apps/v1", name: "checkout", namespace: appNs } }]
      },
      { text: opening }
    ]
  },
  { name: "rest-cancel", match: "signal_name: RestCancel", turns: [{ text: "Ready." }] },
  { name: "autonomous", match: "signal_name: AutonomousRun", turns: [{ json: { root_cause: "Memory limit too low", confidence: 0.8, actionable: false } }] }
]

const leaseNames = Effect.map(DevKube, (kube) => kube.list("coordination.k8s.io/v1", "Lease", namespace).map((l) => l.metadata.name))

layer(
  AgentOnDevKube({
    scripts,
    // The dev API server serves no ReplicaSets or PodDisruptionBudgets.
    seed: [
      ...cluster().filter((o) => o.kind === "Deployment" || o.kind === "Pod"),
      ...rr("rr-progress", "ProgressStart"),
      ...rr("rr-rest-cancel", "RestCancel"),
      ...rr("rr-auto", "AutonomousRun")
    ]
  }),
  { excludeTestServices: true, timeout: "60 seconds" }
)("interactive sessions on the dev API server", (it) => {
  it.scoped("the opening analysis of start reaches the MCP client as notifications before start answers", () =>
    Effect.gen(function* () {
      const alice = yield* connect("alice")
      const started = yield* alice.investigate("rr-progress", "start")
      assert.isNotTrue(started.isError, text(started))
      assert.strictEqual(started.structuredContent?.["status"], "active")
      assert.strictEqual(started.structuredContent?.["message"], opening)
      const seen = alice.notifications.map((n) => `${n.event}: ${n.message}`)
      assert.includeMembers(seen, ["tool_call: calling cluster_get", "tool_result: cluster_get answered", `reasoning_delta: ${opening}`])
      assert.isTrue(alice.notifications.every((n) => n.logger === "kubemend-interactive"))
      assert.include(yield* leaseNames, "svc-interactive-rr-progress")
    }))

  it.scoped("a REST cancel of an interactive session releases its lease and marks the AIAnalysis InteractiveCancelled", () =>
    Effect.gen(function* () {
      const alice = yield* connect("alice")
      const started = yield* alice.investigate("rr-rest-cancel", "start")
      const sessionId = String(started.structuredContent?.["session_id"])
      assert.include(yield* leaseNames, "svc-interactive-rr-rest-cancel")

      const res = yield* fetchRaw(`/api/v1/incident/session/${sessionId}/cancel`, { method: "POST" })
      assert.strictEqual(res.status, 200)
      assert.deepStrictEqual(yield* Effect.promise(() => res.json()), { session_id: sessionId, status: "cancelled" })
      assert.notInclude(yield* leaseNames, "svc-interactive-rr-rest-cancel")
      const kube = yield* DevKube
      const aia = kube.get("kubemend.io/v1alpha1", "AIAnalysis", "aia-rr-rest-cancel", namespace)
      assert.strictEqual((aia?.status as { reason?: string }).reason, "InteractiveCancelled")
      const api = yield* client
      assert.strictEqual((yield* api.incident.sessionStatus({ path: { session_id: sessionId } })).status, "cancelled")
      const late = yield* alice.investigate("rr-rest-cancel", "message", { message: "still there?" })
      assert.isTrue(late.isError)
      assert.include(text(late), "has ended")
      const again = yield* fetchRaw(`/api/v1/incident/session/${sessionId}/cancel`, { method: "POST" })
      assert.strictEqual(again.status, 409)
      const event = (yield* auditEvents).find((e) => e.event_type === "aiagent.session.cancelled" && e.event_data["session_id"] === sessionId)
      assert.strictEqual(event?.event_data["via"], "rest")
    }))

  it.scoped("start_autonomous runs an autonomous investigation of an existing RR for the acting user, without a lease", () =>
    Effect.gen(function* () {
      const llm = yield* ScriptedLlm
      const bob = yield* connect("bob")
      llm.setLatency(300)
      const first = yield* bob.investigate("rr-auto", "start_autonomous")
      const second = yield* bob.investigate("rr-auto", "start_autonomous")
      llm.setLatency(0)
      assert.isNotTrue(first.isError, text(first))
      assert.strictEqual(first.structuredContent?.["status"], "autonomous_started")
      const sessionId = String(first.structuredContent?.["session_id"])
      assert.match(sessionId, /^[0-9a-f-]{36}$/)
      assert.deepInclude(second.structuredContent, { status: "already_running", session_id: sessionId })
      assert.notInclude(yield* leaseNames, "svc-interactive-rr-auto")

      const status = yield* awaitEnd(sessionId)
      assert.strictEqual(status.status, "completed")
      assert.strictEqual(status.acting_user, "bob")
      const result = yield* (yield* client).incident.sessionResult({ path: { session_id: sessionId } })
      assert.strictEqual(result.root_cause, "Memory limit too low")

      const missing = yield* bob.investigate("rr-nowhere", "start_autonomous")
      assert.isTrue(missing.isError)
      assert.include(text(missing), "remediation request rr-nowhere not found")
    }))
})
