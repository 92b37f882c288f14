/** K8s contract: watch events, reconnect after the server closes, relist after 410, interruption. */
import { expect, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { K8s } from "../../src/K8s.ts"
import { collect, eventually, plural, rr, type Using } from "./ContractKit.ts"
import { K8sHarness, namespace } from "./Harness.ts"

export const watchCases = (using: Using) => {
  const env = using()

  it.live("watch: ADDED for existing objects, then ADDED / MODIFIED / DELETED", () =>
    env(Effect.gen(function* () {
      const k8s = yield* K8s
      const harness = yield* K8sHarness
      yield* harness.seed([{ ...rr("a"), metadata: { name: "a", namespace } }])
      const all = yield* collect(k8s.watchCr(plural))
      const onlyB = yield* collect(k8s.watchCr(plural, { name: "b" }))
      expect(yield* all.next(1)).toEqual(["ADDED a"])
      yield* k8s.createCr(plural, rr("b"))
      yield* k8s.patchCr(plural, "b", { spec: { severity: "low" } })
      yield* k8s.patchCrStatus(plural, "b", { phase: "Done" })
      yield* k8s.deleteCr(plural, "a")
      yield* k8s.deleteCr(plural, "b")
      expect(yield* all.next(5)).toEqual(["ADDED b", "MODIFIED b", "MODIFIED b", "DELETED a", "DELETED b"])
      expect(yield* onlyB.next(4)).toEqual(["ADDED b", "MODIFIED b", "MODIFIED b", "DELETED b"])
      expect(yield* all.quiet).toEqual([])
    })))

  it.live("watch reconnects from the last resourceVersion after the server closes it", () =>
    env(Effect.gen(function* () {
      const k8s = yield* K8s
      const harness = yield* K8sHarness
      yield* harness.seed([{ ...rr("a"), metadata: { name: "a", namespace } }])
      const w = yield* collect(k8s.watchCr(plural))
      expect(yield* w.next(1)).toEqual(["ADDED a"])
      yield* k8s.createCr(plural, rr("b"))
      expect(yield* w.next(1)).toEqual(["ADDED b"])
      yield* harness.closeWatches
      yield* k8s.createCr(plural, rr("c"))
      yield* k8s.patchCr(plural, "b", { spec: { severity: "low" } })
      yield* k8s.deleteCr(plural, "a")
      expect(yield* w.next(3)).toEqual(["ADDED c", "MODIFIED b", "DELETED a"])
      expect(yield* w.quiet).toEqual([])
      expect(yield* harness.count("watch", plural)).toBeGreaterThanOrEqual(2)
      expect(yield* harness.count("list", plural)).toBe(1)
    })))

  it.live("watch relists after 410 Gone and emits only the difference", () =>
    using({ watchHistory: 2 })(Effect.gen(function* () {
      const k8s = yield* K8s
      const harness = yield* K8sHarness
      yield* harness.seed(["a", "b"].map((n) => ({ ...rr(n), metadata: { name: n, namespace } })))
      const w = yield* collect(k8s.watchCr(plural))
      expect([...(yield* w.next(2))].sort()).toEqual(["ADDED a", "ADDED b"])
      // Hold the reconnect while more changes happen than the server keeps, so it must answer 410.
      yield* harness.delayNext(1, "600 millis", { verb: "watch", plural })
      yield* harness.closeWatches
      yield* k8s.createCr(plural, rr("c"))
      yield* k8s.patchCr(plural, "b", { spec: { severity: "low" } })
      yield* k8s.deleteCr(plural, "a")
      yield* k8s.createCr(plural, rr("d"))
      expect([...(yield* w.next(4))].sort()).toEqual(["ADDED c", "ADDED d", "DELETED a", "MODIFIED b"])
      expect(yield* w.quiet).toEqual([])
      expect(yield* harness.count("list", plural)).toBe(2)
      yield* k8s.patchCr(plural, "d", { spec: { severity: "high" } })
      expect(yield* w.next(1)).toEqual(["MODIFIED d"])
    })))

  it.live("a 410 on every watch relists with backoff, never in a tight loop", () =>
    env(Effect.gen(function* () {
      const k8s = yield* K8s
      const harness = yield* K8sHarness
      yield* harness.failNext(100, { status: 410, verb: "watch", plural })
      const w = yield* collect(k8s.watchCr(plural))
      yield* Effect.sleep("700 millis")
      // 100 ms, 200 ms, 400 ms, ... : about 4 relists in 700 ms, not hundreds.
      const lists = yield* harness.count("list", plural)
      expect(lists).toBeGreaterThanOrEqual(2)
      expect(lists).toBeLessThanOrEqual(6)
      expect(yield* w.quiet).toEqual([])
    })))

  it.live("interrupting a watch ends it and closes its request", () =>
    env(Effect.gen(function* () {
      const k8s = yield* K8s
      const harness = yield* K8sHarness
      const fiber = yield* k8s.watchCr(plural).pipe(Stream.runDrain, Effect.fork)
      yield* eventually(harness.openWatches, 1)
      yield* Fiber.interrupt(fiber)
      yield* eventually(harness.openWatches, 0)
    })))
}
