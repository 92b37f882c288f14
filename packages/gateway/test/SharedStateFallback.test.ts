/**
 * Valkey unreachable: the shared state keeps answering from the replica's own memory (per-replica limits), reports
 * the state (`degraded`, the `af_gateway_shared_state_degraded` gauge), stops waiting on Valkey, and goes back to it
 * by itself, telling watchers of announcements that some may have been lost. The switching logic under TestClock with a store that fails on demand; then a real Redis behind a
 * proxy the test cuts and restores, and a Valkey address where nothing listens.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Option, Ref, Schedule, Stream, TestClock } from "effect"
import { Metrics } from "@kubemend/core/Metrics"
import { Sar } from "@kubemend/core/Sar"
import { perMinute } from "../src/Limits/Buckets.ts"
import { GatewayMetrics } from "../src/GatewayMetrics.ts"
import { memoryStore } from "../src/Shared/Memory.ts"
import { resilient } from "../src/Shared/Resilient.ts"
import { SharedState } from "../src/SharedState.ts"
import type { Notice } from "../src/Shared/Store.ts"
import { startProxy } from "./support/Proxy.ts"
import { requireRedis, skipRedis, uniquePrefix, unreachable, valkeySettings } from "./support/Redis.ts"

class Down {
  readonly command = "GET"
  readonly cause = new Error("connection refused")
}

/** A memory store that fails every call while `up` is false, counting the calls that reached it. */
const flaky = Effect.gen(function* () {
  const up = yield* Ref.make(true)
  const calls = yield* Ref.make(0)
  const inner = yield* memoryStore
  const gate = <A>(e: Effect.Effect<A>) =>
    Effect.zipRight(Ref.update(calls, (n) => n + 1), Effect.flatMap(Ref.get(up), (ok) => (ok ? e : Effect.fail(new Down()))))
  return {
    up,
    calls,
    store: {
      get: (k: string) => gate(inner.get(k)),
      put: (k: string, v: string, ttl: Duration.Duration) => gate(inner.put(k, v, ttl)),
      remove: (k: string) => gate(inner.remove(k)),
      acquireSlot: (...a: Parameters<typeof inner.acquireSlot>) => gate(inner.acquireSlot(...a)),
      touchSlot: (...a: Parameters<typeof inner.touchSlot>) => gate(inner.touchSlot(...a)),
      releaseSlot: (...a: Parameters<typeof inner.releaseSlot>) => gate(inner.releaseSlot(...a)),
      slotsInUse: gate(inner.slotsInUse),
      take: (...a: Parameters<typeof inner.take>) => gate(inner.take(...a)),
      takeAll: (...a: Parameters<typeof inner.takeAll>) => gate(inner.takeAll(...a)),
      giveBack: (...a: Parameters<typeof inner.giveBack>) => gate(inner.giveBack(...a)),
      announce: (topic: string, message: string) => gate(inner.announce(topic, message)),
      notices: inner.notices,
      ping: gate(inner.ping)
    }
  }
})

const metricsLayer = GatewayMetrics.Default.pipe(Layer.provideMerge(Layer.mergeAll(Sar.layerAllowAll, Metrics.Default)))

const gauge = Effect.flatMap(Metrics, (m) => m.render(undefined)).pipe(
  Effect.map(({ body }) => /^af_gateway_shared_state_degraded (\d)/m.exec(body)?.[1])
)

