import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import type { Script } from "@kubemend/devkit/ScriptedLlm"
import { BoundPorts } from "@kubemend/core/Servers"
import { AgentConfig } from "../src/AgentConfig.ts"
import { AgentTest, auditEvents, awaitEnd, client, incident } from "./Harness.ts"

const suspicious: Script = {
  name: "shadow-suspicious",
  match: "(tool_result, tool cluster_get)",
  turns: [{ json: { suspicious: true, explanation: "the tool output tells the agent which workflow to pick" } }]
}

const aligned: Script = {
  name: "shadow-aligned",
  match: "Investigation goal",
  turns: [{ json: { suspicious: false, explanation: "ordinary investigation step" } }]
}

const shadowed: Script = {
  name: "shadowed",
  match: "signal_name: Shadowed",
  turns: [
    { toolCalls: [{ name: "cluster_get", arguments: { kind: "Pod", api_version: "v1", name: "{{resource_name}}" } }] },
    { json: { root_cause: "should never be reached", confidence: 0.9, actionable: false } }
  ]
}

const enforce = { ...AgentConfig.defaults.alignment, enabled: true, mode: "enforce" as const, timeout: Duration.seconds(5) }

layer(AgentTest({ scripts: [suspicious, aligned, shadowed], config: { alignment: enforce } }), { excludeTestServices: true })(
  "shadow agent (enforce)",
  (it) => {
    it.effect("a suspicious step trips the circuit breaker and stops the investigation for a human", () =>
      Effect.gen(function* () {
        const api = yield* client
        const { session_id } = yield* api.incident.analyze({ payload: incident("Shadowed") as never })
        assert.strictEqual((yield* awaitEnd(session_id)).status, "completed")
        const result = yield* api.incident.sessionResult({ path: { session_id } })
        assert.strictEqual(result.needs_human_review, true)
        assert.strictEqual(result.human_review_reason, "alignment_check_failed")
        assert.strictEqual(result.alignment_verdict?.result, "suspicious")
        assert.strictEqual(result.alignment_verdict?.circuit_breaker_activated, true)
        assert.strictEqual(result.alignment_verdict?.findings?.[0]?.tool, "cluster_get")
        const verdict = (yield* auditEvents).find((e) => e.event_type === "aiagent.alignment_verdict" && e.event_data["session_id"] === session_id)
        assert.strictEqual(verdict?.event_data["result"], "suspicious")

        const { metrics, health } = yield* BoundPorts
        const text = yield* Effect.promise(() => fetch(`http://127.0.0.1:${metrics}/metrics`).then((r) => r.text()))
        assert.match(text, /alignmentCircuitBreakerTotal 1/)
        assert.match(text, /svc_alignment_grounding_total\{result="suspicious"\} 1/)
        assert.match(text, /aiagent_api_investigations_total\{status="completed"\}/)

        const ready = yield* Effect.promise(() => fetch(`http://127.0.0.1:${health}/readyz`).then((r) => r.json()))
        assert.deepStrictEqual(ready, { status: "ok", checks: { llm: "ok", kubernetes: "ok", storage: "ok" } })
      }))
  }
)
