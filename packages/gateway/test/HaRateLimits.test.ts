/**
 * The rate limits of two gateway replicas sharing a real Redis, each request sent to the replica the test names: a
 * `tools/call` costs one Valkey command (its IP, user and tool-call tokens taken in one script), on whichever replica
 * serves it; the limits count across both replicas and refuse as each limit alone would: a call refused before the
 * tool limit (permission denied, unknown tool, unknown session) leaves its tool-call token in the bucket, and every
 * POST, whatever its body (malformed JSON, a batch, a notification, the wrong content type), pays the IP and user
 * limits before it is answered.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { commandsBetween, valkeyCommands } from "../../../bench/support/valkey-commands.ts"
import type { GatewayOverrides } from "../src/GatewayConfig.ts"
import { rateLimitedMessage } from "../src/Mcp/Call.ts"
import { initializeBody, mcpHeaders, raw } from "./support/Client.ts"
import { type Gateway, InfraLive, startGateway, token } from "./support/Harness.ts"
import { requireRedis, skipRedis, uniquePrefix, unreachable, valkeySettings } from "./support/Redis.ts"

const replicas = (rateLimit: NonNullable<GatewayOverrides["rateLimit"]>) =>
  Effect.gen(function* () {
    yield* requireRedis
    const valkey = Option.some(valkeySettings(yield* uniquePrefix("limits")))
    return [yield* startGateway({ valkey, rateLimit }), yield* startGateway({ valkey, rateLimit })] as const
  })

const json = { ...mcpHeaders, accept: "application/json" }

/** An MCP session opened on `gw` with plain JSON answers: the headers that name it. */
const session = (gw: Gateway, bearer: string) =>
  Effect.gen(function* () {
    const opened = yield* raw(`${gw.url}/mcp`, { method: "POST", headers: json, body: initializeBody, token: bearer })
    assert.strictEqual(opened.status, 200)
    const headers = { ...json, "mcp-session-id": opened.headers.get("mcp-session-id")!, "mcp-protocol-version": "2025-03-26" }
    const initialized = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })
    assert.strictEqual((yield* raw(`${gw.url}/mcp`, { method: "POST", headers, body: initialized, token: bearer })).status, 202)
    return headers
  })

let ids = 100
const toolCall = (gw: Gateway, headers: Record<string, string>, bearer: string, name = "svc_list_remediations") =>
  raw(`${gw.url}/mcp`, {
    method: "POST",
    headers,
    token: bearer,
    body: JSON.stringify({ jsonrpc: "2.0", id: ids++, method: "tools/call", params: { name, arguments: {} } })
  })

/** What `effect` sent to Valkey, by command. */
const counted = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const before = valkeyCommands()
    const result = yield* effect
    return [result, Object.fromEntries(commandsBetween(before, valkeyCommands()))] as const
  })

const title = "rate limits of gateway replicas sharing Valkey"
layer(InfraLive, { excludeTestServices: true })(skipRedis ? `${title} (skipped: ${unreachable})` : title, (it) => {
  it.scoped.skipIf(skipRedis)("a tools/call sends one Valkey command on either replica; one refused before the tool limit, two", () =>
    Effect.gen(function* () {
      const [a, b] = yield* replicas({})
      const sre = yield* token("sre")
      const headers = yield* session(a, sre)
      // B re-creates the session from its record on its first request.
      assert.strictEqual((yield* toolCall(b, headers, sre)).status, 200)
      for (const gw of [a, b, a, b]) {
        const [answer, commands] = yield* counted(toolCall(gw, headers, sre))
        assert.strictEqual(answer.status, 200)
        assert.isUndefined(answer.json.result.isError, answer.text)
        assert.deepStrictEqual(commands, { evalsha: 1 })
      }
      // Not permitted: the token taken with the request goes back, in a second command.
      const observer = yield* token("observability")
      const watching = yield* session(b, observer)
      const [denied, commands] = yield* counted(toolCall(b, watching, observer, "svc_approve"))
      assert.strictEqual(denied.json.result.content[0].text, "permission denied: role lacks access to svc_approve")
      assert.deepStrictEqual(commands, { evalsha: 2 })
    }))

  it.scoped.skipIf(skipRedis)("the tool limit counts both replicas, and calls refused before it take none of it", () =>
    Effect.gen(function* () {
      const [a, b] = yield* replicas({ toolCallsPerMinute: 2 })
      const observer = yield* token("observability")
      const headers = yield* session(a, observer)
      const denied = yield* toolCall(a, headers, observer, "svc_approve")
      assert.match(denied.json.result.content[0].text, /^permission denied/)
      const unknown = yield* toolCall(b, headers, observer, "svc_no_such_tool")
      assert.strictEqual(unknown.json.error.code, -32602)
      const stranger = yield* toolCall(a, { ...headers, "mcp-session-id": "no-such-session" }, observer)
      assert.strictEqual(stranger.status, 404)

      const outcomes = [yield* toolCall(b, headers, observer), yield* toolCall(a, headers, observer), yield* toolCall(b, headers, observer)]
      assert.deepStrictEqual(outcomes.map((o) => o.json.result.isError === true), [false, false, true])
      assert.strictEqual(outcomes[2]!.json.result.content[0].text, rateLimitedMessage)
      const limited = (yield* b.audit.entries).filter((e) => e.type === "tool.executed" && e.data["error_code"] === "rate_limited")
      assert.strictEqual(limited.length, 1)
    }))

  it.scoped.skipIf(skipRedis)(
    "the user limit counts both replicas: tool calls and every other POST, whatever its body, pay it first",
    () =>
      Effect.gen(function* () {
        // Three per second: the session takes two, so one more and what refills during the burst pass; counted per
        // replica, four would (one on A, three on B).
        const [a, b] = yield* replicas({ userRequestsPerSec: 3 })
        const sre = yield* token("sre")
        const headers = yield* session(a, sre)
        const bodies = [
          ["tools/call", headers, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "svc_list_remediations", arguments: {} } })],
          ["malformed JSON", headers, "{\"jsonrpc\": "],
          ["batch", headers, JSON.stringify([{ jsonrpc: "2.0", id: 2, method: "tools/list" }])],
          ["notification", headers, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })],
          ["wrong content type", { ...headers, "content-type": "text/plain" }, "{}"]
        ] as const
        const sends = [...bodies, ...bodies].map(([kind, h, body], i) =>
          Effect.map(raw(`${(i % 2 === 0 ? a : b).url}/mcp`, { method: "POST", headers: h, body, token: sre }), (r) => [kind, r] as const)
        )
        const answers = yield* Effect.all(sends, { concurrency: "unbounded" })
        const refused = answers.filter(([, r]) => r.status === 429)
        assert.isAtLeast(refused.length, 7, JSON.stringify(answers.map(([kind, r]) => [kind, r.status])))
        for (const [, r] of refused) {
          assert.strictEqual(r.json.type, "https://kubemend.io/problems/rate-limited")
          assert.strictEqual(r.headers.get("retry-after"), "1")
        }
        const denials = [...yield* a.audit.entries, ...yield* b.audit.entries].filter((e) => e.type === "ratelimit.denied")
        assert.strictEqual(denials.length, refused.length)
        assert.isTrue(denials.every((e) => e.data["scope"] === "user" && e.userId === "sre-user"))
      })
  )
})
