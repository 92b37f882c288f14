/**
 * The status hub at the stream-builder level, on the in-memory cluster and the TestClock: first event, transitions,
 * `final`, keepalives, the closing notice, drain, slow readers and the shared watch.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, TestClock } from "effect"
import { Drain } from "@kubemend/core/Drain"
import type { KubeObject } from "@kubemend/core/K8s"
import { K8s } from "@kubemend/core/K8s"
import { K8sMemory } from "@kubemend/core/K8s/Memory"
import { StatusConfig, type StatusSettings } from "../src/Status/Config.ts"
import { type Sink, StatusHub } from "../src/Status/Hub.ts"

const namespace = "kubemend"

const rr = (name: string, status: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: "kubemend.io/v1alpha1",
  kind: "RemediationRequest",
  metadata: { name, namespace },
  spec: {
    signalName: "KubePodCrashLooping",
    signalFingerprint: "a".repeat(64),
    targetResource: { apiVersion: "apps/v1", kind: "Deployment", name: "web", namespace: "shop" }
  },
  status
})

const decoder = new TextDecoder()

/** `{event, data}` of each SSE block, `{comment}` of each comment line. */
const parseFrames = (text: string) =>
  text.split("\n\n").filter((b) => b !== "").map((block) => {
    if (block.startsWith(":")) return { comment: block.slice(1).trim() }
    const event = /^event: (.*)$/m.exec(block)?.[1]
    const data = /^data: (.*)$/m.exec(block)?.[1]
    return { event, data: data === undefined ? undefined : JSON.parse(data) }
  })

/** A recording sink; a `stalled` one never hands anything to its reader, so its pending bytes only grow. */
const recordingSink = (stalled = false) => {
  let text = ""
  let pending = 0
  let destroyed = false
  let connectionClosed = false
  const closed = Effect.runSync(Deferred.make<void>())
  const sink: Sink = {
    write: (bytes) => {
      if (stalled) pending += bytes.length
      text += decoder.decode(bytes)
    },
    end: (closeConnection) => {
      connectionClosed = closeConnection === true
      Effect.runSync(Deferred.succeed(closed, undefined))
    },
    pending: () => pending,
    destroy: () => {
      destroyed = true
      Effect.runSync(Deferred.succeed(closed, undefined))
    },
    onClose: (f) => void Effect.runFork(Effect.zipRight(Deferred.await(closed), Effect.sync(f)))
  }
  return {
    sink,
    frames: Effect.map(Deferred.await(closed), () => parseFrames(text)),
    destroyed: () => destroyed,
    /** Whether the stream was ended together with its connection. */
    connectionClosed: () => connectionClosed
  }
}

const subscribeRecording = (rrId: string, expiresAt = inAnHour(0)) =>
  Effect.gen(function* () {
    const hub = yield* StatusHub
    const recording = recordingSink()
    yield* hub.subscribe(rrId, { current: yield* current(rrId), expiresAt, sink: recording.sink, draining: yield* draining })
    return recording
  })

const subscribeAndCollect = (rrId: string, expiresAt = inAnHour(0)) =>
  Effect.flatMap(subscribeRecording(rrId, expiresAt), (recording) => Effect.fork(recording.frames))

const layer = (overrides: Partial<StatusSettings> = {}) =>
  StatusHub.Default.pipe(
    Layer.provideMerge(Layer.mergeAll(
      K8sMemory.layer({ namespace, seed: [rr("rr-1", { overallPhase: "Analyzing" }), rr("rr-2", { overallPhase: "Completed", outcome: "Remediated" })] }),
      StatusConfig.layer(overrides),
      Drain.Default
    ))
  )

const setPhase = (name: string, status: Record<string, unknown>) => Effect.flatMap(K8sMemory, (c) => c.seed([rr(name, status)]))

const draining = Effect.map(Drain, (d) => d.started)

const inAnHour = (now: number) => new Date(now + 3_600_000)

const current = (name: string) => Effect.flatMap(K8s, (k) => k.getCr("remediationrequests", name)).pipe(Effect.orDie)

/** Lets the watch and the hub's fibers run without moving the TestClock. */
const settle = Effect.repeatN(Effect.yieldNow(), 50)

