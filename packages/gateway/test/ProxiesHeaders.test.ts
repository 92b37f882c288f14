/**
 * The client address and the response headers of the running gateway: `X-Forwarded-For` is believed only from a
 * `trustedProxyCIDRs` peer (a spoofed one from anyone else is ignored, audit shows the socket's peer); every answer
 * carries `X-Content-Type-Options: nosniff`, `Cache-Control: no-store` and `X-Request-Id` — the caller's, or a
 * minted one — and the request's audit events carry the same id.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { initializeBody, mcpHeaders, raw } from "./support/Client.ts"
import { InfraLive, startGateway } from "./support/Harness.ts"

const unauthenticatedInit = (extra: Record<string, string>) => ({
  method: "POST",
  headers: { ...mcpHeaders, ...extra },
  body: initializeBody,
  token: "not-a-token"
})

layer(InfraLive, { excludeTestServices: true, timeout: "60 seconds" })("proxies and headers", (it) => {
  it.scoped("X-Forwarded-For from an untrusted peer is ignored; from a trusted proxy it names the client", () =>
    Effect.gen(function* () {
      const direct = yield* startGateway()
      yield* raw(`${direct.url}/mcp`, unauthenticatedInit({ "x-forwarded-for": "203.0.113.7" }))
      const spoofed = (yield* direct.audit.entries).filter((e) => e.type === "auth.failure")
      assert.deepStrictEqual(spoofed.map((e) => e.clientIp), ["127.0.0.1"])

      const proxied = yield* startGateway({ trustedProxyCIDRs: ["127.0.0.0/8"] })
      yield* raw(`${proxied.url}/mcp`, unauthenticatedInit({ "x-forwarded-for": "198.51.100.9, 203.0.113.7" }))
      const forwarded = (yield* proxied.audit.entries).filter((e) => e.type === "auth.failure")
      assert.deepStrictEqual(forwarded.map((e) => e.clientIp), ["203.0.113.7"])
    }))

  it.scoped("every answer is nosniff, no-store, and carries the request id, echoed or minted, also in audit", () =>
    Effect.gen(function* () {
      const gw = yield* startGateway()
      const echoed = yield* raw(`${gw.url}/mcp`, unauthenticatedInit({ "x-request-id": "req-7f3a" }))
      assert.strictEqual(echoed.status, 401)
      assert.strictEqual(echoed.headers.get("x-request-id"), "req-7f3a")
      assert.strictEqual(echoed.headers.get("x-content-type-options"), "nosniff")
      assert.strictEqual(echoed.headers.get("cache-control"), "no-store")
      const minted = yield* raw(`${gw.url}/mcp`, unauthenticatedInit({ "x-request-id": "bad id with spaces" }))
      assert.match(minted.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/)
      const ids = (yield* gw.audit.entries).filter((e) => e.type === "auth.failure").map((e) => e.data["request_id"])
      assert.deepStrictEqual(ids, ["req-7f3a", minted.headers.get("x-request-id")])
    }))
})
