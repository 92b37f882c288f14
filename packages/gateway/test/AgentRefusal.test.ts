/**
 * A caller the gateway admits but the agent does not (a ServiceAccount bound to the console and the sre tools, but
 * without `agent-client`; its token is what the gateway forwards): each of its investigations is a tool error saying
 * so, not an outage; it does not open the agent circuit breaker every user shares, and a person's call still works.
 */
import { assert, layer } from "@effect/vitest"
import { consoleRoleName, personaRoleName } from "@kubemend/core/Personas"
import { Effect, Option } from "effect"
import { call, connect } from "./support/Client.ts"
import { Infra, InfraLive, startGateway, token } from "./support/Harness.ts"
import { startRealAgent } from "./support/RealAgent.ts"

const binding = (role: string) => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRoleBinding",
  metadata: { name: `bot-${role}` },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
  subjects: [{ kind: "ServiceAccount", name: "bot", namespace: "automation" }]
})

layer(InfraLive, { excludeTestServices: true, timeout: "60 seconds" })("a caller the agent refuses", (it) => {
  it.scoped("gets a permission error per call and never trips the agent breaker", () =>
    Effect.gen(function* () {
      const { kube } = yield* Infra
      const bot = kube.registerServiceAccountToken("automation", "bot")
      kube.seed([binding(consoleRoleName), binding(personaRoleName("sre"))])
      const agent = yield* startRealAgent({ scripts: [] })
      const gw = yield* startGateway({ agentUrl: Option.some(agent.url), breaker: { failureThreshold: 2 } })
      const c = yield* connect(gw.url, bot)
      for (let i = 0; i < 4; i++) {
        const r = yield* call(c, "svc_investigate", { rr_id: "rr-checkout-crash" })
        assert.isTrue(r.isError)
        assert.match(r.text, /does not admit your identity \(HTTP 403\)/)
      }
      assert.isFalse((yield* gw.audit.entries).some((e) => e.type === "circuitbreaker.trip"))
      const sre = yield* connect(gw.url, yield* token("sre"))
      const status = yield* call(sre, "svc_investigate", { rr_id: "rr-checkout-crash" })
      assert.notMatch(status.text, /circuit open|unavailable/)
    }))
})
