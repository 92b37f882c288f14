/** The one circuit breaker (gateway and signals build on it), on the TestClock. */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, Option, TestClock } from "effect"
import * as CircuitBreaker from "../src/CircuitBreaker.ts"

const setup = Effect.gen(function* () {
  const states: Array<string> = []
  const breaker = yield* CircuitBreaker.make({
    name: "dep",
    failureThreshold: 2,
    resetTimeout: Duration.seconds(10),
    unavailableDetail: "dep is unavailable (circuit open)",
    onState: (state) => Effect.sync(() => void states.push(state))
  })
  const outage = breaker.run(Effect.fail("down" as const), () => true)
  const answer = breaker.run(Effect.fail("not found" as const), () => false)
  const ok = breaker.run(Effect.succeed("ok"), () => true)
  return { breaker, states, outage, answer, ok }
})

describe("CircuitBreaker", () => {
  it.effect("opens after the threshold of consecutive outages and answers DependencyUnavailable at once", () =>
    Effect.gen(function* () {
      const { breaker, states, outage, ok } = yield* setup
      yield* Effect.exit(outage)
      yield* Effect.exit(outage)
      expect(yield* breaker.state).toBe("open")
      const refused = yield* Effect.flip(ok)
      expect(refused).toMatchObject({ _tag: "DependencyUnavailable", detail: "dep is unavailable (circuit open)" })
      expect(states).toEqual(["closed", "open"])
    }))

  it.effect("an answer that is not an outage resets the count", () =>
    Effect.gen(function* () {
      const { breaker, outage, answer } = yield* setup
      yield* Effect.exit(outage)
      yield* Effect.exit(answer)
      yield* Effect.exit(outage)
      expect(yield* breaker.state).toBe("closed")
    }))

  it.effect("after resetTimeout one trial goes through: success closes, failure reopens", () =>
    Effect.gen(function* () {
      const { breaker, states, outage, ok } = yield* setup
      yield* Effect.exit(outage)
      yield* Effect.exit(outage)
      yield* TestClock.adjust("10 seconds")
      yield* Effect.exit(outage)
      expect(yield* breaker.state).toBe("open")
      expect(yield* breaker.trialAt).toEqual(Option.some(20_000))
      yield* TestClock.adjust("10 seconds")
      expect(yield* ok).toBe("ok")
      expect(yield* breaker.trialAt).toEqual(Option.none())
      expect(states).toEqual(["closed", "open", "half_open", "open", "half_open", "closed"])
    }))

  it.effect("while the trial runs others are refused; an interrupted trial lets the next call try", () =>
    Effect.gen(function* () {
      const { breaker, outage, ok } = yield* setup
      yield* Effect.exit(outage)
      yield* Effect.exit(outage)
      yield* TestClock.adjust("10 seconds")
      const trial = yield* Effect.fork(breaker.run(Effect.never, () => true))
      yield* Effect.yieldNow()
      expect(Exit.isFailure(yield* Effect.exit(ok))).toBe(true)
      yield* Fiber.interrupt(trial)
      expect(yield* ok).toBe("ok")
      expect(yield* breaker.state).toBe("closed")
    }))
})
