/**
 * The interactive MCP contract of the investigation agent, as the gateway relies on it, run against the real agent
 * and the gateway's fake agent (support/FakeAgent.ts) alike: the three tools; a session held by the user who started
 * it, refused to others (`session_active`, `<holder> holds this session`) until they take over; a session that stays
 * `active` after its analysis answered until cancelled or completed; a refusal as a tool error, never a JSON-RPC
 * error; a session's events between calls on its REST event stream (`GET /api/v1/incident/session/<id>/stream`, the
 * platform's ServiceAccount token only): a takeover and the end after the answer's `event_seq`, resumable with
 * `Last-Event-ID`.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { createParser } from "eventsource-parser"
import { Effect, Fiber, type Scope } from "effect"
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

interface StreamedEvent {
  readonly seq: number
  readonly event: string
  readonly data: Record<string, any>
}

/** Reads a session's REST event stream after `after` until the agent ends it (at most 20 s). */
const readStream = (url: string, token: string, after: number) =>
  Effect.promise(async () => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, "last-event-id": String(after) }, signal: AbortSignal.timeout(20_000) })
    const events: Array<StreamedEvent> = []
    const parser = createParser({ onEvent: (m) => void events.push({ seq: Number(m.id), event: m.event ?? "", data: JSON.parse(m.data) }) })
    parser.feed(await res.text())
    // Token deltas reach live readers only; the rest is what a reader resuming later gets again.
    return events.filter((e) => e.event !== "token_delta")
  })

const contract = (name: string, start: Effect.Effect<{ readonly url: string; readonly restToken: string }, never, Infra | Scope.Scope>) =>
  layer(InfraLive, { excludeTestServices: true })(`agent contract: ${name}`, (it) => {
    it.scoped("tools, a held session, refusal, takeover, cancel; a session stays active after its analysis answered", () =>
      Effect.gen(function* () {
        const { url } = yield* start
        const sre = yield* asUser(url, "sre")
        const aio = yield* asUser(url, "ai-orchestrator")
        const rr_id = "rr-checkout-crash"

        const bearer = yield* token("sre")
        const tools = yield* Effect.promise(async () => {
          const t = new StreamableHTTPClientTransport(new URL(`${url}/api/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${bearer}` } } })
          const c = new Client({ name: "list", version: "1" })
          await c.connect(t)
          const listed = await c.listTools()
          await c.close()
          return listed.tools.map((x) => x.name).sort()
        })
        assert.deepStrictEqual(tools, ["svc_complete_no_action", "svc_investigate", "svc_select_workflow"])
        // Without a token nobody gets in, whatever identity it claims.
        const anonymous = yield* Effect.promise(() =>
          fetch(`${url}/api/v1/mcp`, {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "x-kubemend-user": "sre-user" },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
          })
        )
        assert.deepStrictEqual([anonymous.status, anonymous.headers.get("content-type")], [401, "application/problem+json"])

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

    it.scoped(
      "between calls: the session's event stream carries a takeover and the end, resumes after Last-Event-ID, admits only the platform",
      () =>
        Effect.gen(function* () {
          const { url, restToken } = yield* start
          const sre = yield* asUser(url, "sre")
          const aio = yield* asUser(url, "ai-orchestrator")
          const rr_id = "rr-db-blocked"

          const started = yield* sre.call("svc_investigate", { rr_id, action: "start" })
          const { session_id, event_seq } = started.json
          assert.isNumber(event_seq)
          const stream = `${url}/api/v1/incident/session/${session_id}/stream`
          const anonymous = yield* Effect.promise(() => fetch(stream))
          assert.strictEqual(anonymous.status, 401)
          const unknown = yield* Effect.promise(() =>
            fetch(`${url}/api/v1/incident/session/no-such-session/stream`, { headers: { authorization: `Bearer ${restToken}` } })
          )
          assert.strictEqual(unknown.status, 404)

          // A subscriber from where the start answered sees what happens after it.
          const reading = yield* Effect.fork(readStream(stream, restToken, event_seq))
          const taken = yield* aio.call("svc_investigate", { rr_id, action: "takeover" })
          assert.strictEqual(taken.json.session_id, session_id)
          yield* aio.call("svc_investigate", { rr_id, action: "cancel" })
          const events = yield* Fiber.join(reading)
          assert.isTrue(events.every((e) => e.seq > event_seq))
          const takeover = events.find((e) => e.event === "interactive_state" && e.data.holder === "ai-orchestrator-user")
          assert.deepInclude(takeover?.data, { rr_id, previous_holder: "sre-user", status: "active" })
          assert.deepStrictEqual(events.slice(-2).map((e) => e.event), ["cancelled", "session_ended"])
          // Resuming after the takeover replays exactly what came after it.
          const resumed = yield* readStream(stream, restToken, takeover!.seq)
          assert.deepStrictEqual(resumed.map((e) => e.seq), events.filter((e) => e.seq > takeover!.seq).map((e) => e.seq))
        }),
      { timeout: 60_000 }
    )
  })

const rca = "The checkout pods are OOMKilled."

describe.sequential("agent contract", () => {
  contract(
    "the real agent",
    Effect.map(startRealAgent({ scripts: [{ name: "opening", turns: [{ text: rca }] }] }), ({ restToken, url }) => ({ url, restToken }))
  )
  contract("the gateway's fake agent", Effect.map(makeFakeAgent(), ({ restToken, url }) => ({ url, restToken })))
})
