/**
 * One contract for both shared-state layers (memory, and Valkey on a real Redis, support/Redis.ts), under
 * TestClock: records expire, session slots keep the per-user and total caps and expire unless renewed, token
 * buckets refill. Then what only Valkey gives: two replicas (two connections, one key prefix) see one state, and
 * racing replicas never overshoot a cap.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Duration, Effect, Fiber, Layer, Option, Schedule, Stream, TestClock } from "effect"
import { Metrics } from "@kubemend/core/Metrics"
import { Sar } from "@kubemend/core/Sar"
import { perMinute } from "../src/Limits/Buckets.ts"
import { GatewayMetrics } from "../src/GatewayMetrics.ts"
import { SharedState } from "../src/SharedState.ts"
import type { SharedStateService } from "../src/Shared/Store.ts"
import { requireRedis, skipRedis, uniquePrefix, unreachable, valkeySettings } from "./support/Redis.ts"

const metrics = GatewayMetrics.Default.pipe(Layer.provide(Layer.mergeAll(Sar.layerAllowAll, Metrics.Default)))

/** A Valkey-backed replica under `prefix`. */
const valkeyReplica = (prefix: string) => SharedState.layerValkey(valkeySettings(prefix)).pipe(Layer.provide(metrics))

const layers = {
  memory: SharedState.layerMemory,
  valkey: Layer.unwrapScoped(Effect.gen(function* () {
    yield* requireRedis
    return valkeyReplica(yield* uniquePrefix("contract"))
  }))
} as const

/**
 * What `watcher` hears on `topic`, from the moment `announcer`'s probes on it reach it (a watch starts in the
 * background; with Valkey its subscription takes a round trip), probes left out.
 */
const listen = (watcher: SharedStateService, announcer: SharedStateService, topic: string) =>
  Effect.gen(function* () {
    const heard: Array<string> = []
    const fiber = yield* watcher.notices(topic).pipe(
      Stream.runForEach((n) => Effect.sync(() => void heard.push(n._tag === "Announced" ? n.message : "(missed)"))),
      Effect.forkScoped
    )
    yield* announcer.announce(topic, "probe").pipe(
      Effect.repeat({ schedule: Schedule.spaced(Duration.millis(10)), while: () => heard.length === 0 }),
      Effect.timeoutFail({ duration: Duration.seconds(5), onTimeout: () => "the watch never started" })
    )
    /** Waits for `last`, then answers what was heard besides the probes. */
    const until = (last: string) =>
      Effect.sync(() => heard.includes(last)).pipe(
        Effect.repeat({ schedule: Schedule.spaced(Duration.millis(5)), until: (arrived) => arrived }),
        Effect.timeoutFail({ duration: Duration.seconds(5), onTimeout: () => `${last} never arrived: ${heard.join(", ")}` }),
        Effect.map(() => heard.filter((m) => m !== "probe"))
      )
    return { until, fiber }
  })

const limits = { total: 3, perUser: 2 }
const ttl = Duration.minutes(5)

