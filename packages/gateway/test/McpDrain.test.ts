/**
 * Shutting down a running gateway with MCP work in flight, seen through the official MCP SDK client over HTTP:
 * a `tools/call` answered as SSE that finishes during the drain gets its real result; one still running when the
 * drain's grace is over gets a clear tool error (SSE and JSON clients alike), never a cut stream or a hang; a
 * `svc_watch` answers at once with the events it saw; a new request while draining is a 503 problem; an open GET
 * stream of a session ends cleanly; and the gateway is down within the drain time, with no keep-alive connection
 * holding it open. `svc_await_session` stands for any blocking tool.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Duration, Effect, Fiber } from "effect"
import { Drain } from "@kubemend/core/Drain"
import { Infra, InfraLive, startTestGateway, type TestGateway, token } from "./A2aHarness.ts"
import { rr } from "./StatusSupport.ts"
import { connect, type Connected, initializeBody, mcpHeaders } from "./support/Client.ts"

const crv = "kubemend.io/v1alpha1"

/** A tool call as a promise, with whether it has settled yet. */
const blockingCall = (c: Connected, name: string, args: Record<string, unknown>) => {
  let settled = false
  const result = c.client.callTool({ name, arguments: args }, undefined, { timeout: 20_000 })
    .then((r) => ({
      isError: r.isError === true,
      text: (r.content as Array<{ text: string }>).map((x) => x.text).join("")
    }))
    // A rejected call (the connection cut, no answer) is a result too: the tests assert it never happens.
    .catch((e: unknown) => ({ isError: true, text: `rejected: ${String(e)}` }))
    .finally(() => {
      settled = true
    })
  return { result, settled: () => settled }
}

const awaitSession = (c: Connected, rrName: string) => blockingCall(c, "svc_await_session", { rr_name: rrName })

/** The AIAnalysis of `rrName`, with its interactive session once `sessionId` is given. */
const analysis = (rrName: string, sessionId?: string) => ({
  apiVersion: crv,
  kind: "AIAnalysis",
  metadata: { name: `ai-${rrName}`, namespace: "kubemend-system" },
  spec: { remediationRequestRef: { name: rrName, namespace: "kubemend-system" } },
  status: { phase: "Investigating", ...(sessionId === undefined ? {} : { investigationSession: { id: sessionId } }) }
})

const drainOf = (gw: TestGateway) => Context.get(gw.context as Context.Context<Drain>, Drain)

/**
 * Runs `start` and waits (bounded) until it has opened `n` watches of `resource` whose query holds `match`: that many
 * blocking calls are running.
 */
const watching = <A>(resource: string, match: string, n: number, start: () => A) =>
  Effect.gen(function* () {
    const { kube } = yield* Infra
    const count = () => kube.requests().filter((r) => r.path.endsWith(`/${resource}`) && r.query.includes("watch") && r.query.includes(match)).length
    const before = count()
    const started = start()
    for (let i = 0; count() < before + n; i++) {
      if (i > 1000) return yield* Effect.die(`never ${n} watches of ${resource} (${match})`)
      yield* Effect.sleep("10 millis")
    }
    return started
  })

/** Waits (bounded) until `n` requests are in flight on the gateway. */
const inflight = (gw: TestGateway, n: number) =>
  Effect.gen(function* () {
    const drain = drainOf(gw)
    for (let i = 0; (yield* drain.inflight) < n; i++) {
      if (i > 1000) return yield* Effect.die(`never ${n} requests in flight`)
      yield* Effect.sleep("10 millis")
    }
  })

/** Starts the shutdown in the background, once draining is visible; the returned effect waits for it and gives its wall time. */
const shutdownTimed = (gw: TestGateway) =>
  Effect.gen(function* () {
    const started = Date.now()
    const fiber = yield* Effect.fork(gw.shutdown)
    while (!(yield* drainOf(gw).isDraining)) yield* Effect.sleep("5 millis")
    return { started, done: Effect.map(Fiber.join(fiber), () => Date.now() - started) }
  })

