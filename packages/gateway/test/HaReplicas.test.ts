/**
 * Two gateway replicas (real HTTP servers) sharing a real Redis, as behind a load balancer without session
 * affinity: an MCP session opened on A is served by B (the official SDK client, its requests routed to whichever
 * replica the test names), also after A is gone; an A2A task run on A is read on B and its conversation continues
 * there; the per-user session cap counts both replicas; a session ended on one replica answers 404 on the other at
 * once, or once it is back in touch with Valkey. A replica whose Valkey is unreachable keeps serving and says so on
 * /readyz and in its metrics.
 */
import { assert, layer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { type StreamResponse, TaskState } from "@a2a-js/sdk"
import { Duration, Effect, Fiber, Option, Schedule } from "effect"
import { clientFor, send, statusUpdates, textOf } from "./A2aSdk.ts"
import { InfraLive, startTestGateway, type TestGateway, token } from "./A2aHarness.ts"
import { initializeBody, mcpHeaders, raw } from "./support/Client.ts"
import { startProxy } from "./support/Proxy.ts"
import { requireRedis, skipRedis, uniquePrefix, unreachable, valkeySettings } from "./support/Redis.ts"

const scripts = [
  { name: "remember", match: "remember the word", turns: [{ text: "Noted." }, { text: "You asked me to remember a word." }] },
  { name: "default", turns: [{ text: "Hello." }] }
]

const replicas = Effect.gen(function* () {
  yield* requireRedis
  const valkey = Option.some(valkeySettings(yield* uniquePrefix("replicas")))
  const options = { scripts, valkey, rateLimit: { maxConcurrentSessions: 50, maxSessionsPerUser: 3 } }
  return [yield* startTestGateway(options), yield* startTestGateway(options)] as const
})

/** An official MCP client behind a "load balancer" that sends each request to the replica `route.to` names. */
const balancedClient = (bearer: string, route: { to: TestGateway }) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const transport = new StreamableHTTPClientTransport(new URL("http://balancer/mcp"), {
        requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
        fetch: (input, init) => fetch(String(input).replace("http://balancer", route.to.url), init)
      })
      const client = new Client({ name: "ha-test", version: "1.0.0" })
      await client.connect(transport)
      return { client, transport }
    }),
    ({ client }) => Effect.promise(() => client.close().catch(() => undefined))
  )

const mcpInitialize = (gw: TestGateway, bearer: string) =>
  raw(`${gw.url}/mcp`, { method: "POST", headers: { ...mcpHeaders, accept: "application/json" }, body: initializeBody, token: bearer })

/** A raw `tools/list` naming `sessionId` at `gw` (what a client that kept the id would send). */
const toolsListIn = (gw: TestGateway, sessionId: string, bearer: string, id: number) =>
  raw(`${gw.url}/mcp`, {
    method: "POST",
    headers: { ...mcpHeaders, "mcp-session-id": sessionId },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/list" }),
    token: bearer
  })

