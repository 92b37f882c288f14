/**
 * `svc_remediate` with `rr_id` in the A2A agent, against the real investigation agent (its HTTP server from
 * `@kubemend/agent`, on the same dev API server, its own scripted model): the gateway calls the agent's
 * `svc_investigate` action `start_autonomous` as the caller, and the agent runs an autonomous investigation of that
 * RR for that user without taking a lease. A terminal RR is refused by the gateway before the agent is asked.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import type { Script } from "@kubemend/devkit/ScriptedLlm"
import { Infra, InfraLive, namespace, startTestGateway, type TestGateway, token } from "./A2aHarness.ts"
import { startRealAgent } from "./support/RealAgent.ts"

const agentScript: Script = {
  name: "autonomous",
  match: "incident_id: rr-checkout-crash",
  turns: [{ json: { root_cause: "The checkout pods crash after the config change", confidence: 0.7, actionable: false } }]
}

const gatewayScripts: ReadonlyArray<Script> = [
  {
    name: "remediate",
    match: "investigate rr-checkout-crash on your own",
    turns: [
      { toolCalls: [{ name: "svc_remediate", arguments: { rr_id: "rr-checkout-crash" } }] },
      { text: "The investigation is running." }
    ]
  },
  {
    name: "remediate-done",
    match: "investigate rr-api-done on your own",
    turns: [
      { toolCalls: [{ name: "svc_remediate", arguments: { rr_id: "rr-api-done" } }] },
      { text: "That one is finished." }
    ]
  }
]

const startAgent = startRealAgent({ scripts: [agentScript] })

/** One A2A 0.3 `message/send`; answers the task. */
const send = (gw: TestGateway, bearer: string, text: string) =>
  Effect.promise(async () => {
    const message = { kind: "message", messageId: crypto.randomUUID(), role: "user", parts: [{ kind: "text", text }] }
    const res = await fetch(`${gw.url}/`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${bearer}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "message/send", params: { message } })
    })
    return (await res.json()).result as { status: { state: string } }
  })

/** What `svc_remediate` answered the gateway's model. */
const toolReply = (gw: TestGateway, userText: string): Record<string, unknown> => {
  const req = gw.llm.requests.find((r) =>
    r.body?.messages?.some((m: any) => m.role === "tool") && r.body.messages.find((m: any) => m.role === "user")?.content.includes(userText)
  )
  return JSON.parse(String(req?.body.messages.find((m: any) => m.role === "tool")?.content ?? "{}"))
}

const getJson = (url: string, token: string) =>
  Effect.promise(() => fetch(url, { headers: { authorization: `Bearer ${token}` } }).then(async (r) => ({ status: r.status, body: await r.json() })))

layer(InfraLive, { excludeTestServices: true })("svc_remediate with rr_id against the real agent", (it) => {
  it.scoped("starts the agent's autonomous investigation of the RR as the caller, without a lease", () =>
    Effect.gen(function* () {
      const agent = yield* startAgent
      const gw = yield* startTestGateway({ scripts: gatewayScripts, agentUrl: Option.some(agent.url) })
      const { kube } = yield* Infra
      const task = yield* send(gw, yield* token("sre"), "please investigate rr-checkout-crash on your own")
      assert.strictEqual(task.status.state, "completed")

      const reply = toolReply(gw, "investigate rr-checkout-crash on your own")
      assert.strictEqual(reply["status"], "autonomous_started", JSON.stringify(reply))
      assert.strictEqual(reply["rr_id"], "rr-checkout-crash")
      assert.strictEqual(reply["acting_user"], "sre-user")
      const sessionId = String(reply["session_id"])
      assert.match(sessionId, /^[0-9a-f-]{36}$/)

      // The agent ran it: the session ends completed, attributed to the caller, with the model's root cause.
      let status = yield* getJson(`${agent.url}/api/v1/incident/session/${sessionId}`, agent.restToken)
      for (let i = 0; i < 250 && status.body.status !== "completed" && status.body.status !== "failed"; i++) {
        yield* Effect.sleep(Duration.millis(20))
        status = yield* getJson(`${agent.url}/api/v1/incident/session/${sessionId}`, agent.restToken)
      }
      assert.strictEqual(status.body.status, "completed", JSON.stringify(status.body))
      assert.strictEqual(status.body.acting_user, "sre-user")
      assert.deepStrictEqual(status.body.acting_user_groups, ["kubemend-sre"])
      const result = yield* getJson(`${agent.url}/api/v1/incident/session/${sessionId}/result`, agent.restToken)
      assert.strictEqual(result.body.root_cause, "The checkout pods crash after the config change")
      assert.isTrue(agent.llm.requests.some((r) => r.body?.messages?.[1]?.content?.includes("incident_id: rr-checkout-crash")))
      const leases = kube.list("coordination.k8s.io/v1", "Lease", namespace).map((l) => l.metadata.name)
      assert.notInclude(leases, "svc-interactive-rr-checkout-crash")

      const audit = yield* gw.audit.entries
      assert.isTrue(audit.some((e) => e.type === "tool.executed" && e.data.tool_name === "svc_remediate" && e.data.tool_outcome === "success"))
    }))

  it.scoped("a terminal RR is refused before the agent is asked", () =>
    Effect.gen(function* () {
      const agent = yield* startAgent
      const gw = yield* startTestGateway({ scripts: gatewayScripts, agentUrl: Option.some(agent.url) })
      const task = yield* send(gw, yield* token("sre"), "please investigate rr-api-done on your own")
      assert.strictEqual(task.status.state, "completed")
      const req = gw.llm.requests.find((r) => r.body?.messages?.some((m: any) => m.role === "tool"))
      assert.match(String(req?.body.messages.find((m: any) => m.role === "tool")?.content), /already Completed/)
      assert.isFalse(agent.llm.requests.some((r) => r.path.endsWith("/chat/completions")))
    }))
})
