/**
 * The status stream's `status/investigation` lines come from whichever gateway replica sees the investigation: two
 * gateways share a real Redis and one real agent, the holder's MCP session is on A and the RR's status subscriber
 * on B, and B's subscriber gets each of the investigation's events once (a call and the follow after it carry the
 * same events).
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Option, Redacted } from "effect"
import { InfraLive, startTestGateway, token } from "./A2aHarness.ts"
import { call, connect } from "./support/Client.ts"
import { checkoutScripts as scripts, startRealAgent } from "./support/RealAgent.ts"
import { requireRedis, skipRedis, uniquePrefix, unreachable, valkeySettings } from "./support/Redis.ts"
import { open, subscribeBody } from "./StatusSupport.ts"

const rr_id = "rr-checkout-crash"

const title = "status-stream investigation events across gateway replicas"
layer(InfraLive, { excludeTestServices: true })(skipRedis ? `${title} (skipped: ${unreachable})` : title, (it) => {
  it.scoped.skipIf(skipRedis)("a subscriber on B gets the events of an investigation held through A, each once", () =>
    Effect.gen(function* () {
      yield* requireRedis
      const agent = yield* startRealAgent({ scripts, latencyMs: 150, startWait: Duration.millis(50) })
      const valkey = Option.some(valkeySettings(yield* uniquePrefix("status")))
      const options = { agentUrl: Option.some(agent.url), agentToken: { token: Redacted.make(agent.restToken) }, valkey }
      const a = yield* startTestGateway(options)
      const b = yield* startTestGateway(options)
      const status = yield* open(b.url, yield* token("sre"), subscribeBody(rr_id))
      const sre = yield* connect(a.url, yield* token("sre"))

      const started = (yield* call(sre, "svc_investigate", { rr_id })).json
      assert.deepInclude(started, { status: "active" })
      yield* call(sre, "svc_message", { rr_id, message: "and now?" })
      const lines = () => status.frames().filter((f: any) => f.event === "status/investigation").map((f: any) => f.data.params)
      const answered = () => lines().filter((p: any) => p.event === "interactive_state" && p.analysis === "answered").length
      yield* Effect.promise(() => status.until(() => answered() >= 2, 20_000))
      assert.deepInclude(lines().find((p: any) => p.event === "tool_call"), { rr_id, session_id: started.session_id, message: "calling cluster_get" })
      yield* Effect.sleep(Duration.millis(500))
      const seqs = lines().map((p: any) => p.seq as number)
      assert.deepStrictEqual(seqs, [...new Set(seqs)].sort((x, y) => x - y))
    }), { timeout: 60_000 })
})
