/**
 * A2A `svc_investigate` against the real investigation agent: the agent keeps the interactive session `active`
 * after its opening analysis answered, so the gateway's blocking call finishes on the analysis (followed through
 * the agent's `follow` action, which also carries its live events to the task), not on a session status that
 * never changes. The analysis here outlives the agent's start wait, so the answer really comes through `follow`.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import { TaskState } from "@a2a-js/sdk"
import type { Script } from "@kubemend/devkit/ScriptedLlm"
import { clientFor, statusUpdates, stream, toolReply } from "./A2aSdk.ts"
import { InfraLive, startTestGateway, token } from "./A2aHarness.ts"
import { startRealAgent } from "./support/RealAgent.ts"

const rca = "The checkout pods are OOMKilled: the memory limit of 128Mi is below the working set."

const agentScripts: ReadonlyArray<Script> = [
  { name: "opening", match: "incident_id: rr-checkout-crash", turns: [{ text: rca }] }
]

const gatewayScripts: ReadonlyArray<Script> = [
  {
    name: "investigate",
    match: "why is checkout crashing",
    turns: [
      { toolCalls: [{ name: "svc_investigate", arguments: { rr_id: "rr-checkout-crash" } }] },
      { text: "The memory limit is too low." }
    ]
  }
]

layer(InfraLive, { excludeTestServices: true })("A2A svc_investigate with the real agent", (it) => {
  it.scoped("finishes with the RCA once the agent's analysis answered, while the session stays open", () =>
    Effect.gen(function* () {
      const agent = yield* startRealAgent({ scripts: agentScripts, latencyMs: 600, startWait: Duration.millis(50) })
      const gw = yield* startTestGateway({ scripts: gatewayScripts, agentUrl: Option.some(agent.url) })
      const { client } = yield* clientFor(gw, yield* token("sre"), "1.0")
      const events = yield* stream(client, "why is checkout crashing?")
      assert.strictEqual(statusUpdates(events).at(-1)?.status?.state, TaskState.TASK_STATE_COMPLETED)

      const reply = JSON.parse(toolReply(gw, "why is checkout crashing?"))
      assert.deepInclude(reply, { rr_id: "rr-checkout-crash", status: "completed", summary: rca, session_status: "active" })
      // The agent's model was asked once: the answer came from the real opening analysis.
      assert.isTrue(agent.llm.requests.some((r) => JSON.stringify(r.body ?? {}).includes("incident_id: rr-checkout-crash")))

      const entries = yield* gw.audit.entries
      const completed = entries.find((e) => e.type === "session.completed")
      assert.deepInclude(completed?.data, { rr_id: "rr-checkout-crash", terminal_phase: "completed", join_mode: "a2a" })
      assert.isTrue(entries.some((e) => e.type === "ka.result_received" && e.outcome === "success"))
    }), { timeout: 60_000 })
})
