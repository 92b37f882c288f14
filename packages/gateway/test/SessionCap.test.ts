/**
 * The per-user session cap beside the global pool (`rateLimit.maxSessionsPerUser`): a user holding their share of
 * MCP sessions and A2A conversations is refused with a 429 problem (MCP `initialize`) or a JSON-RPC error (A2A) that
 * names the setting, while other users still get sessions; closing one of theirs admits them again.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { initializeBody, mcpHeaders, raw } from "./support/Client.ts"
import { InfraLive, startTestGateway, token } from "./A2aHarness.ts"

const scripts = [{ name: "default", turns: [{ text: "Hello." }] }]

const a2aSend = (url: string, bearer: string) =>
  raw(`${url}/a2a/invoke`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    token: bearer,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "message/send",
      params: { message: { kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "text", text: "hello" }] } }
    })
  })

const mcpInitialize = (url: string, bearer: string) =>
  raw(`${url}/mcp`, { method: "POST", headers: { ...mcpHeaders, accept: "application/json" }, body: initializeBody, token: bearer })

const userCap = /already has 2 open sessions \(MCP sessions and A2A conversations together\), the per-user limit rateLimit\.maxSessionsPerUser/

layer(InfraLive, { excludeTestServices: true })("per-user session cap", (it) => {
  it.scoped("a user at their cap is refused (429 problem / JSON-RPC error naming it); others are not; closing one admits them", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway({ scripts, rateLimit: { maxConcurrentSessions: 10, maxSessionsPerUser: 2 } })
      const sre = yield* token("sre")
      const conversation = yield* a2aSend(gw.url, sre)
      assert.strictEqual(conversation.json.result?.status?.state, "completed", conversation.text)
      const session = yield* mcpInitialize(gw.url, sre)
      assert.strictEqual(session.status, 200)

      const refused = yield* mcpInitialize(gw.url, sre)
      assert.strictEqual(refused.status, 429)
      assert.strictEqual(refused.headers.get("content-type"), "application/problem+json")
      assert.strictEqual(refused.headers.get("retry-after"), "60")
      assert.strictEqual(refused.json.type, "https://kubemend.io/problems/rate-limited")
      assert.match(refused.json.detail, userCap)
      assert.match(refused.json.detail, /close an MCP session \(DELETE \/mcp\)/)

      const a2aRefused = yield* a2aSend(gw.url, sre)
      assert.strictEqual(a2aRefused.json.error?.data?.tag, "RateLimited")
      assert.match(a2aRefused.json.error.data.detail, userCap)

      // Another user is not held to the first one's sessions.
      assert.strictEqual((yield* mcpInitialize(gw.url, yield* token("cicd"))).status, 200)

      const sid = session.headers.get("mcp-session-id")!
      assert.strictEqual((yield* raw(`${gw.url}/mcp`, { method: "DELETE", headers: { "mcp-session-id": sid }, token: sre })).status, 200)
      assert.strictEqual((yield* mcpInitialize(gw.url, sre)).status, 200)
    }))
})
