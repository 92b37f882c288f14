import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ScriptedLlm } from "@kubemend/devkit/ScriptedLlm"
import type { Script } from "@kubemend/devkit/ScriptedLlm"
import { AgentTest, auditEvents, awaitEnd, client, fetchRaw, incident, restartId } from "./Harness.ts"

const happy: Script = {
  name: "happy",
  match: "signal_name: HappyPath",
  turns: [
    {
      text: "Looking at the pod and its owner.",
      toolCalls: [
        { name: "cluster_get", arguments: { kind: "Pod", api_version: "v1", name: "{{resource_name}}", namespace: "{{resource_namespace}}" } },
        { name: "resolve_owner", arguments: { kind: "Pod", name: "{{resource_name}}", namespace: "{{resource_namespace}}" } }
      ]
    },
    { toolCalls: [{ name: "list_available_actions", arguments: {} }, { name: "list_workflows", arguments: { action_type: "RestartDeployment" } }] },
    {
      json: {
        root_cause: "The checkout container is OOMKilled: its memory limit is too low",
        confidence: 0.85,
        severity: "high",
        contributing_factors: ["memory limit", "traffic peak"],
        investigation_outcome: "workflow_selected",
        actionable: true,
        selected_workflow: { workflow_id: restartId, parameters: { NAMESPACE: "shop", DEPLOYMENT: "checkout" }, rationale: "restart clears the loop" }
      }
    }
  ]
}

const slow: Script = {
  name: "slow",
  match: "signal_name: SlowOne",
  turns: [{ json: { root_cause: "slow", confidence: 0.5, actionable: false } }]
}

const endless: Script = {
  name: "endless",
  match: "signal_name: Endless",
  turns: [{ toolCalls: [{ name: "cluster_list_events", arguments: {} }] }]
}

const noAction: Script = {
  name: "no-action",
  match: "signal_name: Benign",
  turns: [{ json: { root_cause: "A one-off restart during a node upgrade; nothing to do", confidence: 0.9, actionable: false } }]
}