const title = "gateway replicas sharing Valkey"
layer(InfraLive, { excludeTestServices: true })(skipRedis ? `${title} (skipped: ${unreachable})` : title, (it) => {
  it.scoped.skipIf(skipRedis)("an MCP session opened on A is served by B, also once A is gone, and only for its owner", () =>
    Effect.gen(function* () {
      const [a, b] = yield* replicas
      const sre = yield* token("sre")
      const route = { to: a }
      const { client, transport } = yield* balancedClient(sre, route)
      const sessionId = transport.sessionId!
      assert.isTrue((yield* a.audit.entries).some((e) => e.type === "mcp.session_init" && e.correlationId === sessionId))

      route.to = b
      const tools = yield* Effect.promise(() => client.listTools())
      assert.isTrue(tools.tools.some((t) => t.name === "svc_list_remediations"))
      const result = yield* Effect.promise(() => client.callTool({ name: "svc_list_remediations", arguments: {} }))
      assert.isFalse(result.isError === true, JSON.stringify(result.content))
      // B took the session over; it is not a new one.
      assert.isFalse((yield* b.audit.entries).some((e) => e.type === "mcp.session_init"))

      // Another user naming the session gets what an unknown id gets.
      const stranger = yield* toolsListIn(b, sessionId, yield* token("cicd"), 7)
      assert.strictEqual(stranger.status, 404)

      yield* a.shutdown
      const again = yield* Effect.promise(() => client.callTool({ name: "svc_list_remediations", arguments: {} }))
      assert.isFalse(again.isError === true)

      yield* Effect.promise(() => transport.terminateSession())
      const ended = yield* toolsListIn(b, sessionId, sre, 8)
      assert.strictEqual(ended.status, 404)
    }))

  it.scoped.skipIf(skipRedis)("a session ended on A answers 404 on B, which held a copy of it, at the very next request", () =>
    Effect.gen(function* () {
      const [a, b] = yield* replicas
      const sre = yield* token("sre")
      const route = { to: a }
      const { client, transport } = yield* balancedClient(sre, route)
      const sessionId = transport.sessionId!
      // B serves the session too, so it holds a copy of it in memory.
      route.to = b
      assert.isFalse((yield* Effect.promise(() => client.callTool({ name: "svc_list_remediations", arguments: {} }))).isError === true)

      route.to = a
      yield* Effect.promise(() => transport.terminateSession())
      const onB = yield* toolsListIn(b, sessionId, sre, 9)
      assert.strictEqual(onB.status, 404)
      // Its slot was freed everywhere: three new sessions fit the per-user cap of three.
      for (const gw of [a, b, b]) assert.strictEqual((yield* mcpInitialize(gw, sre)).status, 200)
    }))

  it.scoped.skipIf(skipRedis)("B, cut off from Valkey while the session ended on A, drops its copy once Valkey is back", () =>
    Effect.gen(function* () {
      yield* requireRedis
      const direct = valkeySettings(yield* uniquePrefix("gap"), { recoveryInterval: Duration.millis(50) })
      const proxy = yield* startProxy(direct)
      const a = yield* startTestGateway({ scripts, valkey: Option.some(direct) })
      const b = yield* startTestGateway({ scripts, valkey: Option.some({ ...direct, host: "127.0.0.1", port: proxy.port }) })
      const sre = yield* token("sre")
      const route = { to: a }
      const { client, transport } = yield* balancedClient(sre, route)
      const sessionId = transport.sessionId!
      route.to = b
      assert.isFalse((yield* Effect.promise(() => client.callTool({ name: "svc_list_remediations", arguments: {} }))).isError === true)

      // B does not hear that the session ended: it is cut off.
      yield* proxy.cut
      route.to = a
      yield* Effect.promise(() => transport.terminateSession())
      yield* proxy.restore
      // While degraded B may still serve its copy; once it is back it finds the record gone. No timing is asserted.
      yield* toolsListIn(b, sessionId, sre, 10).pipe(
        Effect.map((r) => r.status),
        Effect.repeat({ schedule: Schedule.spaced(Duration.millis(100)), until: (status) => status === 404 }),
        Effect.timeoutFail({ duration: Duration.seconds(15), onTimeout: () => "B kept serving the ended session" })
      )
    }))

  it.scoped.skipIf(skipRedis)("an A2A task run on A is read on B, and its conversation continues on B", () =>
    Effect.gen(function* () {
      const [a, b] = yield* replicas
      const sre = yield* token("sre")
      const onA = yield* clientFor(a, sre, "1.0")
      const onB = yield* clientFor(b, sre, "1.0")
      const first = yield* send(onA.client, "remember the word kiwi")
      assert.strictEqual(first.status?.state, TaskState.TASK_STATE_COMPLETED)

      const fetched = yield* Effect.promise(() => onB.client.getTask({ tenant: "", id: first.id, historyLength: undefined }))
      assert.deepStrictEqual([fetched.id, fetched.contextId, fetched.status?.state, textOf(fetched)], [
        first.id,
        first.contextId,
        TaskState.TASK_STATE_COMPLETED,
        "Noted."
      ])
      const notMine = yield* clientFor(b, yield* token("cicd"), "1.0")
      const hidden = yield* Effect.promise(() => notMine.client.getTask({ tenant: "", id: first.id, historyLength: undefined }).then(() => undefined, (e) => e))
      assert.match(String(hidden?.message), /not found/i)

      const second = yield* send(onB.client, "what did I ask?", { contextId: first.contextId })
      assert.strictEqual(second.contextId, first.contextId)
      // B's model saw the exchange held on A.
      assert.strictEqual(textOf(second), "You asked me to remember a word.")
    }))

  it.scoped.skipIf(skipRedis)("a task still running on A is followed from B and canceled from B", () =>
    Effect.gen(function* () {
      const [a, b] = yield* replicas
      const sre = yield* token("sre")
      a.llm.setLatency(3000)
      const running = yield* send((yield* clientFor(a, sre, "1.0")).client, "hello slowly", { returnImmediately: true })
      const onB = (yield* clientFor(b, sre, "1.0")).client
      const followed = yield* Effect.fork(Effect.promise(async () => {
        const seen: Array<StreamResponse> = []
        for await (const e of onB.resubscribeTask({ tenant: "", id: running.id })) seen.push(e)
        return seen
      }))
      const canceled = yield* Effect.promise(() => onB.cancelTask({ tenant: "", id: running.id, metadata: undefined }))
      assert.strictEqual(canceled.status?.state, TaskState.TASK_STATE_CANCELED)
      assert.strictEqual(statusUpdates(yield* Fiber.join(followed)).at(-1)?.status?.state, TaskState.TASK_STATE_CANCELED)
      assert.isTrue((yield* a.audit.entries).every((e) => e.type !== "a2a.task_completed"), "A's loop was stopped")
    }))

  it.scoped.skipIf(skipRedis)("the per-user session cap counts the sessions a user holds on both replicas", () =>
    Effect.gen(function* () {
      const [a, b] = yield* replicas
      const cicd = yield* token("cicd")
      assert.strictEqual((yield* mcpInitialize(a, cicd)).status, 200)
      assert.strictEqual((yield* mcpInitialize(b, cicd)).status, 200)
      const conversation = yield* send((yield* clientFor(a, cicd, "1.0")).client, "hello")
      assert.strictEqual(conversation.status?.state, TaskState.TASK_STATE_COMPLETED)
      const refused = yield* mcpInitialize(b, cicd)
      assert.strictEqual(refused.status, 429)
      assert.match(refused.json.detail, /already has 3 open sessions/)
      // Someone else is not held to cicd's share.
      assert.strictEqual((yield* mcpInitialize(a, yield* token("sre"))).status, 200)
    }))

  it.scoped("Valkey unreachable: the replica serves with its own limits and says so on /readyz and in its metrics", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway({ scripts, valkey: Option.some(valkeySettings("unreachable", { port: 1 })) })
      const sre = yield* token("sre")
      assert.strictEqual((yield* mcpInitialize(gw, sre)).status, 200)
      const ready = yield* raw(`${gw.healthUrl}/readyz`)
      assert.match(ready.json.detail?.sharedState ?? "", /^degraded: Valkey at [^ ]+:1 unreachable .*sessions and rate limits are per replica$/)
      assert.notProperty(ready.json.checks, "sharedState")
      const metrics = yield* raw(`${gw.metricsUrl}/metrics`)
      assert.match(metrics.text, /^af_gateway_shared_state_degraded 1$/m)
    }))
})
