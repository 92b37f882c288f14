/**
 * Agent calls run under the calling tool's own deadline, not the global `tools.timeout`, and a slow answer is a
 * timeout for that call, not an outage: however many time out, the agent breaker stays closed for everyone.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { call, connect, raw } from "./support/Client.ts"
import { InfraLive, startGateway, token } from "./support/Harness.ts"

layer(InfraLive, { excludeTestServices: true })("agent deadlines", (it) => {
  it.scoped("a per-tool timeout above the global one reaches the agent client; slow answers time out without opening the breaker", () =>
    Effect.gen(function* () {
      const gw = yield* startGateway({
        toolTimeout: Duration.millis(300),
        // The start and the message have their own 5 s; svc_status keeps the global 300 ms.
        toolTimeouts: new Map([["svc_message", Duration.seconds(5)], ["svc_investigate", Duration.seconds(5)]]),
        breaker: { failureThreshold: 2 }
      })
      const c = yield* connect(gw.url, yield* token("sre"))
      assert.isFalse((yield* call(c, "svc_investigate", { rr_id: "rr-checkout-crash" })).isError)
      // svc_status has the global 300 ms: three slow answers are three timeouts.
      for (let i = 0; i < 3; i++) {
        const slow = yield* call(c, "svc_status", { rr_id: "rr-checkout-crash", message: "slow:800" })
        assert.isTrue(slow.isError)
        assert.match(slow.text, /svc_status timed out after 300ms|did not answer within 300ms/)
      }
      assert.match((yield* raw(`${gw.metricsUrl}/metrics`)).text, /af_circuit_breaker_state\{name="agent"\} 0/)
      assert.isFalse((yield* gw.audit.entries).some((e) => e.type === "circuitbreaker.trip"))
      // svc_message's own 5 s reaches the agent client: the same slow answer arrives.
      const answered = yield* call(c, "svc_message", { rr_id: "rr-checkout-crash", message: "slow:800" })
      assert.isFalse(answered.isError, answered.text)
      assert.strictEqual(answered.json.message, "ack: slow:800")
    }))
})