layer(InfraLive, { excludeTestServices: true })("MCP drain over HTTP", (it) => {
  it.scoped("an SSE tool call in flight finishes during the drain; new requests get 503; down well within the drain time", () =>
    Effect.gen(function* () {
      const { kube } = yield* Infra
      kube.put(rr("rr-mcp-drain-done", { overallPhase: "Analyzing" }))
      const drainTimeout = Duration.seconds(5)
      const gw = yield* startTestGateway({ drainTimeout })
      const sre = yield* token("sre")
      const c = yield* connect(gw.url, sre)
      const call = yield* watching("aianalyses", "", 1, () => awaitSession(c, "rr-mcp-drain-done"))

      const shutdown = yield* shutdownTimed(gw)
      const refused = yield* Effect.promise(async () => {
        const res = await fetch(`${gw.url}/mcp`, {
          method: "POST",
          headers: { ...mcpHeaders, authorization: `Bearer ${sre}`, "mcp-session-id": c.transport.sessionId!, "mcp-protocol-version": "2025-03-26" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 99, method: "tools/call", params: { name: "svc_list_remediations", arguments: {} } })
        })
        return { status: res.status, type: res.headers.get("content-type"), body: (await res.json()) as Record<string, unknown> }
      })
      assert.strictEqual(refused.status, 503)
      assert.strictEqual(refused.type, "application/problem+json")
      assert.deepInclude(refused.body, { status: 503, title: "Service Unavailable" })
      assert.strictEqual(yield* Effect.promise(() => fetch(`${gw.healthUrl}/readyz`).then((r) => r.status)), 503)
      // The call is still running: draining did not cut its stream.
      assert.isFalse(call.settled())

      kube.put(analysis("rr-mcp-drain-done", "session-during-drain"))
      const answer = yield* Effect.promise(() => call.result)
      assert.isFalse(answer.isError, answer.text)
      assert.deepInclude(JSON.parse(answer.text), { status: "ready", session_id: "session-during-drain" })
      // Nothing left in flight: the gateway does not wait for the drain time, nor for an idle keep-alive connection.
      assert.isBelow(yield* shutdown.done, Duration.toMillis(drainTimeout))
    }), { timeout: 60_000 })

  it.scoped(
    "a tool call still running at the end of the grace gets a tool error, over SSE and JSON; down within the drain time",
    () =>
      Effect.gen(function* () {
        const { kube } = yield* Infra
        kube.put(rr("rr-mcp-drain-long", { overallPhase: "Analyzing" }))
        const drainTimeout = Duration.seconds(3)
        const gw = yield* startTestGateway({ drainTimeout })
        const sre = yield* token("sre")
        const sseClient = yield* connect(gw.url, sre)
        const jsonClient = yield* connect(gw.url, sre, { json: true })
        const [sse, json] = yield* watching(
          "aianalyses",
          "",
          2,
          () => [awaitSession(sseClient, "rr-mcp-drain-long"), awaitSession(jsonClient, "rr-mcp-drain-long")]
        )
        yield* gw.audit.clear

        const shutdown = yield* shutdownTimed(gw)
        const answers = yield* Effect.promise(() => Promise.all([sse.result, json.result]))
        const answeredAfter = Date.now() - shutdown.started
        for (const answer of answers) {
          assert.isTrue(answer.isError, answer.text)
          assert.match(answer.text, /gateway is shutting down/)
        }
        assert.isBelow(answeredAfter, Duration.toMillis(drainTimeout))
        // The drain ends once the answers are out; the rest is closing services.
        assert.isBelow(yield* shutdown.done, Duration.toMillis(drainTimeout) + 1000)
        const executed = (yield* gw.audit.entries).filter((e) => e.type === "tool.executed")
        assert.deepStrictEqual(executed.map((e) => (e.data as Record<string, unknown>)["error_code"]), ["shutdown", "shutdown"])
      }),
    { timeout: 60_000 }
  )

  it.scoped("a svc_watch in flight answers as soon as draining starts: the events it saw, status shutdown, no error", () =>
    Effect.gen(function* () {
      const { kube } = yield* Infra
      kube.put(rr("rr-mcp-drain-watch", { overallPhase: "Analyzing" }))
      const drainTimeout = Duration.seconds(10)
      const gw = yield* startTestGateway({ drainTimeout })
      const c = yield* connect(gw.url, yield* token("sre"))
      const watch = yield* watching("remediationrequests", "rr-mcp-drain-watch", 1, () => blockingCall(c, "svc_watch", { rr_id: "rr-mcp-drain-watch" }))
      yield* gw.audit.clear

      const shutdown = yield* shutdownTimed(gw)
      const answer = yield* Effect.promise(() => watch.result)
      // Far inside the grace (8 s): the watch did not wait for it.
      assert.isBelow(Date.now() - shutdown.started, 3000)
      assert.isFalse(answer.isError, answer.text)
      const result = JSON.parse(answer.text) as { status: string; rr_id: string; events: Array<{ phase: string; resource: string }> }
      assert.deepInclude(result, { status: "shutdown", rr_id: "rr-mcp-drain-watch" })
      assert.deepInclude(result.events[0], { phase: "Analyzing", resource: "RemediationRequest/rr-mcp-drain-watch" })
      assert.isBelow(yield* shutdown.done, 3000)
      const executed = (yield* gw.audit.entries).filter((e) => e.type === "tool.executed")
      assert.deepStrictEqual(executed.map((e) => (e.data as Record<string, unknown>)["tool_outcome"]), ["success"])
    }), { timeout: 60_000 })

  it.scoped("an open GET stream of a session ends cleanly when draining starts and does not hold the shutdown", () =>
    Effect.gen(function* () {
      const drainTimeout = Duration.seconds(5)
      const gw = yield* startTestGateway({ drainTimeout })
      const sre = yield* token("sre")
      const stream = yield* Effect.promise(async () => {
        const post = (body: string, headers: Record<string, string> = {}) =>
          fetch(`${gw.url}/mcp`, { method: "POST", headers: { ...mcpHeaders, accept: "application/json", authorization: `Bearer ${sre}`, ...headers }, body })
        const init = await post(initializeBody)
        const session = { "mcp-session-id": init.headers.get("mcp-session-id")!, "mcp-protocol-version": "2025-03-26" }
        await init.text()
        await (await post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), session)).text()
        const res = await fetch(`${gw.url}/mcp`, { headers: { accept: "text/event-stream", authorization: `Bearer ${sre}`, ...session } })
        const reader = res.body!.getReader()
        const ended = (async () => {
          for (;;) if ((await reader.read()).done) return "ended" as const
        })().catch(() => "cut" as const)
        return { status: res.status, type: res.headers.get("content-type"), ended }
      })
      assert.strictEqual(stream.status, 200)
      assert.strictEqual(stream.type, "text/event-stream")
      yield* inflight(gw, 1)
      const shutdown = yield* shutdownTimed(gw)
      assert.strictEqual(yield* Effect.promise(() => stream.ended), "ended")
      assert.isBelow(yield* shutdown.done, Duration.toMillis(drainTimeout))
    }), { timeout: 60_000 })
})
