/**
 * Shutting down a running gateway with status-stream subscribers connected over HTTP: every open stream gets
 * `status/closing` (reason `shutdown`, `reconnect: true`) and ends, a subscribe during the drain is refused with a
 * 503 problem, readiness reports draining, and the gateway is down within the drain time, also when an A2A stream
 * or a blocking A2A request is still open.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Fiber } from "effect"
import type { Script } from "@kubemend/devkit/ScriptedLlm"
import { Infra, InfraLive, parseSse, startTestGateway, type TestGateway, token } from "./A2aHarness.ts"
import { open, rr, subscribeBody, updates } from "./StatusSupport.ts"

/** svc_watch waits for a terminal phase, so a task running it stays busy for as long as the test wants. */
const scripts: ReadonlyArray<Script> = [
  {
    name: "watch",
    match: "watch checkout",
    turns: [
      { toolCalls: [{ name: "svc_watch", arguments: { rr_id: "rr-checkout-crash" } }] },
      { text: "It finished." }
    ]
  }
]

const drainTimeout = Duration.seconds(3)
/** Listener close, service finalizers and a loaded machine; a gateway that waits for its streams takes minutes. */
const slack = 3000

const closingNotice = {
  event: "status/closing",
  data: { jsonrpc: "2.0", method: "status/closing", params: { reason: "shutdown", reconnect: true } }
}

const a2aMessage = (method: "message/send" | "message/stream", text: string) => ({
  jsonrpc: "2.0",
  id: 1,
  method,
  params: { message: { kind: "message", messageId: crypto.randomUUID(), role: "user", parts: [{ kind: "text", text }] } }
})

