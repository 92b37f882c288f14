/**
 * Shutting down a running gateway with MCP work in flight, seen through the official MCP SDK client over HTTP:
 * a `tools/call` answered as SSE that finishes during the drain gets its real result; one still running when the
 * drain's grace is over gets a clear tool error (SSE and JSON clients alike), never a cut stream or a hang; a new
 * request while draining is a 503 problem; an open GET stream of a session ends cleanly; and the gateway is down
 * within the drain time, with no keep-alive connection holding it open.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Duration, Effect, Fiber } from "effect"
import { Drain } from "@kubemend/core/Drain"
import { Infra, InfraLive, startTestGateway, type TestGateway, token } from "./a2a-support.ts"
import { rr } from "./status-support.ts"
import { connect, type Connected, initializeBody, mcpHeaders } from "./support/Client.ts"

const crv = "kubemend.io/v1alpha1"

/** A `svc_watch` call as a promise, with whether it has settled yet. */
const watchCall = (c: Connected, rrId: string) => {
  let settled = false
  const result = c.client.callTool({ name: "svc_watch", arguments: { rr_id: rrId } }, undefined, { timeout: 20_000 })
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

const drainOf = (gw: TestGateway) => Context.get(gw.context as Context.Context<Drain>, Drain)

/** Waits (bounded) until `n` watches of `rrId` reached the cluster: that many `svc_watch` calls are running. */
const watching = (rrId: string, n: number) =>
  Effect.gen(function* () {
    const { kube } = yield* Infra
    const count = () =>
      kube.requests().filter((r) => r.path.endsWith("/remediationrequests") && r.query.includes("watch") && r.query.includes(rrId)).length
    for (let i = 0; count() < n; i++) {
      if (i > 1000) return yield* Effect.die(`never ${n} watches of ${rrId}`)
      yield* Effect.sleep("10 millis")
    }
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
      const watch = watchCall(c, "rr-mcp-drain-done")
      yield* watching("rr-mcp-drain-done", 1)

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
      assert.isFalse(watch.settled())

      const current = kube.get(crv, "RemediationRequest", "rr-mcp-drain-done", "kubemend-system")!
      kube.put({ ...current, status: { overallPhase: "Completed", message: "done" } })
      const answer = yield* Effect.promise(() => watch.result)
      assert.isFalse(answer.isError, answer.text)
      assert.strictEqual(JSON.parse(answer.text).status, "Completed")
      // Nothing left in flight: the gateway does not wait for the drain time, nor for an idle keep-alive connection.
      assert.isBelow(yield* shutdown.done, Duration.toMillis(drainTimeout))
    }), { timeout: 60_000 })

  it.scoped("a tool call still running at the end of the grace gets a tool error, over SSE and JSON; down within the drain time", () =>
    Effect.gen(function* () {
      const { kube } = yield* Infra
      kube.put(rr("rr-mcp-drain-long", { overallPhase: "Analyzing" }))
      const drainTimeout = Duration.seconds(3)
      const gw = yield* startTestGateway({ drainTimeout })
      const sre = yield* token("sre")
      const sse = watchCall(yield* connect(gw.url, sre), "rr-mcp-drain-long")
      const json = watchCall(yield* connect(gw.url, sre, { json: true }), "rr-mcp-drain-long")
      yield* watching("rr-mcp-drain-long", 2)
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
