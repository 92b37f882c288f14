/**
 * One pool of `maxConcurrentSessions` for MCP sessions and A2A conversations: with the pool full of either kind,
 * the other is refused with a clear error, and closing a session frees its slot for both. Also RELIABILITY case 24's
 * second half: with the default limit of 100, the 101st session is refused.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { initializeBody, mcpHeaders, raw } from "./support/Client.ts"
import { InfraLive, startTestGateway, token } from "./A2aHarness.ts"
import { startGateway } from "./support/Harness.ts"

const scripts = [{ name: "default", turns: [{ text: "Hello." }] }]

/** `message/send` (A2A 0.3) without a contextId: each opens a new conversation. */
const a2aSend = (url: string, bearer: string, contextId?: string) =>
  raw(`${url}/a2a/invoke`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    token: bearer,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "message/send",
      params: {
        message: {
          kind: "message",
          messageId: randomUUID(),
          role: "user",
          parts: [{ kind: "text", text: "hello" }],
          ...(contextId === undefined ? {} : { contextId })
        }
      }
    })
  })

const mcpInitialize = (url: string, bearer: string) =>
  raw(`${url}/mcp`, { method: "POST", headers: { ...mcpHeaders, accept: "application/json" }, body: initializeBody, token: bearer })

const poolFull = /at most 2 sessions \(MCP sessions and A2A conversations together\) may be open at once/

layer(InfraLive, { excludeTestServices: true })("one session pool", (it) => {
  it.scoped("with the pool full of A2A conversations, MCP initialize is refused", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway({ scripts, rateLimit: { maxConcurrentSessions: 2 } })
      const sre = yield* token("sre")
      const first = yield* a2aSend(gw.url, sre)
      const second = yield* a2aSend(gw.url, yield* token("ai-orchestrator"))
      for (const r of [first, second]) assert.strictEqual(r.json.result?.status?.state, "completed", r.text)

      const refused = yield* mcpInitialize(gw.url, yield* token("cicd"))
      assert.strictEqual(refused.status, 503)
      assert.strictEqual(refused.headers.get("content-type"), "application/problem+json")
      assert.strictEqual(refused.json.type, "https://kubemend.io/problems/session-limit-reached")
      assert.match(refused.json.detail, poolFull)
      // An open conversation goes on without another slot; a third one is refused like MCP was.
      const again = yield* a2aSend(gw.url, sre, first.json.result.contextId)
      assert.strictEqual(again.json.result?.status?.state, "completed", again.text)
      const third = yield* a2aSend(gw.url, sre)
      assert.strictEqual(third.json.error?.message, "Too Many Sessions")
    }))

  it.scoped("with the pool full of MCP sessions, a new A2A conversation is refused until one closes", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway({ scripts, rateLimit: { maxConcurrentSessions: 2 } })
      const sre = yield* token("sre")
      const sessions = [yield* mcpInitialize(gw.url, sre), yield* mcpInitialize(gw.url, sre)]
      assert.deepStrictEqual(sessions.map((s) => s.status), [200, 200])

      const refused = yield* a2aSend(gw.url, sre)
      assert.strictEqual(refused.status, 200)
      assert.deepInclude(refused.json.error, { message: "Too Many Sessions" })
      assert.strictEqual(refused.json.error.data.tag, "SessionLimitReached")
      assert.match(refused.json.error.data.detail, poolFull)
      assert.match(refused.json.error.data.detail, /continue an existing conversation/)

      const sid = sessions[0]!.headers.get("mcp-session-id")!
      assert.strictEqual((yield* raw(`${gw.url}/mcp`, { method: "DELETE", headers: { "mcp-session-id": sid }, token: sre })).status, 200)
      const admitted = yield* a2aSend(gw.url, sre)
      assert.strictEqual(admitted.json.result?.status?.state, "completed", admitted.text)
      // The conversation now holds the freed slot.
      assert.strictEqual((yield* mcpInitialize(gw.url, sre)).status, 503)
    }))

  it.scoped("the default limit: 100 sessions open, the 101st refused", () =>
    Effect.gen(function* () {
      // One user opens them all here, so their own cap (default 10) is raised out of the way.
      const gw = yield* startGateway({ rateLimit: { maxSessionsPerUser: 1000 } })
      const sre = yield* token("sre")
      const opened = yield* Effect.forEach(Array.from({ length: 100 }), () => mcpInitialize(gw.url, sre), { concurrency: 10 })
      assert.deepStrictEqual([...new Set(opened.map((r) => r.status))], [200])
      assert.strictEqual(new Set(opened.map((r) => r.headers.get("mcp-session-id"))).size, 100)
      const refused = yield* mcpInitialize(gw.url, sre)
      assert.strictEqual(refused.status, 503)
      assert.match(refused.json.detail, /at most 100 sessions/)
      const metrics = (yield* raw(`${gw.metricsUrl}/metrics`)).text
      assert.match(metrics, /af_mcp_sessions_open 100\b/)
    }))
})
