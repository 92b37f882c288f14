/**
 * The interactive MCP contract of the investigation agent, as the gateway relies on it, run against the real agent
 * and the gateway's fake agent (support/FakeAgent.ts) alike: the three tools; a session held by the user who started
 * it, refused to others (`session_active`, `<holder> holds this session`) until they take over; a session that stays
 * `active` after its analysis answered until cancelled or completed; a refusal as a tool error, never a JSON-RPC
 * error. Live events are asserted only while a call is open: neither agent sends any after a call answered.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect, type Scope } from "effect"
import { Infra, InfraLive, token } from "./support/Harness.ts"
import { makeFakeAgent } from "./support/FakeAgent.ts"
import { startRealAgent } from "./support/RealAgent.ts"

type Persona = "sre" | "ai-orchestrator"

interface AgentUser {
  readonly call: (tool: string, args: Record<string, unknown>) => Effect.Effect<{ readonly isError: boolean; readonly text: string; readonly json: any }>
  /** `notifications/message` received on this connection so far. */
  readonly events: Array<unknown>
}

/** An MCP client of the agent acting as `persona`, carrying what the gateway carries for its caller. */
const asUser = (url: string, persona: Persona): Effect.Effect<AgentUser, never, Infra | Scope.Scope> =>
  Effect.gen(function* () {
    const bearer = yield* token(persona)
    const user = `${persona}-user`
    const client = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const transport = new StreamableHTTPClientTransport(new URL(`${url}/api/v1/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${bearer}`, "x-kubemend-user": user, "x-kubemend-groups": `kubemend-${persona}` } }
        })
        const c = new Client({ name: "contract", version: "1" })
        await c.connect(transport)
        return c
      }),
      (c) => Effect.promise(() => c.close().catch(() => undefined))
    )
    const events: Array<unknown> = []
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void events.push(n.params.data))
    return {
      events,
      call: (tool, args) =>
        Effect.promise(async () => {
          const r = await client.callTool({ name: tool, arguments: { ...args, acting_user: user, acting_user_groups: [`kubemend-${persona}`] } })
          const text = (r.content as Array<{ text: string }>).map((c) => c.text).join("")
          let json: unknown
          try {
            json = JSON.parse(text)
          } catch {
            json = undefined
          }
          return { isError: r.isError === true, text, json }
        })
    }
  })

