/**
 * The gateway's readiness asks the real agent as the gateway itself (its ServiceAccount token): the agent refuses
 * tokenless callers, so the probe passes only with a token the agent admits and fails when the agent refuses it
 * (a missing `agent-client` grant) instead of counting the refusal as "up".
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { raw } from "./support/Client.ts"
import { Infra, InfraLive, startGateway } from "./support/Harness.ts"
import { startRealAgent } from "./support/RealAgent.ts"

layer(InfraLive, { excludeTestServices: true, timeout: "60 seconds" })("gateway readiness against the real agent", (it) => {
  it.scoped("ready with the gateway's ServiceAccount token; not ready when the agent refuses the token it has", () =>
    Effect.gen(function* () {
      const { kube } = yield* Infra
      const agent = yield* startRealAgent({ scripts: [] })
      const admitted = yield* startGateway({ agentUrl: Option.some(agent.url), agentToken: { token: Redacted.make(agent.restToken) } })
      const ready = yield* raw(`${admitted.healthUrl}/readyz`)
      assert.deepStrictEqual([ready.status, ready.json.checks.agent], [200, "ok"])

      const ungranted = kube.registerServiceAccountToken("kubemend-system", "kubemend-console")
      const refused = yield* startGateway({ agentUrl: Option.some(agent.url), agentToken: { token: Redacted.make(ungranted) } })
      const notReady = yield* raw(`${refused.healthUrl}/readyz`)
      assert.deepStrictEqual([notReady.status, notReady.json.checks.agent], [503, "failing"])
      const empty = yield* startGateway({ agentUrl: Option.some(agent.url), agentToken: { tokenFile: "/nonexistent/token" } })
      assert.strictEqual((yield* raw(`${empty.healthUrl}/readyz`)).status, 503)
    }))
})