for (const [name, layer] of Object.entries(layers)) {
  const skip = name === "valkey" && skipRedis
  describe.skipIf(skip)(skip ? `shared state: ${name} (skipped: ${unreachable})` : `shared state: ${name}`, () => {
    const run = <A, E>(effect: Effect.Effect<A, E, SharedState>) => effect.pipe(Effect.provide(layer), Effect.scoped)

    it.effect("records answer until their time to live is over, and not after removal", () =>
      run(Effect.gen(function* () {
        const s = yield* SharedState
        yield* s.put("a", "one", Duration.seconds(30))
        yield* s.put("b", "two|with|bars", Duration.minutes(1))
        assert.deepStrictEqual(yield* s.get("a"), Option.some("one"))
        assert.deepStrictEqual(yield* s.get("b"), Option.some("two|with|bars"))
        yield* TestClock.adjust(Duration.seconds(30))
        assert.deepStrictEqual(yield* s.get("a"), Option.none())
        assert.deepStrictEqual(yield* s.get("b"), Option.some("two|with|bars"))
        yield* s.remove("b")
        assert.deepStrictEqual(yield* s.get("b"), Option.none())
        assert.deepStrictEqual(yield* s.get("never-written"), Option.none())
      })))

    it.effect("slots: the per-user cap, then the total cap; holding a slot again is not a second one", () =>
      run(Effect.gen(function* () {
        const s = yield* SharedState
        assert.strictEqual(yield* s.acquireSlot("s1", "alice", limits, ttl), "admitted")
        assert.strictEqual(yield* s.acquireSlot("s2", "alice", limits, ttl), "admitted")
        assert.strictEqual(yield* s.acquireSlot("s2", "alice", limits, ttl), "admitted")
        assert.strictEqual(yield* s.acquireSlot("s3", "alice", limits, ttl), "user-full")
        assert.strictEqual(yield* s.acquireSlot("s4", "bob", limits, ttl), "admitted")
        assert.strictEqual(yield* s.acquireSlot("s5", "carol", limits, ttl), "total-full")
        assert.strictEqual(yield* s.slotsInUse, 3)
        yield* s.releaseSlot("s1", "alice")
        assert.strictEqual(yield* s.slotsInUse, 2)
        assert.strictEqual(yield* s.acquireSlot("s5", "carol", limits, ttl), "admitted")
        assert.strictEqual(yield* s.acquireSlot("s3", "alice", limits, ttl), "total-full")
      })))

    it.effect("slots expire unless renewed; a renewal does not bring an expired slot back", () =>
      run(Effect.gen(function* () {
        const s = yield* SharedState
        yield* s.acquireSlot("kept", "alice", limits, ttl)
        yield* s.acquireSlot("lapsed", "alice", limits, ttl)
        yield* TestClock.adjust(Duration.minutes(4))
        yield* s.touchSlot("kept", "alice", ttl)
        yield* TestClock.adjust(Duration.minutes(1))
        assert.strictEqual(yield* s.slotsInUse, 1)
        yield* s.touchSlot("lapsed", "alice", ttl)
        assert.strictEqual(yield* s.slotsInUse, 1)
        // The lapsed slot no longer counts against alice.
        assert.strictEqual(yield* s.acquireSlot("new", "alice", limits, ttl), "admitted")
        yield* TestClock.adjust(Duration.minutes(5))
        assert.strictEqual(yield* s.slotsInUse, 0)
      })))

    it.effect("token buckets: a burst of capacity, then refused with the wait, refilled over time, per key", () =>
      run(Effect.gen(function* () {
        const s = yield* SharedState
        const spec = perMinute(3)
        for (let i = 0; i < 3; i++) assert.isTrue((yield* s.take("rl:tool:u", spec)).ok)
        assert.deepStrictEqual(yield* s.take("rl:tool:u", spec), { ok: false, retryAfterSeconds: 20 })
        assert.isTrue((yield* s.take("rl:tool:other", spec)).ok)
        yield* TestClock.adjust(Duration.seconds(20))
        assert.isTrue((yield* s.take("rl:tool:u", spec)).ok)
        assert.isFalse((yield* s.take("rl:tool:u", spec)).ok)
      })))

    it.effect("several buckets in one take: in order, stopping at the first refusal, counted as lone takes", () =>
      run(Effect.gen(function* () {
        const s = yield* SharedState
        const ip = perMinute(3)
        const user = perMinute(2)
        const both = [["rl:ip:a", ip], ["rl:user:u", user]] as const
        assert.deepStrictEqual(yield* s.takeAll(both), { ok: true })
        assert.deepStrictEqual(yield* s.takeAll(both), { ok: true })
        // The user bucket is empty: the ip token is still taken, as `take` ip then `take` user would.
        assert.deepStrictEqual(yield* s.takeAll(both), { ok: false, refused: 1, retryAfterSeconds: 30 })
        assert.isTrue((yield* s.take("rl:user:other", user)).ok)
        // The ip bucket is empty now: it refuses first, and the user bucket is not touched.
        assert.deepStrictEqual(yield* s.takeAll([["rl:ip:a", ip], ["rl:user:v", user]]), { ok: false, refused: 0, retryAfterSeconds: 20 })
        assert.isTrue((yield* s.take("rl:user:v", user)).ok)
        assert.isTrue((yield* s.take("rl:user:v", user)).ok)
        assert.isFalse((yield* s.take("rl:user:v", user)).ok)
        yield* TestClock.adjust(Duration.seconds(30))
        assert.deepStrictEqual(yield* s.takeAll(both), { ok: true })
        assert.deepStrictEqual(yield* s.takeAll([]), { ok: true })
      })))

    it.effect("a token given back counts as never taken, up to the capacity; a forgotten bucket stays full", () =>
      run(Effect.gen(function* () {
        const s = yield* SharedState
        const spec = perMinute(2)
        assert.isTrue((yield* s.take("rl:tool:g", spec)).ok)
        assert.isTrue((yield* s.take("rl:tool:g", spec)).ok)
        yield* s.giveBack("rl:tool:g", spec)
        assert.isTrue((yield* s.take("rl:tool:g", spec)).ok)
        assert.deepStrictEqual(yield* s.take("rl:tool:g", spec), { ok: false, retryAfterSeconds: 30 })
        // Refilled meanwhile, the bucket holds no more than its capacity.
        yield* TestClock.adjust(Duration.minutes(1))
        yield* s.giveBack("rl:tool:g", spec)
        assert.isTrue((yield* s.take("rl:tool:g", spec)).ok)
        assert.isTrue((yield* s.take("rl:tool:g", spec)).ok)
        assert.isFalse((yield* s.take("rl:tool:g", spec)).ok)
        yield* s.giveBack("rl:tool:never", spec)
        assert.isTrue((yield* s.take("rl:tool:never", spec)).ok)
        assert.isTrue((yield* s.take("rl:tool:never", spec)).ok)
        assert.isFalse((yield* s.take("rl:tool:never", spec)).ok)
      })))

    it.live("announcements reach the topic's watchers in order, and no other topic's", () =>
      run(
        Effect.gen(function* () {
          const s = yield* SharedState
          const { fiber, until } = yield* listen(s, s, "ends")
          yield* s.announce("other", "not for ends")
          yield* s.announce("ends", "one")
          yield* s.announce("ends", "two")
          assert.deepStrictEqual(yield* until("two"), ["one", "two"])
          yield* Fiber.interrupt(fiber)
        }).pipe(Effect.scoped)
      ))

    it.effect("answers pings and is not degraded while its store answers", () =>
      run(Effect.gen(function* () {
        const s = yield* SharedState
        yield* s.ping
        assert.deepStrictEqual(yield* s.degraded, Option.none())
        assert.strictEqual(s.backend, name)
      })))
  })
}