const contract = (name: string, start: Effect.Effect<{ readonly url: string }, never, Infra | Scope.Scope>) =>
  layer(InfraLive, { excludeTestServices: true })(`agent contract: ${name}`, (it) => {
    it.scoped("tools, a held session, refusal, takeover, cancel; a session stays active after its analysis answered", () =>
      Effect.gen(function* () {
        const { url } = yield* start
        const sre = yield* asUser(url, "sre")
        const aio = yield* asUser(url, "ai-orchestrator")
        const rr_id = "rr-checkout-crash"

        const tools = yield* Effect.promise(async () => {
          const t = new StreamableHTTPClientTransport(new URL(`${url}/api/v1/mcp`))
          const c = new Client({ name: "list", version: "1" })
          await c.connect(t)
          const listed = await c.listTools()
          await c.close()
          return listed.tools.map((x) => x.name).sort()
        })
        assert.deepStrictEqual(tools, ["svc_complete_no_action", "svc_investigate", "svc_select_workflow"])

        const started = yield* sre.call("svc_investigate", { rr_id, action: "start" })
        assert.isFalse(started.isError, started.text)
        assert.deepInclude(started.json, { rr_id, status: "active", holder: "sre-user" })
        assert.isString(started.json.session_id)
        assert.isAbove(started.json.session_id.length, 0)

        // The analysis answers in the background; the session stays active until someone ends it.
        let status = yield* sre.call("svc_investigate", { rr_id, action: "follow" })
        for (let i = 0; i < 20 && status.json.analysis !== "answered"; i++) status = yield* sre.call("svc_investigate", { rr_id, action: "follow" })
        assert.deepInclude(status.json, { status: "active", analysis: "answered", holder: "sre-user", session_id: started.json.session_id })
        assert.isString(status.json.summary)

        const busy = yield* aio.call("svc_investigate", { rr_id, action: "start" })
        assert.isFalse(busy.isError, busy.text)
        assert.deepInclude(busy.json, { status: "session_active", holder: "sre-user" })
        const refused = yield* aio.call("svc_investigate", { rr_id, action: "message", message: "hello?" })
        assert.isTrue(refused.isError)
        assert.match(refused.text, /sre-user holds this session/)

        const before = sre.events.length
        const replied = yield* sre.call("svc_investigate", { rr_id, action: "message", message: "check the logs" })
        assert.isFalse(replied.isError, replied.text)
        assert.deepInclude(replied.json, { status: "active", holder: "sre-user" })
        assert.isString(replied.json.message)
        // A turn's events arrive while its call is open.
        assert.isAbove(sre.events.length, before)

        const taken = yield* aio.call("svc_investigate", { rr_id, action: "takeover" })
        assert.deepInclude(taken.json, { status: "active", holder: "ai-orchestrator-user" })
        const lost = yield* sre.call("svc_investigate", { rr_id, action: "message", message: "still there?" })
        assert.isTrue(lost.isError)
        assert.match(lost.text, /ai-orchestrator-user holds this session/)

        const cancelled = yield* aio.call("svc_investigate", { rr_id, action: "cancel" })
        assert.deepInclude(cancelled.json, { status: "cancelled" })
        assert.notStrictEqual((yield* sre.call("svc_investigate", { rr_id, action: "status" })).json.status, "active")
        // Free again: the first user starts afresh.
        assert.deepInclude((yield* sre.call("svc_investigate", { rr_id, action: "start" })).json, { status: "active", holder: "sre-user" })
        yield* sre.call("svc_investigate", { rr_id, action: "cancel" })
      }), { timeout: 60_000 })

    it.scoped("no action ends a session and admits the next user; bad input and missing sessions are tool errors", () =>
      Effect.gen(function* () {
        const { url } = yield* start
        const sre = yield* asUser(url, "sre")
        const aio = yield* asUser(url, "ai-orchestrator")
        const rr_id = "rr-cache-pending"

        const none = yield* sre.call("svc_investigate", { rr_id, action: "message", message: "hi" })
        assert.isTrue(none.isError)
        assert.match(none.text, /no interactive session for rr-cache-pending; use action start/)
        const bogus = yield* sre.call("svc_investigate", { rr_id, action: "bogus" })
        assert.isTrue(bogus.isError)
        assert.match(bogus.text, /invalid arguments/)
        const noSelection = yield* Effect.flatMap(sre.call("svc_investigate", { rr_id, action: "start" }), () =>
          sre.call("svc_investigate", { rr_id, action: "complete" }))
        assert.isTrue(noSelection.isError)
        assert.match(noSelection.text, /no workflow selected/)

        const done = yield* sre.call("svc_complete_no_action", { rr_id, reason: "transient" })
        assert.deepInclude(done.json, { status: "completed_no_action" })
        assert.deepInclude((yield* aio.call("svc_investigate", { rr_id, action: "start" })).json, { status: "active", holder: "ai-orchestrator-user" })
        const escalated = yield* aio.call("svc_complete_no_action", { rr_id, escalation_reason: "needs a DBA" })
        assert.deepInclude(escalated.json, { status: "escalated" })
      }), { timeout: 60_000 })
  })

const rca = "The checkout pods are OOMKilled."

describe.sequential("agent contract", () => {
  contract("the real agent", Effect.map(startRealAgent({ scripts: [{ name: "opening", turns: [{ text: rca }] }] }), ({ url }) => ({ url })))
  contract("the gateway's fake agent", Effect.map(makeFakeAgent(), ({ url }) => ({ url })))
})
