/**
 * The edge and the MCP transport of the running gateway: body limit, Origin, Impersonate-* stripping, the auth
 * chain with its problems (401, 403, 429 + Retry-After), MCP disabled, JSON and SSE answers, and sessions (bound
 * to their user, limited, ended by DELETE, audited once).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { call, connect, initializeBody, mcpHeaders, raw } from "./support/Client.ts"
import { GatewayUnderTest, gatewayLayer, Infra, InfraLive, startGateway, token } from "./support/Harness.ts"

const problem = (r: { status: number; headers: Headers; json: any }, status: number, slug: string) => {
  assert.strictEqual(r.status, status, JSON.stringify(r.json))
  assert.strictEqual(r.headers.get("content-type"), "application/problem+json")
  assert.strictEqual(r.json.type, `https://kubemend.io/problems/${slug}`)
  assert.strictEqual(r.json.status, status)
}

const listToolsBody = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })

layer(InfraLive, { excludeTestServices: true })("edge", (it) => {
  it.layer(gatewayLayer({ allowedOrigins: ["https://console.example.com"] }))("chain", (it) => {
    it.scoped("401 without or with a bad token, 403 for a caller without console access, 404 problem for no route", () =>
      Effect.gen(function* () {
        const gw = yield* GatewayUnderTest
        const { issuer } = yield* Infra
        problem(yield* raw(`${gw.url}/mcp`, { method: "POST", headers: mcpHeaders, body: initializeBody }), 401, "unauthorized")
        const expired = yield* issuer.persona("sre", { exp: Math.floor(Date.now() / 1000) - 10 })
        problem(yield* raw(`${gw.url}/mcp`, { method: "POST", headers: mcpHeaders, body: initializeBody, token: expired }), 401, "unauthorized")
        // no-console holds the sre tool grants but not the console: denied before any tool.
        const denied = yield* raw(`${gw.url}/mcp`, { method: "POST", headers: mcpHeaders, body: initializeBody, token: yield* token("no-console") })
        problem(denied, 403, "forbidden")
        // An unknown route or method is a problem too, not an empty body.
        problem(yield* raw(`${gw.url}/nothing-here`, { token: yield* token("sre") }), 404, "not-found")
        problem(yield* raw(`${gw.url}/mcp`, { method: "PUT", token: yield* token("sre") }), 404, "not-found")
        const audit = yield* gw.audit.entries
        assert.isTrue(audit.some((e) => e.type === "auth.failure" && e.data["failure_reason"] === "missing_header"))
        assert.isTrue(audit.some((e) => e.type === "auth.access_denied" && e.userId === "no-console-user"))
      }))

    it.scoped("413 for an oversized body, declared or streamed", () =>
      Effect.gen(function* () {
        const gw = yield* GatewayUnderTest
        const sre = yield* token("sre")
        const big = "x".repeat(1024 * 1024 + 10)
        problem(yield* raw(`${gw.url}/mcp`, { method: "POST", headers: mcpHeaders, body: big, token: sre }), 413, "payload-too-large")
        const chunked = new ReadableStream({
          start(controller) {
            for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode("y".repeat(64 * 1024)))
            controller.close()
          }
        })
        const streamed = yield* raw(`${gw.url}/mcp`, { method: "POST", headers: mcpHeaders, body: chunked, token: sre, duplex: "half" } as RequestInit)
        problem(streamed, 413, "payload-too-large")
      }))

    it.scoped("Origin allow-list; Impersonate-* never reaches anything", () =>
      Effect.gen(function* () {
        const gw = yield* GatewayUnderTest
        const sre = yield* token("sre")
        const evil = yield* raw(`${gw.url}/mcp`, {
          method: "POST",
          headers: { ...mcpHeaders, origin: "http://evil.example" },
          body: initializeBody,
          token: sre
        })
        problem(evil, 403, "forbidden")
        assert.match(evil.json.detail, /origin/)
        const good = yield* raw(`${gw.url}/mcp`, {
          method: "POST",
          headers: { ...mcpHeaders, origin: "https://console.example.com" },
          body: initializeBody,
          token: sre
        })
        assert.strictEqual(good.status, 200)

        const { agent } = yield* Infra
        agent.clear()
        const sid = good.headers.get("mcp-session-id")!
        const headers = {
          ...mcpHeaders,
          accept: "application/json",
          "mcp-session-id": sid,
          "mcp-protocol-version": "2025-03-26",
          "impersonate-user": "system:admin",
          "impersonate-group": "system:masters",
          "impersonate-extra-scopes": "all"
        }
        yield* raw(`${gw.url}/mcp`, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), token: sre })
        const status = yield* raw(`${gw.url}/mcp`, {
          method: "POST",
          headers,
          token: sre,
          body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "svc_status", arguments: { rr_id: "rr-checkout-crash" } } })
        })
        assert.strictEqual(status.status, 200)
        assert.isUndefined(status.json.result.isError)
        // The call still ran as the token's user, and nothing downstream saw the headers.
        const forwarded = agent.calls().at(-1)!
        assert.strictEqual(forwarded.args["acting_user"], "sre-user")
        assert.deepStrictEqual(Object.keys(forwarded.headers).filter((h) => h.startsWith("impersonate")), [])
        yield* raw(`${gw.url}/mcp`, { method: "DELETE", headers: { "mcp-session-id": sid }, token: sre })
      }))

    it.scoped("501 problem when MCP is disabled", () =>
      Effect.gen(function* () {
        const gw = yield* startGateway({ mcpEnabled: false })
        problem(yield* raw(`${gw.url}/mcp`, { method: "POST", headers: mcpHeaders, body: initializeBody, token: yield* token("sre") }), 501, "mcp-disabled")
      }))
  })

  it.scoped("429 with Retry-After per IP (pre-auth) and per user; tool calls per minute", () =>
    Effect.gen(function* () {
      const gw = yield* startGateway({ rateLimit: { ipRequestsPerSec: 5 } })
      const results = yield* Effect.forEach(Array.from({ length: 8 }), () =>
        raw(`${gw.url}/mcp`, { method: "POST", headers: mcpHeaders, body: initializeBody }), { concurrency: 8 })
      const limited = results.filter((r) =>
        r.status === 429
      )
      assert.isAtLeast(limited.length, 3)
      problem(limited[0]!, 429, "rate-limited")
      assert.strictEqual(limited[0]!.headers.get("retry-after"), "1")

      const users = yield* startGateway({ rateLimit: { userRequestsPerSec: 3 } })
      const sre = yield* token("sre")
      const byUser = yield* Effect.forEach(Array.from({ length: 6 }), () =>
        raw(`${users.url}/mcp`, { method: "POST", headers: mcpHeaders, body: listToolsBody, token: sre }), { concurrency: 6 })
      assert.isAtLeast(
        byUser.filter((r) =>
          r.status === 429
        ).length,
        2
      )
      // Another user's quota is untouched.
      const other = yield* raw(`${users.url}/mcp`, { method: "POST", headers: mcpHeaders, body: initializeBody, token: yield* token("cicd") })
      assert.strictEqual(other.status, 200)

      const tools = yield* startGateway({ rateLimit: { toolCallsPerMinute: 2 } })
      const c = yield* connect(tools.url, yield* token("observability"))
      const outcomes = [yield* call(c, "svc_list_remediations"), yield* call(c, "svc_list_remediations"), yield* call(c, "svc_list_remediations")]
      assert.deepStrictEqual(
        outcomes.map((o) =>
          o.isError
        ),
        [false, false, true]
      )
      assert.match(outcomes[2]!.text, /rate limit exceeded — too many tool calls per minute/)
    }))

  it.scoped("a token verified a moment ago still pays the per-IP limit first, then the per-user one", () =>
    Effect.gen(function* () {
      // Sequential requests with one token: from the second on it is remembered, and both limits go to the shared
      // state together; each refusal must still be the right one, audited as before.
      const sends = (url: string, sre: string) =>
        Effect.forEach(Array.from({ length: 6 }), () => raw(`${url}/mcp`, { method: "POST", headers: mcpHeaders, body: listToolsBody, token: sre }))
      const sre = yield* token("sre")
      const byIp = yield* startGateway({ rateLimit: { ipRequestsPerSec: 2 } })
      const ipAnswers = yield* sends(byIp.url, sre)
      assert.notStrictEqual(ipAnswers[0]!.status, 429)
      assert.isAtLeast(ipAnswers.filter((r) => r.status === 429).length, 2)
      const ipDenials = (yield* byIp.audit.entries).filter((e) => e.type === "ratelimit.denied")
      assert.isAtLeast(ipDenials.length, 2)
      assert.isTrue(ipDenials.every((e) => e.data["scope"] === "ip" && e.userId === undefined))

      const byUser = yield* startGateway({ rateLimit: { userRequestsPerSec: 2 } })
      const userAnswers = yield* sends(byUser.url, sre)
      assert.isAtLeast(userAnswers.filter((r) => r.status === 429).length, 2)
      const userDenials = (yield* byUser.audit.entries).filter((e) => e.type === "ratelimit.denied")
      assert.isAtLeast(userDenials.length, 2)
      assert.isTrue(userDenials.every((e) => e.data["scope"] === "user" && e.userId === "sre-user"))
    }))

  it.layer(gatewayLayer({ rateLimit: { maxConcurrentSessions: 2 } }))("MCP transport", (it) => {
    it.scoped("JSON and SSE answers to the same calls", () =>
      Effect.gen(function* () {
        const gw = yield* GatewayUnderTest
        const sre = yield* token("sre")
        const sse = yield* connect(gw.url, sre)
        const json = yield* connect(gw.url, sre, { json: true })
        const a = yield* call(sse, "svc_get_remediation", { rr_id: "rr-db-blocked" })
        const b = yield* call(json, "svc_get_remediation", { rr_id: "rr-db-blocked" })
        assert.deepStrictEqual(a.json, b.json)
        // The raw answers differ in media type only.
        const init = (accept: string) => raw(`${gw.url}/mcp`, { method: "POST", headers: { ...mcpHeaders, accept }, body: initializeBody, token: sre })
        yield* Effect.promise(() => json.transport.terminateSession())
        yield* Effect.promise(() => sse.transport.terminateSession())
        const j = yield* init("application/json")
        assert.strictEqual(j.headers.get("content-type"), "application/json")
        assert.strictEqual(j.json.result.protocolVersion, "2025-03-26")
        const s = yield* init("application/json, text/event-stream")
        assert.strictEqual(s.headers.get("content-type"), "text/event-stream")
        assert.match(s.text, /^event: message\ndata: \{.*"protocolVersion":"2025-03-26"/m)
        for (const r of [j, s]) {
          yield* raw(`${gw.url}/mcp`, { method: "DELETE", headers: { "mcp-session-id": r.headers.get("mcp-session-id")! }, token: sre })
        }
        problem(yield* init("text/html"), 406, "not-acceptable")
        problem(
          yield* raw(`${gw.url}/mcp`, { method: "POST", headers: { ...mcpHeaders, "content-type": "text/plain" }, body: initializeBody, token: sre }),
          415,
          "unsupported-media-type"
        )
        const bad = yield* raw(`${gw.url}/mcp`, { method: "POST", headers: mcpHeaders, body: "{not json", token: sre })
        assert.deepStrictEqual([bad.status, bad.json.error.code], [400, -32700])
      }))

    it.scoped("JSON-RPC errors, batches and hostile arguments", () =>
      Effect.gen(function* () {
        const gw = yield* GatewayUnderTest
        const sre = yield* token("sre")
        const init = yield* raw(`${gw.url}/mcp`, { method: "POST", headers: { ...mcpHeaders, accept: "application/json" }, body: initializeBody, token: sre })
        const sid = init.headers.get("mcp-session-id")!
        const headers = { ...mcpHeaders, accept: "application/json", "mcp-session-id": sid, "mcp-protocol-version": "2025-03-26" }
        const post = (body: unknown) =>
          raw(`${gw.url}/mcp`, { method: "POST", headers, token: sre, body: typeof body === "string" ? body : JSON.stringify(body) })
        assert.strictEqual((yield* post({ jsonrpc: "2.0", method: "notifications/initialized" })).status, 202)
        assert.strictEqual((yield* post({ jsonrpc: "2.0", id: 1, method: "tools/unknown" })).json.error.code, -32601)
        assert.strictEqual((yield* post({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "svc_nope", arguments: {} } })).json.error.code, -32602)
        assert.deepStrictEqual((yield* post({ jsonrpc: "2.0", id: 3, method: "tools/call" })).json.error, {
          code: -32602,
          message: "Invalid params: tools/call needs params with a tool name"
        })
        assert.strictEqual((yield* post({ jsonrpc: "2.0", id: 4, method: "ping" })).json.result !== undefined, true)
        const empty = yield* post([])
        assert.deepStrictEqual([empty.status, empty.json.error.code], [400, -32600])
        const batch = yield* post([{ jsonrpc: "2.0", id: 5, method: "ping" }, { jsonrpc: "2.0", id: 6, method: "tools/list" }])
        assert.deepStrictEqual(batch.json.map((r: any) => r.id), [5, 6])
        const huge = yield* post(Array.from({ length: 5000 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "ping" })))
        assert.strictEqual(huge.status, 400)
        const deep = yield* post("[".repeat(200_000) + "]".repeat(200_000))
        assert.strictEqual(deep.status, 400)
        const deepArguments = yield* post(
          `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"svc_list_remediations","arguments":{"x":${"[".repeat(5000)}${"]".repeat(5000)}}}}`
        )
        assert.deepStrictEqual([deepArguments.status, deepArguments.json.error.code], [400, -32600])
        const proto = yield* post(
          `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"svc_list_remediations","arguments":{"__proto__":{"polluted":true}}}}`
        )
        // Either dropped by the SDK's decoding or refused as an unknown argument; never merged into a prototype.
        assert.strictEqual(proto.status, 200)
        assert.isUndefined(({} as Record<string, unknown>)["polluted"])
        assert.isUndefined((Object.prototype as Record<string, unknown>)["polluted"])
        for (const rr_id of ["a/b", "..", "a\u0000b", "x".repeat(100_000)]) {
          const bad = yield* post({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "svc_get_remediation", arguments: { rr_id } } })
          // One issue per argument, without the value echoed back.
          assert.strictEqual(
            bad.json.result.content[0].text,
            "invalid arguments: rr_id: must be a Kubernetes resource name (lower-case letters, digits, '-' and '.')"
          )
        }
        yield* raw(`${gw.url}/mcp`, { method: "DELETE", headers: { "mcp-session-id": sid }, token: sre })
      }))

    it.scoped("sessions: bound to their user, limited, ended by DELETE, audited once", () =>
      Effect.gen(function* () {
        const gw = yield* GatewayUnderTest
        const sre = yield* token("sre")
        const cicd = yield* token("cicd")
        yield* gw.audit.clear
        const first = yield* raw(`${gw.url}/mcp`, { method: "POST", headers: mcpHeaders, body: initializeBody, token: sre })
        const sid = first.headers.get("mcp-session-id")!
        const session = { ...mcpHeaders, "mcp-session-id": sid, "mcp-protocol-version": "2025-03-26" }
        assert.strictEqual((yield* raw(`${gw.url}/mcp`, { method: "POST", headers: session, body: listToolsBody, token: sre })).status, 200)
        // Someone else's session id is unknown to them; a session id without a token authenticates nobody.
        problem(yield* raw(`${gw.url}/mcp`, { method: "POST", headers: session, body: listToolsBody, token: cicd }), 404, "session-not-found")
        problem(yield* raw(`${gw.url}/mcp`, { method: "POST", headers: session, body: listToolsBody }), 401, "unauthorized")
        problem(yield* raw(`${gw.url}/mcp`, { method: "POST", headers: mcpHeaders, body: listToolsBody, token: sre }), 400, "invalid-request")
        problem(
          yield* raw(`${gw.url}/mcp`, {
            method: "POST",
            headers: { ...session, "mcp-session-id": "00000000-0000-0000-0000-000000000000" },
            body: listToolsBody,
            token: sre
          }),
          404,
          "session-not-found"
        )

        const second = yield* raw(`${gw.url}/mcp`, { method: "POST", headers: mcpHeaders, body: initializeBody, token: cicd })
        assert.strictEqual(second.status, 200)
        const third = yield* raw(`${gw.url}/mcp`, { method: "POST", headers: mcpHeaders, body: initializeBody, token: sre })
        problem(third, 503, "session-limit-reached")
        assert.match(third.json.detail, /at most 2 sessions \(MCP sessions and A2A conversations together\) may be open at once; close an MCP session/)

        assert.strictEqual((yield* raw(`${gw.url}/mcp`, { method: "DELETE", headers: session, token: sre })).status, 200)
        problem(yield* raw(`${gw.url}/mcp`, { method: "POST", headers: session, body: listToolsBody, token: sre }), 404, "session-not-found")
        const fourth = yield* raw(`${gw.url}/mcp`, { method: "POST", headers: mcpHeaders, body: initializeBody, token: sre })
        assert.strictEqual(fourth.status, 200)
        yield* raw(`${gw.url}/mcp`, { method: "DELETE", headers: { "mcp-session-id": fourth.headers.get("mcp-session-id")! }, token: sre })
        yield* raw(`${gw.url}/mcp`, { method: "DELETE", headers: { "mcp-session-id": second.headers.get("mcp-session-id")! }, token: cicd })

        const inits = (yield* gw.audit.entries).filter((e) => e.type === "mcp.session_init")
        assert.deepStrictEqual(inits.map((e) => e.data["mcp_session_id"]).filter((id) => id === sid), [sid])
        assert.strictEqual(inits.length, 3)
        // The version the SDK client asked for and the server agreed to, not a fixed one.
        assert.deepStrictEqual([...new Set(inits.map((e) => e.data["protocol_version"]))], ["2025-03-26"])
      }))
  })
})
