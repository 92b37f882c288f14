/**
 * `POST /a2a/status` on a running gateway against the dev API server: headers, the first event, transitions pushed
 * into the cluster, the watch closed by the server and resumed, `final` on terminal, keepalive comments and the
 * closing notice of a short-lived token, and every JSON-RPC error code.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { Infra, InfraLive, startTestGateway, token } from "./A2aHarness.ts"
import { open, rr, subscribeBody, updates } from "./StatusSupport.ts"

layer(InfraLive, { excludeTestServices: true })("status stream over HTTP", (it) => {
  it.scoped("first event, pushed transitions, a resumed watch, final on terminal", () =>
    Effect.gen(function* () {
      const { kube } = yield* Infra
      kube.put(rr("rr-status-flow", { overallPhase: "Analyzing" }))
      const gw = yield* startTestGateway()
      const s = yield* open(gw.url, yield* token("observability"), subscribeBody("rr-status-flow"))
      assert.strictEqual(s.res.status, 200)
      assert.strictEqual(s.res.headers.get("content-type"), "text/event-stream")
      assert.strictEqual(s.res.headers.get("cache-control"), "no-cache")
      assert.strictEqual(s.res.headers.get("connection"), "keep-alive")
      assert.strictEqual(s.res.headers.get("x-accel-buffering"), "no")
      yield* Effect.promise(() => s.until((f) => updates(f).length === 1))
      kube.put(rr("rr-status-flow", { overallPhase: "Running", selectedWorkflowRef: { workflowId: "wf-restart" }, executingStartTime: "2026-01-01T00:00:00Z" }))
      yield* Effect.promise(() => s.until((f) => updates(f).length === 2))
      kube.faults.closeWatches()
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 100)))
      kube.put(rr("rr-status-flow", { overallPhase: "Verifying", verificationDeadline: "2026-01-01T01:00:00Z" }))
      yield* Effect.promise(() => s.until((f) => updates(f).length === 3))
      kube.put(rr("rr-status-flow", { overallPhase: "Completed", outcome: "Remediated" }))
      const frames = yield* Effect.promise(() => s.until((f) => updates(f).length === 4))
      yield* Effect.promise(() => s.reading)
      assert.isTrue(s.ended())
      const u = updates(frames)
      assert.deepStrictEqual(u.map((p) => [p.phase, p.final]), [["Analyzing", false], ["Running", false], ["Verifying", false], ["Completed", true]])
      assert.deepStrictEqual(u.map((p) => p.rr_id), Array(4).fill("rr-status-flow"))
      assert.deepInclude(u[1].metadata, {
        workflow_id: "wf-restart",
        started_at: "2026-01-01T00:00:00Z",
        namespace: "demo",
        kind: "Deployment",
        target: "checkout"
      })
      assert.deepInclude(u[2].metadata, { verification_deadline: "2026-01-01T01:00:00Z" })
      assert.deepInclude(u[3].metadata, { outcome: "Remediated" })
      for (const p of u) assert.match(p.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    }))

  it.scoped("keepalive comments, then status/closing before the token expires", () =>
    Effect.gen(function* () {
      const { kube, issuer } = yield* Infra
      kube.put(rr("rr-status-expiry", { overallPhase: "Analyzing" }))
      const gw = yield* startTestGateway({ status: { keepaliveInterval: Duration.millis(50) } })
      // `exp` has second precision: +8 puts the closing notice 2-3 s out, past the first keepalives however the
      // current second is split (with +6 it could fall due before the stream even opened).
      const shortLived = yield* issuer.persona("sre", { exp: Math.floor(Date.now() / 1000) + 8 })
      const s = yield* open(gw.url, shortLived, subscribeBody("rr-status-expiry"))
      const frames = yield* Effect.promise(() => s.until((f) => f.some((x) => "event" in x && x.event === "status/closing"), 8000))
      yield* Effect.promise(() => s.reading)
      assert.isTrue(frames.some((f) => "comment" in f && f.comment === "keepalive"))
      assert.deepStrictEqual(frames.at(-1), {
        event: "status/closing",
        data: { jsonrpc: "2.0", method: "status/closing", params: { reason: "token_expiry", reconnect: true } }
      })
    }))

  it.scoped("errors: 400 with a JSON-RPC error body for each code; 401 without a token", () =>
    Effect.gen(function* () {
      const gw = yield* startTestGateway()
      const bearer = yield* token("cicd")
      const post = (body: string, auth = true) =>
        Effect.promise(async () => {
          const res = await fetch(`${gw.url}/a2a/status`, {
            method: "POST",
            headers: { "content-type": "application/json", ...(auth ? { authorization: `Bearer ${bearer}` } : {}) },
            body
          })
          return { status: res.status, type: res.headers.get("content-type"), body: await res.json() as any }
        })
      const cases = [
        ["{not json", null, -32600, "invalid_request"],
        [subscribeBody("rr-checkout-crash", "status/unsubscribe"), 7, -32601, "method_not_found"],
        [subscribeBody(""), 7, -32602, "invalid_params"],
        [JSON.stringify({ jsonrpc: "2.0", id: "x", method: "status/subscribe", params: {} }), "x", -32602, "invalid_params"],
        [subscribeBody("rr-does-not-exist"), 7, -32001, "rr_not_found"]
      ] as const
      for (const [body, id, code, message] of cases) {
        const r = yield* post(body)
        assert.strictEqual(r.status, 400, body)
        assert.deepStrictEqual(r.body, { jsonrpc: "2.0", id, error: { code, message } })
      }
      const unauthenticated = yield* post(subscribeBody("rr-checkout-crash"), false)
      assert.strictEqual(unauthenticated.status, 401)
      assert.strictEqual(unauthenticated.type, "application/problem+json")
    }))
})
