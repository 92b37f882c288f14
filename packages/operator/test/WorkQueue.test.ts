import { describe, expect, it } from "@effect/vitest"
import { Metrics } from "@kubemend/core/Metrics"
import { Duration, Effect, Fiber, Layer, Ref, TestClock } from "effect"
import { processKey, runWorkers } from "../src/runtime/Workers.ts"
import { ControllerMetrics } from "../src/runtime/ControllerMetrics.ts"
import * as WorkQueue from "../src/runtime/WorkQueue.ts"

const queue = (capacity = 100) => WorkQueue.make({ name: "test", capacity, backoffBase: "1 second", backoffMax: "4 seconds" })

const MetricsTest = ControllerMetrics.Default.pipe(Layer.provideMerge(Metrics.Default))

describe("WorkQueue", () => {
  it.scoped("dedups a key that is already queued", () =>
    Effect.gen(function* () {
      const q = yield* queue()
      yield* q.add("a")
      yield* q.add("a")
      yield* q.add("b")
      expect(yield* q.depth).toBe(2)
      expect(yield* q.take).toBe("a")
      expect(yield* q.take).toBe("b")
    }))

  it.scoped("never hands out a key in flight; an add meanwhile queues it again when done", () =>
    Effect.gen(function* () {
      const q = yield* queue()
      yield* q.add("a")
      const key = yield* q.take
      yield* q.add("a")
      yield* q.add("a")
      expect(yield* q.depth).toBe(0)
      yield* q.done(key)
      expect(yield* q.depth).toBe(1)
      yield* q.done(yield* q.take)
      expect(yield* q.depth).toBe(0)
    }))

  it.effect("backoff doubles per failure of a key and stops at the cap", () =>
    Effect.gen(function* () {
      const delays = yield* Effect.forEach([1, 2, 3, 4, 5], (n) => WorkQueue.backoffDelay("1 second", "4 seconds", n))
      expect(delays.map(Duration.toMillis)).toEqual([1000, 2000, 4000, 4000, 4000])
    }))

  it.scoped("requeues a failed key after its backoff (TestClock), and forget resets it", () =>
    Effect.gen(function* () {
      const q = yield* queue()
      yield* q.addRateLimited("a")
      yield* TestClock.adjust("999 millis")
      expect(yield* q.depth).toBe(0)
      yield* TestClock.adjust("1 millis")
      expect(yield* q.depth).toBe(1)
      yield* q.done(yield* q.take)
      yield* q.addRateLimited("a")
      expect(yield* q.retries("a")).toBe(2)
      yield* TestClock.adjust("1999 millis")
      expect(yield* q.depth).toBe(0)
      yield* TestClock.adjust("1 millis")
      expect(yield* q.depth).toBe(1)
      yield* q.done(yield* q.take)
      yield* q.forget("a")
      yield* q.addRateLimited("a")
      yield* TestClock.adjust("1 second")
      expect(yield* q.depth).toBe(1)
    }))

  it.scoped("addAfter: the earlier schedule of a key wins", () =>
    Effect.gen(function* () {
      const q = yield* queue()
      yield* q.addAfter("a", "30 seconds")
      yield* q.addAfter("a", "10 seconds")
      yield* q.addAfter("a", "20 seconds")
      yield* TestClock.adjust("10 seconds")
      expect(yield* q.depth).toBe(1)
      yield* q.done(yield* q.take)
      yield* TestClock.adjust("30 seconds")
      expect(yield* q.depth).toBe(0)
    }))

  it.scoped("is bounded: an add waits while the queue holds its capacity of keys", () =>
    Effect.gen(function* () {
      const q = yield* queue(2)
      yield* q.add("a")
      yield* q.add("b")
      const adding = yield* Effect.fork(q.add("c"))
      yield* Effect.yieldNow()
      expect(adding.unsafePoll()).toBeNull()
      expect(yield* q.take).toBe("a")
      yield* Fiber.join(adding)
      expect(yield* q.depth).toBe(2)
    }))
})

describe("controller workers", () => {
  it.scoped("run distinct keys in parallel but one key at a time", () =>
    Effect.gen(function* () {
      const q = yield* queue()
      const running = yield* Ref.make(new Map<string, number>())
      const peak = yield* Ref.make({ total: 0, perKey: 0 })
      const runs = yield* Ref.make(0)
      const reconcile = (key: string) =>
        Effect.gen(function* () {
          const now = yield* Ref.updateAndGet(running, (m) => new Map(m).set(key, (m.get(key) ?? 0) + 1))
          yield* Ref.update(peak, (p) => ({
            total: Math.max(p.total, [...now.values()].reduce((a, b) => a + b, 0)),
            perKey: Math.max(p.perKey, now.get(key) ?? 0)
          }))
          yield* Effect.sleep("1 second")
          yield* Ref.update(running, (m) => new Map(m).set(key, (m.get(key) ?? 1) - 1))
          yield* Ref.update(runs, (n) => n + 1)
          return {}
        })
      yield* runWorkers({ name: "test", workers: 3, queue: q, reconcile })
      yield* q.add("a")
      yield* q.add("b")
      yield* Effect.yieldNow()
      yield* q.add("a")
      yield* TestClock.adjust("1 second")
      yield* TestClock.adjust("1 second")
      expect(yield* Ref.get(peak)).toEqual({ total: 2, perKey: 1 })
      expect(yield* Ref.get(runs)).toBe(3)
    }).pipe(Effect.provide(MetricsTest)))

  it.scoped("a failure requeues with backoff; requeueAfter schedules the key again; metrics count both", () =>
    Effect.gen(function* () {
      const q = yield* queue()
      const attempts = yield* Ref.make(0)
      const reconcile = (_: string) =>
        Ref.updateAndGet(attempts, (n) => n + 1).pipe(
          Effect.flatMap((n) => (n <= 2 ? Effect.fail("boom") : Effect.succeed({ requeueAfter: Duration.minutes(5) })))
        )
      const options = { name: "testctl", workers: 1, queue: q, reconcile }
      yield* q.add("ns/a")
      yield* processKey(options, yield* q.take)
      yield* TestClock.adjust("1 second")
      yield* processKey(options, yield* q.take)
      yield* TestClock.adjust("1999 millis")
      expect(yield* q.depth).toBe(0)
      yield* TestClock.adjust("1 millis")
      yield* processKey(options, yield* q.take)
      expect(yield* Ref.get(attempts)).toBe(3)
      expect(yield* q.retries("ns/a")).toBe(0)
      yield* TestClock.adjust("5 minutes")
      expect(yield* q.depth).toBe(1)

      const text = (yield* (yield* Metrics).render(undefined)).body
      expect(text).toContain("controller_runtime_reconcile_total{controller=\"testctl\",result=\"error\"} 2")
      expect(text).toContain("controller_runtime_reconcile_total{controller=\"testctl\",result=\"requeue_after\"} 1")
      expect(text).toContain("controller_runtime_reconcile_errors_total{controller=\"testctl\"} 2")
      expect(text).toContain("controller_runtime_reconcile_time_seconds_bucket")
    }).pipe(Effect.provide(MetricsTest)))
})