/** Posts an A2A request and reads the whole answer; a connection the gateway cuts reads as `cut`. */
const a2a = (gw: TestGateway, bearer: string, body: unknown) =>
  fetch(`${gw.url}/a2a/invoke`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${bearer}` },
    body: JSON.stringify(body)
  }).then(async (res) => ({ status: res.status, text: await res.text() }), () => "cut" as const)

/** Waits (bounded) until the scripted model has been asked about `text`: the task's loop is running. */
const modelAsked = (gw: TestGateway, text: string) =>
  Effect.promise(async () => {
    const deadline = Date.now() + 10_000
    while (!gw.llm.requests.some((r) => JSON.stringify(r.body?.messages ?? []).includes(text))) {
      if (Date.now() > deadline) throw new Error(`the model was never asked about ${text}`)
      await new Promise((r) => setTimeout(r, 10))
    }
  })

/** Starts the shutdown in the background; the returned effect waits for it and gives its wall time. */
const shutdownTimed = (gw: TestGateway) =>
  Effect.gen(function* () {
    const started = Date.now()
    const fiber = yield* Effect.fork(gw.shutdown)
    return Effect.map(Fiber.join(fiber), () => Date.now() - started)
  })

layer(InfraLive, { excludeTestServices: true })("status stream drain over HTTP", (it) => {
  it.scoped("open streams get status/closing and end; a subscribe while draining is a 503 problem; down within the drain time", () =>
    Effect.gen(function* () {
      const { kube } = yield* Infra
      kube.put(rr("rr-drain", { overallPhase: "Analyzing" }))
      kube.put(rr("rr-drain-other", { overallPhase: "Blocked", blockReason: "ResourceBusy" }))
      const gw = yield* startTestGateway({ scripts, drainTimeout })
      const sre = yield* token("sre")
      const streams = [
        yield* open(gw.url, yield* token("observability"), subscribeBody("rr-drain")),
        yield* open(gw.url, sre, subscribeBody("rr-drain")),
        yield* open(gw.url, sre, subscribeBody("rr-drain-other"))
      ]
      for (const s of streams) yield* Effect.promise(() => s.until((f) => updates(f).length === 1))
      // A blocking A2A request in flight keeps the drain waiting, so the gateway is seen while it drains.
      const held = a2a(gw, sre, a2aMessage("message/send", "watch checkout until it ends"))
      yield* modelAsked(gw, "watch checkout")

      const shutdown = yield* shutdownTimed(gw)
      for (const s of streams) {
        const frames = yield* Effect.promise(() => s.until((f) => f.some((x) => "event" in x && x.event === "status/closing")))
        yield* Effect.promise(() => s.reading)
        assert.isTrue(s.ended())
        assert.deepStrictEqual(frames.at(-1), closingNotice)
        assert.strictEqual(updates(frames).length, 1)
      }

      const refused = yield* Effect.promise(async () => {
        const res = await fetch(`${gw.url}/a2a/status`, {
          method: "POST",
          headers: { authorization: `Bearer ${sre}`, "content-type": "application/json" },
          body: subscribeBody("rr-drain")
        })
        return { status: res.status, type: res.headers.get("content-type"), body: (await res.json()) as Record<string, unknown> }
      })
      assert.strictEqual(refused.status, 503)
      assert.strictEqual(refused.type, "application/problem+json")
      assert.deepInclude(refused.body, { status: 503, title: "Service Unavailable" })
      const ready = yield* Effect.promise(() => fetch(`${gw.healthUrl}/readyz`).then((r) => r.status))
      assert.strictEqual(ready, 503)

      const elapsed = yield* shutdown
      assert.isBelow(elapsed, Duration.toMillis(drainTimeout) + slack)
      // The task behind the blocking request was stopped within the drain time and answered as failed.
      const answer = yield* Effect.promise(() => held)
      assert.notStrictEqual(answer, "cut")
      const task = answer === "cut" ? undefined : JSON.parse(answer.text).result
      assert.strictEqual(task.status.state, "failed")
      assert.match(task.status.message.parts[0].text, /gateway is shutting down/)
    }), { timeout: 60_000 })

  it.scoped("an open A2A stream does not hold the shutdown past the drain time", () =>
    Effect.gen(function* () {
      const { kube } = yield* Infra
      kube.put(rr("rr-drain-a2a", { overallPhase: "Analyzing" }))
      const gw = yield* startTestGateway({ scripts, drainTimeout })
      const sre = yield* token("sre")
      const status = yield* open(gw.url, sre, subscribeBody("rr-drain-a2a"))
      yield* Effect.promise(() => status.until((f) => updates(f).length === 1))
      const streamed = a2a(gw, sre, a2aMessage("message/stream", "watch checkout as a stream"))
      yield* modelAsked(gw, "watch checkout as a stream")

      const shutdown = yield* shutdownTimed(gw)
      const elapsed = yield* shutdown
      assert.isBelow(elapsed, Duration.toMillis(drainTimeout) + slack)
      yield* Effect.promise(() => status.reading)
      assert.deepStrictEqual(status.frames().at(-1), closingNotice)
      // The task was stopped within the drain time: its stream ends with the final state instead of being cut.
      const answer = yield* Effect.promise(() => streamed)
      assert.notStrictEqual(answer, "cut")
      const events = answer === "cut" ? [] : parseSse(answer.text).flatMap((f) => ("data" in f && f.data !== undefined ? [f.data.result] : []))
      const last = events.at(-1)
      assert.deepInclude(last, { kind: "status-update", final: true })
      assert.strictEqual(last.status.state, "failed")
      assert.match(last.status.message.parts[0].text, /gateway is shutting down/)
    }), { timeout: 60_000 })

  it.scoped("with only status streams open, the gateway is down well within the drain time", () =>
    Effect.gen(function* () {
      const { kube } = yield* Infra
      kube.put(rr("rr-drain-only", { overallPhase: "Analyzing" }))
      const gw = yield* startTestGateway({ drainTimeout })
      const sre = yield* token("sre")
      const streams = [
        yield* open(gw.url, sre, subscribeBody("rr-drain-only")),
        yield* open(gw.url, yield* token("cicd"), subscribeBody("rr-drain-only"))
      ]
      for (const s of streams) yield* Effect.promise(() => s.until((f) => updates(f).length === 1))
      const elapsed = yield* (yield* shutdownTimed(gw))
      // Nothing is in flight, so nothing is waited for: the closed streams' connections must not linger either.
      assert.isBelow(elapsed, Duration.toMillis(drainTimeout))
      for (const s of streams) {
        yield* Effect.promise(() => s.reading)
        assert.deepStrictEqual(s.frames().at(-1), closingNotice)
      }
    }), { timeout: 60_000 })
})
