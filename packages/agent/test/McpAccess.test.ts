/**
 * Hostile callers of the agent's interactive MCP (`/api/v1/mcp`, every method), against the dev issuer (the agent's
 * `interactive.jwtProviders`) and the dev API server's real TokenReview and RBAC: no token, garbage, a forged,
 * expired, `alg: none` or foreign-issuer JWT get 401 problem+json; a ServiceAccount that is not the platform's, and a
 * person without the console grant, get 403; each refusal is an `agent.access.denied` audit event. A verified caller's spoofed `X-Kubemend-User` and
 * `acting_user` are ignored and audited; the gateway's ServiceAccount passes.
 */
import { assert, layer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ConfigProvider, Context, Effect, Layer } from "effect"
import { DevIssuer, make as makeIssuer } from "@kubemend/devkit/Issuer"
import { DevKube } from "@kubemend/devkit/kube/DevKube"
import { devkitRbacSpec, renderRbac } from "@kubemend/core/Personas"
import { type Result, text } from "./McpClient.ts"
import { AgentOnDevKube, auditEvents, baseUrl, fetchRaw, gatewayToken } from "./Harness.ts"

// The personas' grants as the operator renders them: `no-console` has tool grants but not the console gate.
const rbac = renderRbac(devkitRbacSpec({ apiGroup: "kubemend.io", toolPrefix: "svc" }))

const Agent = Layer.unwrapEffect(
  Effect.map(
    DevIssuer,
    (issuer) =>
      AgentOnDevKube({ scripts: [] }).pipe(
        Layer.tap((ctx) => Effect.sync(() => Context.get(ctx, DevKube).seed([...rbac.clusterRoles, ...rbac.clusterRoleBindings]))),
        Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson({
          interactive: { jwtProviders: [{ name: "dev", issuerURL: issuer.url, audiences: [issuer.audience] }], allowInsecureIssuers: true }
        })))
      )
  )
).pipe(Layer.provideMerge(DevIssuer.layer()))

const methods = ["POST", "GET", "DELETE"] as const

/** One request of `method` to the MCP with `token` (none when null), claiming to be someone else in every way. */
const mcp = (method: string, token: string | null) =>
  fetchRaw("/api/v1/mcp", {
    method,
    headers: {
      authorization: token === null ? "" : `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "x-kubemend-user": "admin-user",
      "x-kubemend-groups": "system:masters"
    },
    ...(method === "POST"
      ? {
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "svc_investigate", arguments: { rr_id: "rr-x", action: "start", acting_user: "admin-user" } }
        })
      }
      : {})
  })

const denied = (status: number) =>
  Effect.map(auditEvents, (events) => events.filter((e) => e.event_type === "agent.access.denied" && e.error_code === String(status)))

layer(Agent, { excludeTestServices: true, timeout: "60 seconds" })("agent MCP access", (it) => {
  it.effect("no token and tokens neither a configured issuer nor the cluster vouches for: 401 problem on every method, audited", () =>
    Effect.scoped(Effect.gen(function* () {
      const issuer = yield* DevIssuer
      const foreign = yield* makeIssuer({})
      const good = yield* issuer.persona("sre")
      const tokens = [
        null,
        "garbage",
        `${good.slice(0, -4)}AAAA`,
        yield* issuer.bad.expired,
        yield* issuer.bad.algNone(),
        yield* issuer.bad.wrongIssuer,
        yield* foreign.persona("sre")
      ]
      const before = (yield* denied(401)).length
      for (const method of methods) {
        for (const token of tokens) {
          const r = yield* mcp(method, token)
          assert.deepStrictEqual([r.status, r.headers.get("content-type")], [401, "application/problem+json"], `${method} ${token?.slice(0, 12)}`)
          const body = (yield* Effect.promise(() => r.json())) as { status: number; instance: string }
          assert.deepStrictEqual([body.status, body.instance], [401, "/api/v1/mcp"])
        }
      }
      const events = (yield* denied(401)).slice(before)
      assert.strictEqual(events.length, methods.length * tokens.length)
      assert.deepStrictEqual([...new Set(events.map((e) => e.resource_id))].sort(), methods.map((m) => `${m} /api/v1/mcp`).sort())
      assert.isTrue(events.every((e) => e.event_category === "security" && e.actor_id === "anonymous"))
    })))

  it.effect("ServiceAccounts that are not the platform's (another namespace, even under the gateway's name) and a person without the console grant: 403 on every method, audited with their name", () =>
    Effect.gen(function* () {
      const kube = yield* DevKube
      const issuer = yield* DevIssuer
      const strangers = {
        "system:serviceaccount:intruders:scraper": kube.registerServiceAccountToken("intruders", "scraper"),
        "system:serviceaccount:other-platform:kubemend-gateway": kube.registerServiceAccountToken("other-platform", "kubemend-gateway"),
        "no-console-user": yield* issuer.persona("no-console")
      }
      for (const [name, token] of Object.entries(strangers)) {
        for (const method of methods) {
          const r = yield* mcp(method, token)
          assert.deepStrictEqual([r.status, r.headers.get("content-type")], [403, "application/problem+json"], `${name} ${method}`)
          assert.match(((yield* Effect.promise(() => r.json())) as { detail: string }).detail, /create services\/kubemend-agent|use kubemend.io\/console/)
        }
        const events = (yield* denied(403)).filter((e) => e.actor_id === name)
        assert.strictEqual(events.length, methods.length)
      }
    }))

  it.scoped("a verified user's spoofed X-Kubemend-User and acting_user are ignored and audited; the gateway's ServiceAccount passes", () =>
    Effect.gen(function* () {
      const issuer = yield* DevIssuer
      const url = yield* baseUrl
      const open = (headers: Record<string, string>) =>
        Effect.acquireRelease(
          Effect.promise(async () => {
            const c = new Client({ name: "hostile", version: "1" })
            await c.connect(new StreamableHTTPClientTransport(new URL(`${url}/api/v1/mcp`), { requestInit: { headers } }))
            return c
          }),
          (c) => Effect.promise(() => c.close())
        )
      const sre = yield* open({ authorization: `Bearer ${yield* issuer.persona("sre")}`, "x-kubemend-user": "admin-user" })
      const r = (yield* Effect.promise(() =>
        sre.callTool({ name: "svc_investigate", arguments: { rr_id: "rr-none", action: "reconnect", acting_user: "admin-user" } })
      )) as Result
      assert.isTrue(r.isError)
      assert.notInclude(text(r), "admin-user")
      const ignored = (yield* auditEvents).filter((e) =>
        e.event_type === "agent.identity.ignored" && e.actor_id === "sre-user"
      )
      // The header is audited on each HTTP request of the session, the argument once.
      assert.deepStrictEqual([...new Set(ignored.map((e) => `${e.event_data["claim"]}=${e.event_data["claimed"]}`))].sort(), [
        "acting_user=admin-user",
        "x-kubemend-user=admin-user"
      ])

      const gateway = yield* open({ authorization: `Bearer ${gatewayToken}`, "x-kubemend-user": "sre-user" })
      const tools = yield* Effect.promise(() => gateway.listTools())
      assert.deepStrictEqual(tools.tools.map((t) => t.name).sort(), ["svc_complete_no_action", "svc_investigate", "svc_select_workflow"])
    }))
})
