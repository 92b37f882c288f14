/** K8s contract: 409 retries, 500, 429 with Retry-After, deadlines. */
import { expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { K8s } from "../../src/K8s.ts"
import { plural, rr, type Using } from "./ContractKit.ts"
import { K8sHarness } from "./Harness.ts"

export const faultCases = (using: Using) => {
  const env = using()

  it.live("patch retries 409 Conflict (5 tries in all)", () =>
    env(Effect.gen(function* () {
      const k8s = yield* K8s
      const harness = yield* K8sHarness
      yield* k8s.createCr(plural, rr("a"))
      yield* harness.failNext(1, { status: 409, verb: "patch", plural })
      const patched = yield* k8s.patchCr(plural, "a", { spec: { severity: "high" } })
      expect(patched.spec).toEqual({ signalName: "a", severity: "high" })
      expect(yield* harness.count("patch", plural)).toBe(2)

      yield* harness.failNext(1, { status: 409, verb: "patch", plural: `${plural}/status` })
      expect((yield* k8s.patchCrStatus(plural, "a", { phase: "Done" })).status).toEqual({ phase: "Done" })

      yield* harness.failNext(5, { status: 409, verb: "patch", plural })
      expect((yield* Effect.flip(k8s.patchCr(plural, "a", { spec: { severity: "low" } })))._tag).toBe("K8sConflict")
      expect(yield* harness.count("patch", plural)).toBe(7)
    })))

  it.live("a 500 surfaces as K8sUnavailable without retrying", () =>
    env(Effect.gen(function* () {
      const k8s = yield* K8s
      const harness = yield* K8sHarness
      yield* k8s.createCr(plural, rr("a"))
      yield* harness.failNext(1, { status: 500, verb: "get", plural })
      const error = yield* Effect.flip(k8s.getCr(plural, "a"))
      expect(error._tag).toBe("K8sUnavailable")
      expect(error._tag === "K8sUnavailable" && error.status).toBe(500)
      expect(yield* harness.count("get", plural)).toBe(1)
      expect((yield* k8s.getCr(plural, "a")).metadata.name).toBe("a")
    })))

  it.live("429 waits for Retry-After, then succeeds", () =>
    env(Effect.gen(function* () {
      const k8s = yield* K8s
      const harness = yield* K8sHarness
      yield* k8s.createCr(plural, rr("a"))
      yield* harness.failNext(1, { status: 429, verb: "get", plural, retryAfterSeconds: 1 })
      const [elapsed, got] = yield* Effect.timed(k8s.getCr(plural, "a"))
      expect(got.metadata.name).toBe("a")
      expect(Duration.toMillis(elapsed)).toBeGreaterThanOrEqual(950)
      expect(yield* harness.count("get", plural)).toBe(2)
    })))

  it.live("429: Retry-After is bounded, and retries give up as K8sUnavailable", () =>
    using({ maxRetryAfter: "150 millis" })(Effect.gen(function* () {
      const k8s = yield* K8s
      const harness = yield* K8sHarness
      yield* k8s.createCr(plural, rr("a"))
      yield* harness.failNext(1, { status: 429, verb: "get", plural, retryAfterSeconds: 60 })
      const [elapsed] = yield* Effect.timed(k8s.getCr(plural, "a"))
      expect(Duration.toMillis(elapsed)).toBeGreaterThanOrEqual(140)
      expect(Duration.toMillis(elapsed)).toBeLessThan(2000)

      yield* harness.failNext(10, { status: 429, verb: "list", plural, retryAfterSeconds: 0 })
      const error = yield* Effect.flip(k8s.listCr(plural))
      expect(error.status).toBe(429)
      expect(yield* harness.count("list", plural)).toBe(4)
    })))

  it.live("an unresponsive server hits the deadline: K8sUnavailable, not a hang", () =>
    using({ requestTimeout: "300 millis" })(Effect.gen(function* () {
      const k8s = yield* K8s
      const harness = yield* K8sHarness
      yield* k8s.createCr(plural, rr("a"))
      yield* harness.delayNext(1, "5 seconds", { verb: "get", plural })
      const [elapsed, error] = yield* Effect.timed(Effect.flip(k8s.getCr(plural, "a")))
      expect(error._tag).toBe("K8sUnavailable")
      expect(Duration.toMillis(elapsed)).toBeLessThan(2000)
      expect((yield* k8s.getCr(plural, "a")).metadata.name).toBe("a")
    })))
}
