/**
 * The safety anomaly limits at their defaults (10 calls per tool, 40 in total, 3 consecutive failures), through
 * REST with the scripted model: what the model is told, what the cluster actually received, and what the result
 * says.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { KubeObject } from "@kubemend/core/K8s"
import { actions } from "@kubemend/core/K8s/Memory"
import { ScriptedLlm, type Script, type ScriptedToolCall } from "@kubemend/devkit/ScriptedLlm"
import { AgentTest, appNs, awaitEnd, client, cluster, incident } from "./Harness.ts"

const probe = (name: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: appNs, uid: `uid-${name}` },
  spec: { containers: [{ name: "app", image: "shop/probe:1" }] },
  status: { phase: "Running" }
})

const getPod = (name: string): ScriptedToolCall => ({ name: "cluster_get", arguments: { kind: "Pod", api_version: "v1", name } })
const times = (n: number, call: ScriptedToolCall) => Array.from({ length: n }, () => call)
const done = { json: { root_cause: "The pods are fine", confidence: 0.6, actionable: false } }

const perTool: Script = {
  name: "per-tool",
  match: "signal_name: PerToolLimit",
  turns: [{ toolCalls: times(12, getPod("probe-a")) }, done]
}

const failing: Script = {
  name: "failing",
  match: "signal_name: RepeatedFailures",
  turns: [
    { toolCalls: times(3, getPod("ghost-pod")) },
    { toolCalls: [getPod("ghost-pod"), { name: "cluster_list", arguments: { kind: "Pod", api_version: "v1" } }] },
    done
  ]
}

const greedy: Script = {
  name: "greedy",
  match: "signal_name: TotalLimit",
  turns: [
    {
      toolCalls: [
        ...times(8, getPod("probe-b")),
        ...times(8, { name: "cluster_list", arguments: { kind: "Pod", api_version: "v1" } }),
        ...times(8, { name: "cluster_list_events", arguments: {} }),
        ...times(8, { name: "list_available_actions", arguments: {} }),
        ...times(8, { name: "list_workflows", arguments: { action_type: "RestartDeployment" } })
      ]
    },
    // Told the budget is spent (and offered no tools), the model asks for one more.
    { toolCalls: [getPod("probe-b")] },
    done
  ]
}

const gets = (name: string) => Effect.map(actions, (all) => all.filter((a) => a.verb === "get" && a.plural === "pods" && a.name === name).length)

/** The tool messages of the last request the model received in the conversation of `signal`. */
const toolMessagesSeen = (signal: string) =>
  Effect.map(ScriptedLlm, (llm) => {
    const last = llm.requests.filter((r) => r.body?.messages?.[1]?.content?.includes(`signal_name: ${signal}`)).at(-1)!
    return (last.body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === "tool").map((m) => m.content)
  })

layer(
  AgentTest({ scripts: [perTool, failing, greedy], seed: [...cluster(), probe("probe-a"), probe("probe-b")] }),
  { excludeTestServices: true }
)("anomaly limits", (it) => {
  it.effect("the 11th call of one tool is refused, not executed; the run goes on and its result names the limit", () =>
    Effect.gen(function* () {
      const api = yield* client
      const { session_id } = yield* api.incident.analyze({ payload: incident("PerToolLimit") as never })
      assert.strictEqual((yield* awaitEnd(session_id)).status, "completed")
      assert.strictEqual(yield* gets("probe-a"), 10)
      const seen = yield* toolMessagesSeen("PerToolLimit")
      assert.lengthOf(seen, 12)
      assert.include(seen[9]!, "probe-a")
      for (const refused of seen.slice(10)) assert.include(refused, "cluster_get reached its limit of 10 calls")
      const result = yield* api.incident.sessionResult({ path: { session_id } })
      assert.strictEqual(result.needs_human_review, false)
      assert.include(result.warnings ?? [], "anomaly limit: cluster_get reached its limit of 10 calls in this investigation; use what you have")
    }))

  it.effect("after 3 failures in a row a tool is disabled; other tools still run", () =>
    Effect.gen(function* () {
      const api = yield* client
      const { session_id } = yield* api.incident.analyze({ payload: incident("RepeatedFailures") as never })
      assert.strictEqual((yield* awaitEnd(session_id)).status, "completed")
      assert.strictEqual(yield* gets("ghost-pod"), 3)
      const seen = yield* toolMessagesSeen("RepeatedFailures")
      for (const miss of seen.slice(0, 3)) assert.include(miss, "not found")
      assert.include(seen[3]!, "cluster_get failed 3 times in a row and is disabled")
      assert.include(seen[4]!, "checkout-7d9f-abcde")
      const result = yield* api.incident.sessionResult({ path: { session_id } })
      assert.isTrue((result.warnings ?? []).some((w) => w.includes("cluster_get failed 3 times in a row")))
    }))

  it.effect("past the total budget of 40 calls the model gets no tools; asking anyway escalates to a human", () =>
    Effect.gen(function* () {
      const llm = yield* ScriptedLlm
      const api = yield* client
      const { session_id } = yield* api.incident.analyze({ payload: incident("TotalLimit") as never })
      assert.strictEqual((yield* awaitEnd(session_id)).status, "completed")
      assert.strictEqual(yield* gets("probe-b"), 8)
      const turns = llm.requests.filter((r) => r.body?.messages?.[1]?.content?.includes("signal_name: TotalLimit"))
      assert.lengthOf(turns, 2)
      assert.isUndefined(turns[1]!.body.tools)
      assert.include(turns[1]!.body.messages.at(-1).content, "tool budget for this investigation is used up")
      const result = yield* api.incident.sessionResult({ path: { session_id } })
      assert.strictEqual(result.needs_human_review, true)
      assert.strictEqual(result.human_review_reason, "investigation_inconclusive")
      assert.include(result.root_cause ?? "", "Anomaly limit")
      assert.include(result.root_cause ?? "", "40")
      assert.isTrue((result.warnings ?? []).some((w) => w.startsWith("anomaly limit: the tool budget of 40 calls")))
    }))
})
