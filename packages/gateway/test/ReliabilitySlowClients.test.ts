/**
 * RELIABILITY case 22 on the running gateway: a client that trickles its headers and one that sends its headers
 * then trickles the body are cut off by the server's timeouts (408, connection closed), while a normal client on
 * the same server is served before, during and after. The timeouts come from the gateway's server config.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Exit, Fiber } from "effect"
import { connect as netConnect } from "node:net"
import { providerFor } from "@kubemend/core/Config"
import { ServerConfig } from "@kubemend/core/Servers"
import { initializeBody, mcpHeaders, raw } from "./support/Client.ts"
import { GatewayUnderTest, gatewayLayer, InfraLive, token } from "./support/Harness.ts"

interface Trickled {
  /** Milliseconds from connecting until the server closed the connection (or the trickle ran out). */
  readonly elapsedMs: number
  /** Whether the server closed the connection before the client was done. */
  readonly cutOff: boolean
  /** What the server sent back. */
  readonly received: string
}

/**
 * Connects, writes `head`, then one `drip` every `everyMs` for `drips` times; never completes the request. Resolves
 * when the server closes the connection, or after the last drip plus a grace period (not cut off).
 */
const trickle = (port: number, head: string, drip: string, everyMs: number, drips: number) =>
  Effect.async<Trickled>((resume) => {
    const started = Date.now()
    let received = ""
    let done = false
    const socket = netConnect(port, "127.0.0.1")
    const timer = setInterval(() => {
      if (drips-- <= 0) {
        clearInterval(timer)
        setTimeout(() => finish(false), 1000)
        return
      }
      if (!socket.destroyed) socket.write(drip)
    }, everyMs)
    const finish = (cutOff: boolean) => {
      if (done) return
      done = true
      clearInterval(timer)
      socket.destroy()
      resume(Effect.succeed({ elapsedMs: Date.now() - started, cutOff, received }))
    }
    socket.on("connect", () => socket.write(head))
    socket.on("data", (chunk) => void (received += chunk.toString("latin1")))
    socket.on("close", () => finish(true))
    socket.on("error", () => finish(true))
    return Effect.sync(() => finish(false))
  })

const headersTimeout = Duration.millis(600)
const requestTimeout = Duration.millis(1500)

layer(InfraLive, { excludeTestServices: true })("slow clients (case 22)", (it) => {
  it.layer(gatewayLayer({ server: { headersTimeout, requestTimeout } }))("short server timeouts", (it) => {
    it.scoped("slow headers and slow bodies are cut off; a normal client is still served", () =>
      Effect.gen(function* () {
        const gw = yield* GatewayUnderTest
        const sre = yield* token("sre")
        const port = Number(new URL(gw.url).port)
        const initialize = raw(`${gw.url}/mcp`, { method: "POST", headers: mcpHeaders, body: initializeBody, token: sre })
        assert.strictEqual((yield* initialize).status, 200)

        // Left alone, each would hold its connection for 20 s (100 drips, 200 ms apart).
        const slowHeaders = yield* Effect.fork(
          trickle(port, "POST /mcp HTTP/1.1\r\nHost: gateway\r\n", "X-Padding: y\r\n", 200, 100)
        )
        const body = Buffer.from(initializeBody)
        const slowBody = yield* Effect.fork(trickle(
          port,
          `POST /mcp HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${sre}\r\nContent-Type: application/json\r\n` +
            `Accept: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
          " ",
          200,
          100
        ))
        // While both are trickling, others are served.
        const during = yield* Effect.forEach(Array.from({ length: 5 }), () => initialize, { concurrency: 5 })
        assert.deepStrictEqual(during.map((r) => r.status), [200, 200, 200, 200, 200])

        const headers = yield* Fiber.join(slowHeaders)
        const bodies = yield* Fiber.join(slowBody)
        for (const [what, r, limit] of [["headers", headers, headersTimeout], ["body", bodies, requestTimeout]] as const) {
          assert.isTrue(r.cutOff, `the slow-${what} client was not cut off`)
          assert.match(r.received, /^HTTP\/1\.1 408 /, `slow ${what}: ${r.received}`)
          // Cut off after its limit, and long before it would have finished on its own.
          assert.isAtLeast(r.elapsedMs, Duration.toMillis(limit) - 50, `slow ${what}`)
          assert.isBelow(r.elapsedMs, 10_000, `slow ${what}`)
        }
        assert.strictEqual((yield* initialize).status, 200)
      }))
  })
})

describe("slow-client timeouts in the config file", () => {
  const load = (file: unknown) =>
    Effect.flatMap(ServerConfig, Effect.succeed).pipe(
      Effect.provide(ServerConfig.layerConfig(8443)),
      Effect.withConfigProvider(providerFor("gateway", file, ConfigProvider.fromMap(new Map())))
    )

  it.effect("server.headersTimeout / server.requestTimeout, defaults 10s / 60s, headers not longer than request", () =>
    Effect.gen(function* () {
      const defaults = yield* load({})
      assert.deepStrictEqual([Duration.toSeconds(defaults.headersTimeout), Duration.toSeconds(defaults.requestTimeout)], [10, 60])
      const set = yield* load({ server: { headersTimeout: "2s", requestTimeout: "5s" } })
      assert.deepStrictEqual([Duration.toMillis(set.headersTimeout), Duration.toMillis(set.requestTimeout)], [2000, 5000])
      const inverted = yield* Effect.exit(load({ server: { headersTimeout: "30s", requestTimeout: "5s" } }))
      assert.isTrue(Exit.isFailure(inverted))
      assert.match(String(Exit.isFailure(inverted) ? inverted.cause : ""), /headersTimeout must not be longer than server.requestTimeout/)
      const bad = yield* Effect.exit(load({ server: { headersTimeout: "soon" } }))
      assert.match(String(Exit.isFailure(bad) ? bad.cause : ""), /Go duration/)
    }))
})
