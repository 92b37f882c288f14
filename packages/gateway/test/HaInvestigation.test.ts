/**
 * An interactive investigation outlives the gateway replica it started on: with two replicas sharing a real Redis
 * (and one real agent), an MCP client whose next requests land on the other replica completes the investigation
 * it started on the first, and the InvestigationSession resource follows.
 */
import { assert, layer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Option } from "effect"
import type { KubeObject } from "@kubemend/core/K8s"
import { Infra, InfraLive, startGateway, token } from "./support/Harness.ts"
import { startRealAgent } from "./support/RealAgent.ts"
import { requireRedis, skipRedis, uniquePrefix, unreachable, valkeySettings } from "./support/Redis.ts"
import { namespace } from "./support/Seed.ts"

const rca = "The checkout pods are OOMKilled."

const phasesOf = (rr: string) =>
  Effect.map(Infra, ({ kube }) =>
    kube.list("kubemend.io/v1alpha1", "InvestigationSession", namespace)
      .filter((s: KubeObject) => (s.spec as any).remediationRequestRef.name === rr)
      .map((s: KubeObject) => (s.status as any)?.phase as string))

const title = "an interactive investigation across gateway replicas"
layer(InfraLive, { excludeTestServices: true })(skipRedis ? `${title} (skipped: ${unreachable})` : title, (it) => {
  it.scoped.skipIf(skipRedis)("started through replica A, completed through replica B in the same MCP session", () =>
    Effect.gen(function* () {
      yield* requireRedis
      const agent = yield* startRealAgent({ scripts: [{ name: "opening", turns: [{ text: rca }] }] })
      const valkey = Option.some(valkeySettings(yield* uniquePrefix("investigation")))
      const a = yield* startGateway({ agentUrl: Option.some(agent.url), valkey })
      const b = yield* startGateway({ agentUrl: Option.some(agent.url), valkey })
      const route = { to: a.url }
      const bearer = yield* token("sre")
      const client = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const c = new Client({ name: "ha-test", version: "1.0.0" })
          await c.connect(
            new StreamableHTTPClientTransport(new URL("http://balancer/mcp"), {
              requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
              fetch: (input, init) => fetch(String(input).replace("http://balancer", route.to), init)
            })
          )
          return c
        }),
        (c) => Effect.promise(() => c.close().catch(() => undefined))
      )
      const json = (name: string, args: Record<string, unknown>) =>
        Effect.promise(async () => {
          const r = await client.callTool({ name, arguments: args })
          const text = (r.content as Array<{ text: string }>).map((x) => x.text).join("")
          if (r.isError === true) throw new Error(`${name}: ${text}`)
          return JSON.parse(text)
        })
      const rr_id = "rr-checkout-crash"

      const started = yield* json("svc_investigate", { rr_id })
      assert.deepInclude(started, { status: "active", summary: rca })
      assert.deepStrictEqual(yield* phasesOf(rr_id), ["Active"])

      route.to = b.url
      const done = yield* json("svc_complete_no_action", { rr_id, reason: "transient" })
      assert.strictEqual(done.status, "completed_no_action")
      assert.deepStrictEqual(yield* phasesOf(rr_id), ["Completed"])
    }))
})
