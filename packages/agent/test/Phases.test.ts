/**
 * The two conversations of an autonomous investigation: the root cause with the cluster tools, then a fresh
 * workflow-selection conversation with the catalog tools on `phaseModels.workflow_discovery`, its corrections on
 * `phaseModels.validation`; discovery filtered by the analysis' remediation target.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ScriptedLlm, type Script } from "@kubemend/devkit/ScriptedLlm"
import { AgentTest, awaitEnd, client, incident, scaleId } from "./Harness.ts"

const opening = "Select a remediation workflow for this incident."
const scripts: ReadonlyArray<Script> = [
  {
    name: "selection",
    match: [opening, "signal_name: TwoPhases\n"],
    turns: [
      { toolCalls: [{ name: "list_available_actions", arguments: { limit: 1 } }] },
      { json: { selected_workflow: { workflow_id: scaleId, parameters: { NAMESPACE: "shop", DEPLOYMENT: "checkout", REPLICAS: 99 } } } },
      { json: { selected_workflow: { workflow_id: scaleId, parameters: { NAMESPACE: "shop", DEPLOYMENT: "checkout", REPLICAS: 4 } } } }
    ]
  },
  {
    name: "rca",
    match: "signal_name: TwoPhases\n",
    turns: [
      { toolCalls: [{ name: "cluster_get", arguments: { kind: "Deployment", name: "checkout" } }] },
      { json: { root_cause: "Too few replicas for the load", confidence: 0.8, actionable: true, remediation_target: { kind: "Deployment", name: "checkout" } } }
    ]
  }
]

layer(AgentTest({ scripts, phaseModels: { workflow_discovery: { model: "selector" }, validation: { model: "validator" } } }), { excludeTestServices: true })(
  "investigation phases",
  (it) => {
    it.effect("root cause, then a fresh selection conversation on its own model, paged discovery, validation on its model", () =>
      Effect.gen(function* () {
        const api = yield* client
        const { session_id } = yield* api.incident.analyze({ payload: incident("TwoPhases") as never })
        assert.strictEqual((yield* awaitEnd(session_id)).status, "completed")
        const result = yield* api.incident.sessionResult({ path: { session_id } })
        assert.strictEqual(result.root_cause, "Too few replicas for the load")
        assert.strictEqual(result.selected_workflow?.workflow_id, scaleId)
        assert.deepStrictEqual(result.validation_attempts_history?.map((v) => v.is_valid), [false, true])

        const requests = (yield* ScriptedLlm).requests.filter((r) => String(r.body?.messages?.[1]?.content ?? "").includes("signal_name: TwoPhases\n"))
        const names = (r: { body: any }) => ((r.body.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name)
        const [first, , selecting, , correcting] = requests
        assert.strictEqual(first!.body.model, "scripted")
        assert.include(names(first!), "cluster_pod_logs")
        assert.notInclude(names(first!), "list_workflows")
        // A fresh conversation: system + the opening with the analysis, nothing of the root-cause turns.
        assert.strictEqual(selecting!.body.model, "selector")
        assert.strictEqual(selecting!.body.messages.length, 2)
        assert.include(selecting!.body.messages[1].content, "root_cause: Too few replicas for the load")
        assert.include(selecting!.body.messages[1].content, "remediation_target: apps/v1/Deployment shop/checkout")
        assert.sameMembers(names(selecting!), ["list_available_actions", "list_workflows", "get_workflow"])
        const page = JSON.parse(requests[3]!.body.messages.at(-1).content)
        assert.deepStrictEqual([page.action_types.length, page.next_offset], [1, 1])
        assert.strictEqual(correcting!.body.model, "validator")
        assert.include(correcting!.body.messages.at(-1).content, "REPLICAS: must be at most 20")
      }))
  }
)
