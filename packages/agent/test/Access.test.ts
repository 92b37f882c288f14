/**
 * Hostile callers of the agent's REST API, against the dev API server's real TokenReview and RBAC: no token,
 * a ServiceAccount of another namespace, a person's JWT (expired, alg none, another issuer's, or valid), each refused with 401/403
 * problem+json and an `agent.access.denied` audit event; the analysis controller's ServiceAccount passes, and the
 * identity headers it sends are ignored and audited (`agent.identity.ignored`).
 */
import { assert, layer } from "@effect/vitest"
import { make as makeIssuer } from "@kubemend/devkit/Issuer"
import { DevKube } from "@kubemend/devkit/kube/DevKube"
import { unruledEndpoints } from "@kubemend/core/EndpointAccess"
import { AgentApi } from "@kubemend/core/AgentApi"
import { Effect } from "effect"
import { AgentOnDevKube, auditEvents, fetchRaw, incident } from "./Harness.ts"

const post = (token: string | null, body: unknown = incident("Hostile")) => ({
  method: "POST",
  headers: { "content-type": "application/json", authorization: token === null ? "" : `Bearer ${token}` },
  body: JSON.stringify(body)
})

const denied = (status: number) =>
  Effect.map(auditEvents, (events) => events.filter((e) => e.event_type === "agent.access.denied" && e.error_code === String(status)))

layer(AgentOnDevKube({ scripts: [] }), { excludeTestServices: true, timeout: "60 seconds" })("agent REST access", (it) => {
  it.effect("declares one rule for every endpoint", () => Effect.sync(() => assert.deepStrictEqual(unruledEndpoints(AgentApi), [])))

  it.effect("no token and tokens the cluster does not vouch for: 401 problem, audited", () =>
    Effect.scoped(Effect.gen(function* () {
      const issuer = yield* makeIssuer({})
      const foreign = yield* makeIssuer({})
      const tokens = [
        null,
        "garbage",
        yield* issuer.bad.expired,
        yield* issuer.bad.algNone(),
        yield* issuer.persona("sre"),
        yield* issuer.bad.wrongIssuer,
        yield* foreign.persona("sre")
      ]
      for (const token of tokens) {
        const r = yield* fetchRaw("/api/v1/incident/analyze", post(token))
        assert.strictEqual(r.status, 401)
        assert.strictEqual(r.headers.get("content-type"), "application/problem+json")
      }
      const events = yield* denied(401)
      assert.isAtLeast(events.length, tokens.length)
      assert.strictEqual(events[0]!.event_category, "security")
      assert.strictEqual(events[0]!.resource_id, "POST /api/v1/incident/analyze")
    })))

  it.effect("a ServiceAccount without agent-client: 403 on every endpoint, audited with its name", () =>
    Effect.gen(function* () {
      const kube = yield* DevKube
      const foreign = kube.registerServiceAccountToken("intruders", "scraper")
      const headers = { authorization: `Bearer ${foreign}` }
      const answers = [
        yield* fetchRaw("/api/v1/incident/analyze", post(foreign)),
        yield* fetchRaw("/api/v1/incident/session/s-1", { headers }),
        yield* fetchRaw("/api/v1/incident/session/s-1/result", { headers }),
        yield* fetchRaw("/api/v1/incident/session/s-1/cancel", { method: "POST", headers }),
        yield* fetchRaw("/config", { headers })
      ]
      assert.deepStrictEqual(answers.map((r) => r.status), [403, 403, 403, 403, 403])
      const body = (yield* Effect.promise(() => answers[0]!.json())) as { detail: string }
      assert.match(body.detail, /create services\/kubemend-agent/)
      const events = (yield* denied(403)).filter((e) => e.actor_id === "system:serviceaccount:intruders:scraper")
      assert.strictEqual(events.length, 5)
    }))

  it.effect("the analysis controller's ServiceAccount passes; identity headers it sends are ignored and audited", () =>
    Effect.gen(function* () {
      const r = yield* fetchRaw("/api/v1/incident/session/unknown", { headers: { "x-kubemend-user": "admin-user", "x-kubemend-groups": "system:masters" } })
      assert.strictEqual(r.status, 404)
      const ignored = (yield* auditEvents).filter((e) => e.event_type === "agent.identity.ignored")
      assert.deepStrictEqual(ignored.map((e) => [e.actor_id, e.resource_id, e.event_data["claim"], e.event_data["claimed"]]), [
        ["system:serviceaccount:kubemend-operator:kubemend-operator", "GET /api/v1/incident/session/unknown", "x-kubemend-user", "admin-user"],
        ["system:serviceaccount:kubemend-operator:kubemend-operator", "GET /api/v1/incident/session/unknown", "x-kubemend-groups", "system:masters"]
      ])
    }))
})
