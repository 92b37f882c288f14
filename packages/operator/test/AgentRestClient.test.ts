/**
 * The investigation agent's session REST contract, as the analysis controller relies on it, run against the real
 * agent (its HTTP server on the dev API server's TokenReview/RBAC, scripted model) and the lifecycle tests' fake
 * agent (FakeAgent.ts) alike: submit answers 202 with a session id; polling reaches `completed`; the result
 * echoes the incident and decodes as `IncidentResponse`; the result of a running session is 409; cancel ends a
 * running session once (then its result and a second cancel are 409); unknown sessions are 404 and bad bodies 400,
 * all problem+json.
 */
import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { assert, describe, layer } from "@effect/vitest"
import { AgentApi } from "@kubemend/core/AgentApi"
import { ScriptedLlm } from "@kubemend/devkit/ScriptedLlm"
import { apiPort } from "@kubemend/core/Servers"
import { Context, Duration, Effect, Layer } from "effect"
import { AgentOnDevKube, incident } from "../../agent/test/Harness.ts"
import { fakeAgentToken, startFakeAgent } from "./FakeAgent.ts"

/** An agent under contract: where it serves, and a switch that keeps the next sessions running until released. */
class Target extends Context.Tag("agentRestContract/Target")<Target, {
  readonly url: string
  readonly hold: (held: boolean) => Effect.Effect<void>
}>() {}

// Both agents admit the analysis controller's ServiceAccount token (bound to agent-client on the real one).
const controllerToken = fakeAgentToken

const rest = Effect.flatMap(
  Target,
  ({ url }) => HttpApiClient.make(AgentApi, { baseUrl: url, transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(controllerToken)) })
)

const raw = (path: string, init: RequestInit = {}) =>
  Effect.flatMap(Target, ({ url }) =>
    Effect.promise(async () => {
      const res = await fetch(`${url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${controllerToken}`, "content-type": "application/json", ...init.headers }
      })
      const text = await res.text()
      return { status: res.status, contentType: res.headers.get("content-type"), body: text === "" ? undefined : JSON.parse(text) as Record<string, unknown> }
    }))

const assertProblem = (r: { status: number; contentType: string | null; body: Record<string, unknown> | undefined }, status: number) => {
  assert.strictEqual(r.status, status, JSON.stringify(r.body))
  assert.strictEqual(r.contentType, "application/problem+json")
  assert.strictEqual(r.body?.["status"], status)
  assert.isString(r.body?.["title"])
  assert.isString(r.body?.["type"])
}

const unknownSession = "00000000-0000-4000-8000-000000000000"

const contract = (name: string, target: Layer.Layer<Target>) =>
  layer(Layer.merge(target, NodeHttpClient.layerUndici), { excludeTestServices: true, timeout: "60 seconds" })(`agent REST contract: ${name}`, (it) => {
    it.effect("submit -> poll until completed -> the result of that incident", () =>
      Effect.gen(function* () {
        const api = yield* rest
        const request = incident("Contract")
        const { session_id } = yield* api.incident.analyze({ payload: request as never })
        let status = yield* api.incident.sessionStatus({ path: { session_id } })
        for (let i = 0; i < 200 && status.status !== "completed" && status.status !== "failed"; i++) {
          yield* Effect.sleep(Duration.millis(25))
          status = yield* api.incident.sessionStatus({ path: { session_id } })
        }
        assert.strictEqual(status.status, "completed")
        const result = yield* api.incident.sessionResult({ path: { session_id } })
        assert.strictEqual(result.incident_id, request.incident_id)
        assert.isString(result.root_cause)
        assert.isNumber(result.confidence)
        assert.isBoolean(result.needs_human_review)
      }))

    it.effect("a running session: result 409; cancel once, then cancelled; a second cancel 409", () =>
      Effect.gen(function* () {
        const { hold } = yield* Target
        const api = yield* rest
        yield* hold(true)
        const { session_id } = yield* api.incident.analyze({ payload: incident("Held") as never })
        assertProblem(yield* raw(`/api/v1/incident/session/${session_id}/result`), 409)
        const cancelled = yield* api.incident.cancelSession({ path: { session_id } })
        assert.deepStrictEqual(cancelled, { session_id, status: "cancelled" })
        assert.strictEqual((yield* api.incident.sessionStatus({ path: { session_id } })).status, "cancelled")
        // A cancelled session has no result.
        assertProblem(yield* raw(`/api/v1/incident/session/${session_id}/result`), 409)
        assertProblem(yield* raw(`/api/v1/incident/session/${session_id}/cancel`, { method: "POST" }), 409)
      }).pipe(Effect.ensuring(Effect.flatMap(Target, ({ hold }) => hold(false)))))

    it.effect("unknown sessions: 404 problem on status, result and cancel", () =>
      Effect.gen(function* () {
        assertProblem(yield* raw(`/api/v1/incident/session/${unknownSession}`), 404)
        assertProblem(yield* raw(`/api/v1/incident/session/${unknownSession}/result`), 404)
        assertProblem(yield* raw(`/api/v1/incident/session/${unknownSession}/cancel`, { method: "POST" }), 404)
      }))

    it.effect("bad bodies: 400 problem", () =>
      Effect.gen(function* () {
        assertProblem(yield* raw("/api/v1/incident/analyze", { method: "POST", body: "{not json" }), 400)
        assertProblem(yield* raw("/api/v1/incident/analyze", { method: "POST", body: JSON.stringify({ incident_id: "x" }) }), 400)
        const { severity: _, ...noSeverity } = incident("NoSeverity")
        assertProblem(yield* raw("/api/v1/incident/analyze", { method: "POST", body: JSON.stringify(noSeverity) }), 400)
      }))
  })

const answer = { json: { root_cause: "The checkout container is OOMKilled", confidence: 0.8, actionable: false } }

/** The real agent; holding slows its model down far beyond the test, so a session stays `investigating`. */
const realAgent = Layer.effect(
  Target,
  Effect.gen(function* () {
    const port = yield* apiPort
    const llm = yield* ScriptedLlm
    return { url: `http://127.0.0.1:${port}`, hold: (held: boolean) => Effect.sync(() => llm.setLatency(held ? 30_000 : 0)) }
  })
).pipe(Layer.provide(AgentOnDevKube({ scripts: [{ name: "answer", turns: [answer] }] })), Layer.orDie)

/** The fake; holding scripts the next sessions to never complete. */
const fakeAgent = Layer.scoped(
  Target,
  Effect.map(startFakeAgent, (fake) => ({
    url: fake.url,
    hold: (held: boolean) => Effect.sync(() => void (fake.script = () => (held ? { polls: Infinity } : {})))
  }))
)

describe.sequential("agent REST contract", () => {
  contract("the real agent", realAgent)
  contract("the operator's fake agent", fakeAgent)
})