describe("status hub", () => {
  it.scoped("first event is the current state, then one update per transition, final on terminal", () =>
    Effect.gen(function* () {
      const hub = yield* StatusHub
      const fiber = yield* subscribeAndCollect("rr-1")
      yield* settle
      yield* setPhase("rr-1", { overallPhase: "Analyzing", message: "same phase, no event" })
      yield* settle
      yield* setPhase("rr-1", { overallPhase: "Blocked", blockReason: "ResourceBusy", blockMessage: "busy", blockedUntil: "2026-01-01T00:00:00Z" })
      yield* settle
      yield* setPhase("rr-1", { overallPhase: "Completed", outcome: "Remediated" })
      const got = yield* Fiber.join(fiber)
      assert.deepStrictEqual(got.map((f) => [f.event, f.data?.params.phase, f.data?.params.final]), [
        ["status/update", "Analyzing", false],
        ["status/update", "Blocked", false],
        ["status/update", "Completed", true]
      ])
      const first = got[0]!.data
      assert.strictEqual(first.jsonrpc, "2.0")
      assert.strictEqual(first.method, "status/update")
      assert.strictEqual(first.params.rr_id, "rr-1")
      assert.match(first.params.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
      assert.deepStrictEqual(first.params.metadata, { namespace: "shop", target: "web", kind: "Deployment", alert_name: "KubePodCrashLooping" })
      assert.deepInclude(got[1]!.data.params.metadata, { block_reason: "ResourceBusy", block_message: "busy", blocked_until: "2026-01-01T00:00:00Z" })
      assert.deepInclude(got[2]!.data.params.metadata, { outcome: "Remediated" })
      assert.strictEqual(yield* hub.size, 0)
      assert.strictEqual(yield* hub.watched, 0)
    }).pipe(Effect.provide(layer())))

  it.scoped("a terminal RR answers one final event and ends; the connection stays for reuse", () =>
    Effect.gen(function* () {
      const recording = yield* subscribeRecording("rr-2")
      const got = yield* recording.frames
      assert.deepStrictEqual(got.map((f) => [f.data?.params.phase, f.data?.params.final]), [["Completed", true]])
      assert.isFalse(recording.connectionClosed())
    }).pipe(Effect.provide(layer())))

  it.scoped("keepalive comments every interval, then status/closing before the token expires", () =>
    Effect.gen(function* () {
      const fiber = yield* subscribeAndCollect("rr-1", new Date(40_000))
      yield* settle
      yield* TestClock.adjust("15 seconds")
      yield* TestClock.adjust("15 seconds")
      yield* TestClock.adjust("4 seconds")
      assert.isNull(fiber.unsafePoll())
      yield* TestClock.adjust("1 second")
      const got = yield* Fiber.join(fiber)
      assert.deepStrictEqual(got, [
        got[0]!,
        { comment: "keepalive" },
        { comment: "keepalive" },
        { event: "status/closing", data: { jsonrpc: "2.0", method: "status/closing", params: { reason: "token_expiry", reconnect: true } } }
      ])
    }).pipe(Effect.provide(layer())))

  it.scoped("drain sends status/closing to every open stream and closes its connection", () =>
    Effect.gen(function* () {
      const hub = yield* StatusHub
      const drain = yield* Drain
      const a = yield* subscribeRecording("rr-1")
      const b = yield* subscribeRecording("rr-1")
      yield* settle
      assert.strictEqual(yield* hub.size, 2)
      assert.strictEqual(yield* hub.watched, 1)
      yield* Deferred.succeed(drain.started, undefined)
      for (const r of [a, b]) {
        const got = yield* r.frames
        assert.deepStrictEqual(got.at(-1), {
          event: "status/closing",
          data: { jsonrpc: "2.0", method: "status/closing", params: { reason: "shutdown", reconnect: true } }
        })
        assert.isTrue(r.connectionClosed())
      }
    }).pipe(Effect.provide(layer())))

  it.scoped("a slow reader is dropped at its buffer bound; the others get every event", () =>
    Effect.gen(function* () {
      const hub = yield* StatusHub
      const slow = recordingSink(true)
      yield* hub.subscribe("rr-1", { current: yield* current("rr-1"), expiresAt: inAnHour(0), sink: slow.sink, draining: yield* draining })
      const fast = yield* subscribeAndCollect("rr-1")
      yield* settle
      const phases = ["Processing", "AwaitingApproval", "Approved", "Running", "Verifying", "Analyzing", "Processing", "Failed"]
      for (const phase of phases) {
        yield* setPhase("rr-1", { overallPhase: phase })
        yield* settle
      }
      const got = yield* Fiber.join(fast)
      assert.deepStrictEqual(got.map((f) => f.data?.params.phase), ["Analyzing", ...phases])
      assert.isTrue(slow.destroyed())
      assert.strictEqual(yield* hub.dropped, 1)
    }).pipe(Effect.provide(layer({ subscriberBufferBytes: 1024 }))))

  it.scoped("the watch resumes after the server closes it", () =>
    Effect.gen(function* () {
      const control = yield* K8sMemory
      const fiber = yield* subscribeAndCollect("rr-1")
      yield* settle
      assert.strictEqual(yield* control.openWatches, 1)
      yield* control.closeWatches
      yield* TestClock.adjust("1 second")
      yield* settle
      yield* setPhase("rr-1", { overallPhase: "Cancelled" })
      const got = yield* Fiber.join(fiber)
      assert.deepStrictEqual(got.map((f) => f.data?.params.phase), ["Analyzing", "Cancelled"])
    }).pipe(Effect.provide(layer())))
})