layer(AgentTest({ scripts: [happy, slow, endless, noAction], config: { maxTurns: 3 } }), { excludeTestServices: true })("REST sessions", (it) => {
  it.effect("submit -> poll -> result, end to end through the scripted model", () =>
    Effect.gen(function* () {
      const api = yield* client
      const { session_id } = yield* api.incident.analyze({ payload: incident("HappyPath") as never })
      assert.match(session_id, /^[0-9a-f-]{36}$/)
      const status = yield* awaitEnd(session_id)
      assert.strictEqual(status.status, "completed")
      const result = yield* api.incident.sessionResult({ path: { session_id } })
      assert.strictEqual(result.root_cause, "The checkout container is OOMKilled: its memory limit is too low")
      assert.strictEqual(result.confidence, 0.85)
      assert.strictEqual(result.actionable, true)
      assert.strictEqual(result.needs_human_review, false)
      assert.strictEqual(result.selected_workflow?.workflow_id, restartId)
      assert.deepStrictEqual(result.selected_workflow?.parameters, { NAMESPACE: "shop", DEPLOYMENT: "checkout" })
      assert.deepStrictEqual((result.root_cause_analysis as Record<string, unknown>)["remediation_target"], {
        kind: "Deployment",
        name: "checkout",
        namespace: "shop",
        apiVersion: "apps/v1"
      })
      assert.strictEqual(result.detected_labels?.["helmManaged"], true)
      assert.strictEqual(result.detected_labels?.["pdbProtected"], true)
      const events = yield* auditEvents
      const complete = events.find((e) => e.event_type === "aiagent.response.complete" && e.event_data["session_id"] === session_id)
      assert.isDefined(complete)
      assert.isAbove(complete!.event_data["total_prompt_tokens"] as number, 0)
      assert.isAbove(complete!.event_data["total_completion_tokens"] as number, 0)
      assert.isDefined(events.find((e) => e.event_type === "aiagent.alignment_verdict" && e.event_data["session_id"] === session_id))
      const snapshot = yield* api.incident.sessionSnapshot({ path: { session_id } })
      assert.strictEqual(snapshot.status, "completed")
    }))

  it.effect("a session without a workflow completes as not actionable", () =>
    Effect.gen(function* () {
      const api = yield* client
      const { session_id } = yield* api.incident.analyze({ payload: incident("Benign") as never })
      yield* awaitEnd(session_id)
      const result = yield* api.incident.sessionResult({ path: { session_id } })
      assert.strictEqual(result.actionable, false)
      assert.strictEqual(result.is_actionable, false)
      assert.strictEqual(result.selected_workflow, null)
      assert.strictEqual(result.needs_human_review, false)
    }))

  it.effect("409 conflict before completion, then cancel; a second cancel is 409", () =>
    Effect.gen(function* () {
      const scripted = yield* ScriptedLlm
      scripted.setLatency(400)
      const api = yield* client
      const { session_id } = yield* api.incident.analyze({ payload: incident("SlowOne") as never })
      const early = yield* fetchRaw(`/api/v1/incident/session/${session_id}/result`)
      assert.strictEqual(early.status, 409)
      assert.strictEqual(early.headers.get("content-type"), "application/problem+json")
      const problem = (yield* Effect.promise(() => early.json())) as Record<string, unknown>
      assert.strictEqual(problem["title"], "Conflict")
      assert.match(String(problem["type"]), /\/conflict$/)
      const cancelled = yield* api.incident.cancelSession({ path: { session_id } })
      assert.deepStrictEqual(cancelled, { session_id, status: "cancelled" })
      const status = yield* api.incident.sessionStatus({ path: { session_id } })
      assert.strictEqual(status.status, "cancelled")
      const again = yield* fetchRaw(`/api/v1/incident/session/${session_id}/cancel`, { method: "POST" })
      assert.strictEqual(again.status, 409)
      scripted.setLatency(0)
    }))

  it.effect("404 problem for an unknown session", () =>
    Effect.gen(function* () {
      const res = yield* fetchRaw("/api/v1/incident/session/00000000-0000-4000-8000-000000000000")
      assert.strictEqual(res.status, 404)
      assert.strictEqual(res.headers.get("content-type"), "application/problem+json")
      const body = (yield* Effect.promise(() => res.json())) as Record<string, unknown>
      assert.strictEqual(body["status"], 404)
      const stream = yield* fetchRaw("/api/v1/incident/session/nope/stream")
      assert.strictEqual(stream.status, 404)
    }))

  it.effect("400 validation problem for a bad request body, 413 for an oversized one", () =>
    Effect.gen(function* () {
      const res = yield* fetchRaw("/api/v1/incident/analyze", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ incident_id: "x", severity: "catastrophic" })
      })
      assert.strictEqual(res.status, 400)
      assert.strictEqual(res.headers.get("content-type"), "application/problem+json")
      const body = (yield* Effect.promise(() => res.json())) as Record<string, unknown>
      assert.match(String(body["type"]), /validation-error$/)
      assert.strictEqual(body["title"], "Bad Request")
      const junk = yield* fetchRaw("/api/v1/incident/analyze", { method: "POST", headers: { "content-type": "application/json" }, body: "{" })
      assert.strictEqual(junk.status, 400)
      const huge = yield* fetchRaw("/api/v1/incident/analyze", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ incident_id: "x", error_message: "x".repeat(2 * 1024 * 1024) })
      })
      assert.strictEqual(huge.status, 413)
      assert.strictEqual(huge.headers.get("content-type"), "application/problem+json")
    }))

  it.effect("maxTurns ends the session failed with a reason", () =>
    Effect.gen(function* () {
      const api = yield* client
      const { session_id } = yield* api.incident.analyze({ payload: incident("Endless") as never })
      const status = yield* awaitEnd(session_id)
      assert.strictEqual(status.status, "failed")
      assert.match(status.error ?? "", /maxTurns \(3\)/)
      const result = yield* api.incident.sessionResult({ path: { session_id } })
      assert.strictEqual(result.needs_human_review, true)
    }))

  it.effect("LLM 429s are retried; exhausted retries fail the session with a reason", () =>
    Effect.gen(function* () {
      const scripted = yield* ScriptedLlm
      const api = yield* client
      scripted.failNext(2, { status: 429, retryAfterSeconds: 0 })
      const ok = yield* api.incident.analyze({ payload: incident("Benign", { remediation_id: "rr-429-ok" }) as never })
      assert.strictEqual((yield* awaitEnd(ok.session_id)).status, "completed")
      scripted.failNext(10, { status: 429, retryAfterSeconds: 0 })
      const ko = yield* api.incident.analyze({ payload: incident("Benign", { remediation_id: "rr-429-ko" }) as never })
      const status = yield* awaitEnd(ko.session_id)
      scripted.reset()
      assert.strictEqual(status.status, "failed")
      assert.match(status.error ?? "", /429/)
    }))

  it.effect("the event stream replays the session's events and ends with session_ended", () =>
    Effect.gen(function* () {
      const api = yield* client
      const { session_id } = yield* api.incident.analyze({ payload: incident("HappyPath", { remediation_id: "rr-stream" }) as never })
      yield* awaitEnd(session_id)
      const res = yield* fetchRaw(`/api/v1/incident/session/${session_id}/stream`)
      assert.strictEqual(res.headers.get("content-type"), "text/event-stream")
      const text = yield* Effect.promise(() => res.text())
      for (const type of ["tool_call", "tool_result", "complete", "session_ended"]) assert.include(text, `event: ${type}\n`)
      assert.match(text, /^id: 1\n/)
    }))

  it.effect("serves its OpenAPI 3.1 document", () =>
    Effect.gen(function* () {
      const res = yield* fetchRaw("/api/v1/openapi.json")
      const doc = (yield* Effect.promise(() => res.json())) as { openapi: string; paths: Record<string, unknown> }
      assert.strictEqual(doc.openapi, "3.1.0")
      assert.property(doc.paths, "/api/v1/incident/session/{session_id}/result")
      const config = yield* fetchRaw("/config")
      assert.strictEqual(config.status, 404)
      const nowhere = yield* fetchRaw("/api/v1/nowhere")
      assert.strictEqual(nowhere.status, 404)
      assert.strictEqual(nowhere.headers.get("content-type"), "application/problem+json")
    }))
})
