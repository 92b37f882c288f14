/**
 * The scenario suite: each incident investigated by the real agent over its REST API (root cause, then workflow
 * selection in a fresh conversation), against the dev API server and the dev metrics backend, with scripted model
 * turns. Asserts what the model was shown and the decision: workflow, parameters, human review, remediation target.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ScriptedLlm } from "@kubemend/devkit/ScriptedLlm"
import { awaitEnd, client } from "../test/Harness.ts"
import { incidentOf, type Scenario, scenarioLayer, selectionOpening } from "./Harness.ts"
import { scenarios } from "./Incidents.ts"

/** Requests the scripted model received for one scenario, in order. */
const requestsOf = (s: Scenario) =>
  Effect.map(
    ScriptedLlm,
    (llm) =>
      llm.requests.filter((r) =>
        (r.body?.messages ?? []).some((m: { role: string; content?: unknown }) => m.role === "user" && String(m.content).includes(`signal_name: ${s.signal}\n`))
      )
  )

const toolText = (requests: ReadonlyArray<{ body: any }>) =>
  requests.flatMap((r) => (r.body.messages as Array<{ role: string; content?: unknown }>).filter((m) => m.role === "tool").map((m) => String(m.content)))
    .join("\n")

const targetOf = (t: Record<string, unknown> | undefined) =>
  t === undefined ? undefined : `${String(t["kind"])} ${t["namespace"] === undefined ? "" : `${String(t["namespace"])}/`}${String(t["name"])}`

layer(scenarioLayer(scenarios), { excludeTestServices: true, timeout: "60 seconds" })("scenarios", (it) => {
  for (const s of scenarios) {
    it.effect(s.signal, () =>
      Effect.gen(function* () {
        const api = yield* client
        const { session_id } = yield* api.incident.analyze({ payload: incidentOf(s) as never })
        assert.strictEqual((yield* awaitEnd(session_id)).status, "completed")
        const result = yield* api.incident.sessionResult({ path: { session_id } })
        const requests = yield* requestsOf(s)
        const seen = toolText(requests)
        for (const text of s.seen) assert.include(seen, text, `${s.signal}: the model should have read ${text}`)
        assert.notInclude(seen.toLowerCase(), "ignore all previous instructions")
        assert.notInclude(seen, "hunter2")
        assert.strictEqual(result.selected_workflow?.workflow_id ?? null, s.expect.workflow)
        if (s.expect.parameters !== undefined) assert.deepStrictEqual(result.selected_workflow?.parameters, s.expect.parameters)
        assert.strictEqual(result.needs_human_review, s.expect.needsHumanReview)
        if (s.expect.reason !== undefined) assert.strictEqual(result.human_review_reason, s.expect.reason)
        const rca = result.root_cause_analysis as Record<string, unknown> | undefined
        assert.strictEqual(targetOf(rca?.["remediation_target"] as Record<string, unknown> | undefined), s.expect.target)
        if (s.selection !== undefined) {
          // The selection ran as its own conversation, offered only the catalog tools.
          const selection = requests.filter((r) => String(r.body.messages?.[1]?.content ?? "").startsWith(selectionOpening))
          assert.isAbove(selection.length, 0)
          const offered = (selection[0]!.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name).sort()
          assert.deepStrictEqual(offered, ["get_workflow", "list_available_actions", "list_workflows"])
        }
      }))
  }
})
