/**
 * Hostile callers against one running gateway (MCP, A2A, status stream, access pre-flight, agent card), with the
 * dev issuer's and the dev API server's real verification: no token, garbage, expired, `alg: none` and another
 * issuer's tokens get 401 problem+json everywhere a token is needed; a ServiceAccount that is not the platform's
 * and a person without grants get 403 at the console gate (the status stream admits every authenticated caller,
 * spec document 1). Each refusal is an audit event naming the endpoint. Identity headers and `acting_user`
 * arguments are ignored (the agent hears the token's user) and audited; a spoofed `X-Forwarded-For` from a peer
 * that is not a trusted proxy is ignored; a page of another origin is refused (403) and audited. The platform's own persona passes on every endpoint.
 */
import { assert, layer } from "@effect/vitest"
import { make as makeIssuer } from "@kubemend/devkit/Issuer"
import { Effect } from "effect"
import { connect, call, initializeBody, mcpHeaders } from "./support/Client.ts"
import { Infra, InfraLive, startTestGateway, type TestGateway, token } from "./A2aHarness.ts"

const a2aSend = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "message/send",
  params: { message: { kind: "message", messageId: "m-1", role: "user", parts: [{ kind: "text", text: "hello" }] } }
})
const subscribe = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "status/subscribe", params: { rr_id: "rr-checkout-crash" } })

/** Every endpoint: path, request, and whether the console gate guards it (the rest only authenticate). */
const endpoints = [
  { name: "POST /mcp", path: "/mcp", init: { method: "POST", headers: mcpHeaders, body: initializeBody }, gated: true },
  { name: "GET /mcp", path: "/mcp", init: { method: "GET", headers: { accept: "text/event-stream", "mcp-session-id": "s-1" } }, gated: true },
  { name: "DELETE /mcp", path: "/mcp", init: { method: "DELETE", headers: { "mcp-session-id": "s-1" } }, gated: true },
  { name: "POST /a2a/invoke", path: "/a2a/invoke", init: { method: "POST", headers: { "content-type": "application/json" }, body: a2aSend }, gated: true },
  { name: "POST /", path: "/", init: { method: "POST", headers: { "content-type": "application/json" }, body: a2aSend }, gated: true },
  { name: "POST /a2a/status", path: "/a2a/status", init: { method: "POST", headers: { "content-type": "application/json" }, body: subscribe }, gated: false },
  { name: "GET /a2a/access", path: "/a2a/access", init: { method: "GET" }, gated: false }
] as const

/** One request; streams are cancelled once the head is in. */
const hit = (gw: TestGateway, path: string, init: RequestInit, bearer: string | null, extra: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const headers = new Headers(init.headers)
    if (bearer !== null) headers.set("authorization", `Bearer ${bearer}`)
    for (const [k, v] of Object.entries(extra)) headers.set(k, v)
    const abort = new AbortController()
    const res = await fetch(`${gw.url}${path}`, { ...init, headers, signal: abort.signal })
    const type = res.headers.get("content-type") ?? ""
    const body = type.includes("event-stream") ? (abort.abort(), undefined) : await res.json().catch(() => undefined)
    return { status: res.status, type, body: body as Record<string, any> | undefined }
  })

const refusals = (gw: TestGateway, type: string, endpoint: string) =>
  Effect.map(gw.audit.entries, (entries) => entries.filter((e) => e.type === type && e.data["endpoint"] === endpoint))

