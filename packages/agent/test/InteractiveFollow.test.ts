/**
 * An opening analysis that outlives `start` (the model is slower than `interactive.startWait`): the session stays
 * `active` with `analysis: running`; `follow` acts on nothing, carries the analysis' events to its caller as
 * notifications, and answers once the analysis answered (`analysis: answered`, the RCA as `summary`), the session
 * still `active` for the user to go on.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { ScriptedLlm, type Script } from "@kubemend/devkit/ScriptedLlm"
import { connect, text } from "./McpClient.ts"
import { AgentOnDevKube, appNs, cluster, namespace } from "./Harness.ts"

const rca = "The checkout pods are OOMKilled: the limit is below the working set."

const scripts: ReadonlyArray<Script> = [{
  name: "slow-opening",
  match: "signal_name: SlowOpening",
  turns: [
    {
      text: "Reading the deployment.",
      toolCalls: [{ name: "cluster_get", arguments: { kind: "Deployment", api_version: "apps/v1", name: "checkout", namespace: appNs } }]
    },
    { text: rca }
  ]
}]

const seed = [
  ...cluster().filter((o) => o.kind === "Deployment" || o.kind === "Pod"),
  {
    apiVersion: "kubemend.io/v1alpha1",
    kind: "RemediationRequest",
    metadata: { name: "rr-slow", namespace },
    spec: {
      signalName: "SlowOpening",
      signalFingerprint: "c".repeat(64),
      severity: "high",
      targetResource: { apiVersion: "apps/v1", kind: "Deployment", name: "checkout", namespace: appNs }
    },
    status: { overallPhase: "Analyzing" }
  }
]

layer(
  AgentOnDevKube({
    scripts,
    seed,
    config: { interactive: { enabled: true, leaseTTL: Duration.seconds(30), inactivityTimeout: Duration.minutes(30), startWait: Duration.millis(50) } }
  }),
  { excludeTestServices: true, timeout: "60 seconds" }
)("following an interactive analysis", (it) => {
  it.scoped("follow answers when the analysis answered, with its events on the way; the session stays active", () =>
    Effect.gen(function* () {
      const llm = yield* ScriptedLlm
      llm.setLatency(400)
      const alice = yield* connect("alice")
      const started = yield* alice.investigate("rr-slow", "start")
      assert.isNotTrue(started.isError, text(started))
      assert.deepInclude(started.structuredContent, { status: "active", analysis: "running" })

      const status = yield* alice.investigate("rr-slow", "status")
      assert.strictEqual(status.structuredContent?.["analysis"], "running")

      const followed = yield* alice.investigate("rr-slow", "follow")
      assert.isNotTrue(followed.isError, text(followed))
      assert.deepInclude(followed.structuredContent, { status: "active", analysis: "answered", summary: rca, holder: "alice" })
      const seen = alice.notifications.map((n) => `${n.event}: ${n.message}`)
      assert.include(seen, "tool_result: cluster_get answered")

      // Nothing running: follow answers at once.
      const again = yield* alice.investigate("rr-slow", "follow")
      assert.strictEqual(again.structuredContent?.["analysis"], "answered")
    }))
})