describe.skipIf(skipRedis)("shared state: two Valkey replicas", () => {
  const twoReplicas = Effect.gen(function* () {
    yield* requireRedis
    const prefix = yield* uniquePrefix("replicas")
    const a = yield* Layer.build(valkeyReplica(prefix))
    const b = yield* Layer.build(valkeyReplica(prefix))
    return [Context.get(a, SharedState), Context.get(b, SharedState)] as const
  })

  it.scoped("see one state: records, slots and buckets written by one count on the other", () =>
    Effect.gen(function* () {
      const [a, b] = yield* twoReplicas
      yield* a.put("mcp:x", "record", ttl)
      assert.deepStrictEqual(yield* b.get("mcp:x"), Option.some("record"))
      assert.strictEqual(yield* a.acquireSlot("a1", "alice", limits, ttl), "admitted")
      assert.strictEqual(yield* b.acquireSlot("b1", "alice", limits, ttl), "admitted")
      assert.strictEqual(yield* a.acquireSlot("a2", "alice", limits, ttl), "user-full")
      yield* b.releaseSlot("a1", "alice")
      assert.strictEqual(yield* a.acquireSlot("a2", "alice", limits, ttl), "admitted")
      const spec = perMinute(2)
      assert.isTrue((yield* a.take("rl:user:alice", spec)).ok)
      assert.isTrue((yield* b.take("rl:user:alice", spec)).ok)
      assert.isFalse((yield* a.take("rl:user:alice", spec)).ok)
    }))

  it.live("an announcement on one replica reaches the watchers on the other", () =>
    Effect.gen(function* () {
      const [a, b] = yield* twoReplicas
      const onB = yield* listen(b, a, "ends")
      const onA = yield* listen(a, a, "ends")
      yield* a.announce("ends", "session-1")
      assert.deepStrictEqual(yield* onB.until("session-1"), ["session-1"])
      assert.deepStrictEqual(yield* onA.until("session-1"), ["session-1"])
    }).pipe(Effect.scoped))

  it.scoped("racing replicas never hold more slots than the caps allow", () =>
    Effect.gen(function* () {
      const [a, b] = yield* twoReplicas
      const attempts = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).acquireSlot(`r${i}`, `user${i % 4}`, { total: 10, perUser: 3 }, ttl))
      const answers = yield* Effect.all(attempts, { concurrency: "unbounded" })
      assert.strictEqual(answers.filter((x) => x === "admitted").length, 10)
      assert.strictEqual(yield* a.slotsInUse, 10)
    }))
})