layer(InfraLive, { excludeTestServices: true, timeout: "60 seconds" })("hostile callers of the gateway", (it) => {
  it.scoped("every endpoint: unverifiable tokens 401, strangers 403 at the gate, all audited; the persona passes", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway()
      const { issuer, kube } = yield* Infra
      const foreign = yield* makeIssuer({})
      const unverifiable: ReadonlyArray<readonly [string, string | null]> = [
        ["no token", null],
        ["garbage", "not-a-token"],
        ["expired", yield* issuer.bad.expired],
        ["alg none", yield* issuer.bad.algNone()],
        ["another issuer", yield* foreign.persona("sre")],
        ["this issuer's key, another iss", yield* issuer.bad.wrongIssuer]
      ]
      const strangers: ReadonlyArray<readonly [string, string, string]> = [
        ["another namespace's ServiceAccount", kube.registerServiceAccountToken("intruders", "scraper"), "system:serviceaccount:intruders:scraper"],
        ["a person without grants", yield* issuer.token({ sub: "u-nobody", preferred_username: "nobody", groups: ["visitors"] }), "nobody"]
      ]
      for (const e of endpoints) {
        for (const [kind, bearer] of unverifiable) {
          const r = yield* hit(gw, e.path, e.init, bearer)
          assert.deepStrictEqual([r.status, r.type], [401, "application/problem+json"], `${e.name} ${kind}`)
          assert.strictEqual(r.body?.["status"], 401)
        }
        assert.strictEqual((yield* refusals(gw, "auth.failure", e.path)).length >= unverifiable.length, true, e.name)
        for (const [kind, bearer, user] of strangers) {
          const r = yield* hit(gw, e.path, e.init, bearer)
          if (e.gated) {
            assert.deepStrictEqual([r.status, r.type], [403, "application/problem+json"], `${e.name} ${kind}`)
            assert.match(r.body?.["detail"], /console access denied/)
            assert.isTrue((yield* refusals(gw, "auth.access_denied", e.path)).some((d) => d.userId === user), `${e.name} ${kind} audited`)
          } else if (e.path === "/a2a/access") {
            assert.deepStrictEqual([r.status, r.body?.["allowed"], r.body?.["user"]], [200, false, user], kind)
          } else {
            // Spec document 1: every authenticated caller may subscribe to a status stream.
            assert.deepStrictEqual([r.status, r.type], [200, "text/event-stream"], `${e.name} ${kind}`)
          }
        }
      }
      const sre = yield* token("sre")
      const own = yield* Effect.forEach(endpoints, (e) => Effect.map(hit(gw, e.path, e.init, sre), (r) => [e.name, r.status] as const))
      assert.deepStrictEqual(own, [
        ["POST /mcp", 200],
        ["GET /mcp", 404],
        ["DELETE /mcp", 404],
        ["POST /a2a/invoke", 200],
        ["POST /", 200],
        ["POST /a2a/status", 200],
        ["GET /a2a/access", 200]
      ])
      // The card is public: a bad token is served as anonymous (and the bad token audited), never refused.
      const card = yield* hit(gw, "/.well-known/agent-card.json", { method: "GET" }, yield* issuer.bad.expired)
      assert.strictEqual(card.status, 200)
      assert.isNotEmpty(yield* refusals(gw, "auth.failure", "/.well-known/agent-card.json"))
    }))

  it.scoped("identity headers, acting_user arguments and a spoofed X-Forwarded-For are ignored and audited", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway()
      const spoof = {
        "x-kubemend-user": "mallory",
        "x-kubemend-groups": "system:masters",
        "x-forwarded-user": "mallory",
        "impersonate-user": "mallory",
        "x-forwarded-for": "203.0.113.7"
      }
      // A page of another origin is refused before its token is looked at, and audited.
      const foreignPage = yield* hit(gw, "/mcp", endpoints[0].init, yield* token("sre"), { origin: "https://evil.example" })
      assert.strictEqual(foreignPage.status, 403)
      assert.deepStrictEqual((yield* refusals(gw, "auth.access_denied", "/mcp")).map((e) => e.data["origin"]), ["https://evil.example"])
      // Without a token the headers buy nothing.
      const anonymous = yield* hit(gw, "/mcp", endpoints[0].init, null, spoof)
      assert.strictEqual(anonymous.status, 401)
      // With the persona's token the persona acts, whatever the headers and arguments say.
      const c = yield* connect(gw.url, yield* token("sre"), { headers: spoof })
      gw.agent.clear()
      // An identity argument is not part of any tool's schema: refused before anything runs.
      const argued = yield* call(c, "svc_investigate", { rr_id: "rr-checkout-crash", acting_user: "mallory", acting_user_groups: ["system:masters"] })
      assert.isTrue(argued.isError)
      assert.match(argued.text, /invalid arguments: acting_user: is unexpected/)
      assert.isEmpty(gw.agent.calls())
      const r = yield* call(c, "svc_investigate", { rr_id: "rr-checkout-crash" })
      assert.isFalse(r.isError, r.text)
      const sent = gw.agent.calls()[0]!
      assert.deepStrictEqual([sent.args["acting_user"], sent.args["acting_user_groups"]], ["sre-user", ["kubemend-sre"]])
      assert.strictEqual(sent.headers["x-kubemend-user"], "sre-user")
      assert.isUndefined(sent.headers["impersonate-user"])
      const entries = yield* gw.audit.entries
      const ignored = entries.filter((e) => e.type === "auth.identity_ignored")
      assert.isNotEmpty(ignored)
      assert.deepStrictEqual([ignored[0]!.userId, ignored[0]!.clientIp, ignored[0]!.data["claimed"]], ["sre-user", "127.0.0.1", "mallory"])
      assert.include(String(ignored[0]!.data["headers"]), "x-forwarded-user")
      const executed = entries.filter((e) => e.type === "tool.executed" && e.data["tool_name"] === "svc_investigate")
      assert.deepStrictEqual(executed.map((e) => [e.userId, e.clientIp, e.outcome]), [["sre-user", "127.0.0.1", "failure"], [
        "sre-user",
        "127.0.0.1",
        "success"
      ]])
      assert.deepStrictEqual(entries.filter((e) => e.type === "auth.failure").map((e) => e.clientIp), ["127.0.0.1"])
    }))
})