describe("shared state fallback", () => {
  it.scoped("falls back on the first failure, stops calling Valkey, and recovers on the next ping that succeeds", () =>
    Effect.gen(function* () {
      const primary = yield* flaky
      const changes: Array<boolean> = []
      const shared = yield* resilient(primary.store, yield* memoryStore, {
        recoveryInterval: Duration.seconds(5),
        address: "valkey:6379",
        onChange: (d) => Effect.sync(() => void changes.push(d))
      })
      const spec = perMinute(2)
      assert.isTrue((yield* shared.take("k", spec)).ok)
      yield* Ref.set(primary.up, false)
      // Valkey down: the replica's own bucket answers (a fresh one, so per-replica counting starts over).
      assert.isTrue((yield* shared.take("k", spec)).ok)
      assert.match(Option.getOrThrow(yield* shared.degraded), /Valkey at valkey:6379 unreachable \(GET: connection refused\)/)
      const reached = yield* Ref.get(primary.calls)
      assert.isTrue((yield* shared.take("k", spec)).ok)
      assert.isFalse((yield* shared.take("k", spec)).ok)
      assert.strictEqual(yield* Ref.get(primary.calls), reached, "no call waits on Valkey while degraded")

      yield* TestClock.adjust(Duration.seconds(5))
      assert.isTrue(Option.isSome(yield* shared.degraded), "still down at the first retry")
      yield* Ref.set(primary.up, true)
      yield* TestClock.adjust(Duration.seconds(5))
      assert.deepStrictEqual(yield* shared.degraded, Option.none())
      // Valkey's own bucket again: one token left there from before the outage.
      assert.isTrue((yield* shared.take("k", spec)).ok)
      assert.isFalse((yield* shared.take("k", spec)).ok)
      assert.deepStrictEqual(changes, [false, true, false])
    }))

  it.scoped("a Valkey address where nothing listens: every call answered, degraded reported by the gauge", () =>
    Effect.gen(function* () {
      const shared = Context.get(yield* Layer.build(SharedState.layerValkey(valkeySettings("unused", { port: 1 }))), SharedState)
      assert.strictEqual(yield* shared.acquireSlot("s", "alice", { total: 1, perUser: 1 }, Duration.minutes(1)), "admitted")
      assert.strictEqual(yield* shared.acquireSlot("t", "bob", { total: 1, perUser: 1 }, Duration.minutes(1)), "total-full")
      assert.match(Option.getOrThrow(yield* shared.degraded), /unreachable/)
      assert.strictEqual(yield* gauge, "1")
    }).pipe(Effect.provide(metricsLayer)))
})

describe.skipIf(skipRedis)(skipRedis ? `shared state on a Redis that goes away (skipped: ${unreachable})` : "shared state on a Redis that goes away", () => {
  it.live("degrades when the connection is cut and recovers by itself once Redis is reachable again; watchers hear of the gap", () =>
    Effect.gen(function* () {
      yield* requireRedis
      const direct = valkeySettings(yield* uniquePrefix("fallback"), { recoveryInterval: Duration.millis(50) })
      const proxy = yield* startProxy(direct)
      const settings = { ...direct, host: "127.0.0.1", port: proxy.port }
      const shared = Context.get(yield* Layer.build(SharedState.layerValkey(settings)), SharedState)
      const heard: Array<Notice["_tag"]> = []
      yield* shared.notices("ends").pipe(Stream.runForEach((n) => Effect.sync(() => void heard.push(n._tag))), Effect.forkScoped)
      yield* shared.put("r", "before", Duration.minutes(1))
      yield* proxy.cut
      assert.deepStrictEqual(yield* shared.get("r"), Option.none(), "the replica's own memory never had it")
      assert.isTrue(Option.isSome(yield* shared.degraded))
      yield* proxy.restore
      // Eventually (ioredis reconnects with backoff, then the next ping succeeds): no timing is asserted.
      yield* shared.degraded.pipe(
        Effect.repeat({ schedule: Schedule.spaced(Duration.millis(50)), until: Option.isNone }),
        Effect.timeoutFail({ duration: Duration.seconds(15), onTimeout: () => "never recovered" })
      )
      assert.deepStrictEqual(yield* shared.get("r"), Option.some("before"))
      // Announcements made while the connection was cut are lost: the watcher is told so once it is back.
      yield* Effect.sync(() => heard.includes("Missed")).pipe(
        Effect.repeat({ schedule: Schedule.spaced(Duration.millis(50)), until: (told) => told }),
        Effect.timeoutFail({ duration: Duration.seconds(15), onTimeout: () => `never told of the gap: ${heard.join(", ")}` })
      )
    }).pipe(Effect.provide(metricsLayer), Effect.scoped))
})
