/**
 * Authorization and faults through the running gateway: the persona matrix (each persona's tools run, the others
 * answer permission denied), SAR errors deny, the agent or storage down answer error results at once (breakers
 * open and are audited), a slow SSE reader is dropped without slowing others, readiness and metrics.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { connect as netConnect, type Socket } from "node:net"
import { personas, toolsFor } from "@kubemend/core/Personas"
import { call, connect, initializeBody, mcpHeaders, raw } from "./support/Client.ts"
import { GatewayUnderTest, gatewayLayer, Infra, InfraLive, startGateway, token } from "./support/Harness.ts"

/** Arguments that get every tool past authorization without blocking or changing anything. */
const probe: Record<string, Record<string, unknown>> = {
  svc_watch: {},
  svc_cancel_remediation: { rr_id: "rr-does-not-exist" },
  svc_approve: { rar_name: "rar-does-not-exist", decision: "Approved" },
  svc_investigate: {},
  svc_await_session: { rr_name: "rr-does-not-exist" }
}

layer(InfraLive, { excludeTestServices: true })("access", (it) => {
  it.layer(gatewayLayer())("authorization", (it) => {
    it.scoped("persona matrix: allowed tools run, the others answer permission denied", () =>
      Effect.gen(function* () {
        const gw = yield* GatewayUnderTest
        const c0 = yield* connect(gw.url, yield* token("sre"))
        const all = (yield* Effect.promise(() => c0.client.listTools())).tools.map((t) => t.name)
        assert.strictEqual(all.length, 23)
        yield* Effect.forEach(personas, (persona) =>
          Effect.gen(function* () {
            const c = yield* connect(gw.url, yield* token(persona))
            const allowed = new Set(toolsFor(persona, "svc"))
            const outcomes = yield* Effect.forEach(all, (tool) => Effect.map(call(c, tool, probe[tool] ?? {}), (r) => [tool, r] as const), { concurrency: 6 })
            for (const [tool, r] of outcomes) {
              if (allowed.has(tool)) assert.notMatch(r.text, /permission denied/, `${persona} should reach ${tool}`)
              else assert.deepStrictEqual([r.isError, r.text], [true, `permission denied: role lacks access to ${tool}`], `${persona} ${tool}`)
            }
          }), { concurrency: "unbounded", discard: true })
        const denied = (yield* gw.audit.entries).filter((e) => e.type === "tool.executed" && e.data["tool_outcome"] === "denied")
        assert.isAbove(denied.length, 60)
        // Warm cache: a second round of one persona's calls sends no more reviews.
        const metrics = (yield* raw(`${gw.metricsUrl}/metrics`)).text
        assert.match(metrics, /af_tool_calls_total\{tool="svc_approve",outcome="denied"\} \d+/)
        assert.match(metrics, /af_sar_cache_hits \d+/)
        assert.match(metrics, /af_http_requests_total\{endpoint="\/mcp",method="POST",status="200"\} \d+/)
        assert.match(metrics, /af_mcp_sessions_open \d+/)
      }))

    it.scoped("a SAR error denies and is not cached", () =>
      Effect.gen(function* () {
        const gw = yield* startGateway()
        const { kube } = yield* Infra
        const c = yield* connect(gw.url, yield* token("l3-audit"))
        kube.faults.failNext(1, { verb: "create", resource: "subjectaccessreviews", status: 500 })
        const first = yield* call(c, "svc_list_workflows")
        assert.deepStrictEqual([first.isError, first.text], [true, "permission denied: role lacks access to svc_list_workflows"])
        const second = yield* call(c, "svc_list_workflows")
        assert.isFalse(second.isError, second.text)
      }))
  })

  it.scoped("agent down: error results at once, the breaker opens and is audited; readiness follows", () =>
    Effect.gen(function* () {
      const { agent } = yield* Infra
      const gw = yield* startGateway({ breaker: { failureThreshold: 2 } })
      assert.strictEqual((yield* raw(`${gw.healthUrl}/readyz`)).status, 200)
      const c = yield* connect(gw.url, yield* token("sre"))
      assert.isFalse((yield* call(c, "svc_status", { rr_id: "rr-checkout-crash" })).isError)
      yield* Effect.promise(() => agent.stop())
      try {
        for (let i = 0; i < 3; i++) {
          const r = yield* call(c, "svc_status", { rr_id: "rr-checkout-crash" })
          assert.isTrue(r.isError)
          assert.match(r.text, /the investigation agent is unavailable/)
        }
        const started = Date.now()
        const open = yield* call(c, "svc_message", { rr_id: "rr-checkout-crash", message: "hi" })
        assert.match(open.text, /circuit open/)
        assert.isBelow(Date.now() - started, 200)
        assert.isTrue((yield* gw.audit.entries).some((e) => e.type === "circuitbreaker.trip" && e.data["name"] === "agent"))
        assert.match((yield* raw(`${gw.metricsUrl}/metrics`)).text, /af_circuit_breaker_state\{name="agent"\} 2/)
        const ready = yield* raw(`${gw.healthUrl}/readyz`)
        assert.deepStrictEqual([ready.status, ready.json.checks.agent], [503, "failing"])
        // Other tools keep working.
        assert.isFalse((yield* call(c, "svc_list_remediations")).isError)
      } finally {
        yield* Effect.promise(() => agent.start())
      }
    }))

  it.scoped("storage down: error results at once, the gateway stays up", () =>
    Effect.gen(function* () {
      const gw = yield* startGateway({ storage: "down", breaker: { failureThreshold: 1 } })
      const c = yield* connect(gw.url, yield* token("sre"))
      for (const [tool, args] of [["svc_list_workflows", {}], ["svc_get_audit_trail", { rr_id: "rr-api-done" }]] as const) {
        const r = yield* call(c, tool, args)
        assert.isTrue(r.isError)
        assert.match(r.text, /storage service is unavailable/)
      }
      assert.isTrue((yield* gw.audit.entries).some((e) => e.type === "circuitbreaker.trip" && e.data["name"] === "storage"))
      assert.strictEqual((yield* raw(`${gw.healthUrl}/readyz`)).status, 503)
      assert.isFalse((yield* call(c, "svc_get_remediation", { rr_id: "rr-api-done" })).isError)
    }))

  it.scoped("a slow SSE reader is dropped at its buffer limit; others are not slowed", () =>
    Effect.gen(function* () {
      const gw = yield* startGateway({ sseMaxBufferedBytes: 256 * 1024 })
      const sre = yield* token("sre")
      const init = yield* raw(`${gw.url}/mcp`, { method: "POST", headers: mcpHeaders, body: initializeBody, token: sre })
      const sid = init.headers.get("mcp-session-id")!
      const session = { ...mcpHeaders, accept: "application/json", "mcp-session-id": sid, "mcp-protocol-version": "2025-03-26" }
      yield* raw(`${gw.url}/mcp`, {
        method: "POST",
        headers: session,
        body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
        token: sre
      })
      // The standalone stream of the session, opened by a client that never reads.
      const port = Number(new URL(gw.url).port)
      const socket = yield* Effect.promise(() =>
        new Promise<Socket>((resolve) => {
          const s = netConnect(port, "127.0.0.1", () => {
            s.write(
              `GET /mcp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${sre}\r\nMcp-Session-Id: ${sid}\r\nMcp-Protocol-Version: 2025-03-26\r\n\r\n`
            )
            resolve(s)
          })
        })
      )
      // A first agent call opens the session's link (and its event stream) to the agent.
      const toolCall = (id: number, name: string, args: Record<string, unknown>) =>
        JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } })
      yield* raw(`${gw.url}/mcp`, { method: "POST", headers: session, token: sre, body: toolCall(8, "svc_investigate", { rr_id: "rr-checkout-crash" }) })
      yield* Effect.sleep("300 millis")
      const flood = yield* raw(`${gw.url}/mcp`, {
        method: "POST",
        headers: session,
        token: sre,
        body: toolCall(9, "svc_message", { rr_id: "rr-checkout-crash", message: "flood:400" })
      })
      assert.strictEqual(flood.status, 200)
      // Meanwhile another user's calls answer promptly.
      const other = yield* connect(gw.url, yield* token("cicd"))
      const t0 = Date.now()
      assert.isFalse((yield* call(other, "svc_list_remediations")).isError)
      assert.isBelow(Date.now() - t0, 1000)
      // Only now does the client read: it finds what the kernel held, then the end of the stream.
      yield* Effect.sleep("1 second")
      const ended = yield* Effect.promise(() =>
        new Promise<boolean>((resolve) => {
          socket.on("close", () => resolve(true))
          socket.on("error", () => resolve(true))
          socket.resume()
          setTimeout(() => resolve(false), 5000)
        })
      )
      socket.destroy()
      assert.isTrue(ended, "the slow reader was not dropped")
    }))
})
