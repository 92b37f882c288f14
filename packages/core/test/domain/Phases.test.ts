import { assert, describe, it } from "@effect/vitest"
import { Duration, Either, Schema } from "effect"
import {
  BlockReason,
  BlockTimings,
  backoffDelay,
  canCancel,
  isTerminalPhase,
  NonCancellablePhases,
  RROutcome,
  RRPhase,
  RRPhaseInput,
  RRPhaseValues,
  TerminalPhases
} from "../../src/domain/index.ts"

describe("RR phases", () => {
  it("has the spec's twelve phases plus Skipped", () => {
    assert.deepStrictEqual([...RRPhaseValues], [
      "Pending",
      "Processing",
      "Analyzing",
      "AwaitingApproval",
      "Approved",
      "Running",
      "Verifying",
      "Blocked",
      "Completed",
      "Failed",
      "TimedOut",
      "Cancelled",
      "Skipped"
    ])
    assert.isTrue(Either.isLeft(Schema.decodeUnknownEither(RRPhase)("Executing")))
  })

  it("reads the original's Executing as Running and tolerates Skipped", () => {
    assert.strictEqual(Schema.decodeUnknownSync(RRPhaseInput)("Executing"), "Running")
    assert.strictEqual(Schema.decodeUnknownSync(RRPhaseInput)("Skipped"), "Skipped")
    assert.strictEqual(Schema.encodeSync(RRPhaseInput)("Running"), "Running")
    const bad = Schema.decodeUnknownEither(RRPhaseInput)("Exploding")
    assert.isTrue(Either.isLeft(bad))
  })

  it("terminal phases are Completed, Failed, TimedOut, Cancelled and Skipped", () => {
    assert.deepStrictEqual([...TerminalPhases].sort(), ["Cancelled", "Completed", "Failed", "Skipped", "TimedOut"])
    assert.isTrue(isTerminalPhase("TimedOut"))
    assert.isFalse(isTerminalPhase("AwaitingApproval"))
    assert.isFalse(isTerminalPhase("Blocked"))
  })

  it("the set that refuses cancellation is the spec's Completed, Failed, Cancelled", () => {
    assert.deepStrictEqual([...NonCancellablePhases].sort(), ["Cancelled", "Completed", "Failed"])
    for (const p of NonCancellablePhases) assert.isFalse(canCancel(p))
  })

  it("cancellation is allowed in every non-terminal phase and refused for TimedOut and Skipped", () => {
    for (const p of ["Pending", "Processing", "Analyzing", "AwaitingApproval", "Approved", "Running", "Verifying", "Blocked"]) {
      assert.isTrue(canCancel(p), p)
    }
    assert.isFalse(canCancel("TimedOut"))
    assert.isFalse(canCancel("Skipped"))
  })

  it("outcome includes DryRun", () => {
    assert.strictEqual(Schema.decodeUnknownSync(RROutcome)("DryRun"), "DryRun")
  })
})

describe("block reasons", () => {
  it("carries the spec's timings", () => {
    const t = BlockTimings
    assert.deepStrictEqual(Object.keys(t).sort(), [...BlockReason.literals].sort())
    assert.isTrue(t.ConsecutiveFailures._tag === "Cooldown" && Duration.equals(t.ConsecutiveFailures.cooldown, Duration.hours(1)))
    assert.isTrue(t.ConsecutiveFailures._tag === "Cooldown" && t.ConsecutiveFailures.threshold === 3)
    assert.isTrue(t.DuplicateInProgress._tag === "Recheck" && Duration.equals(t.DuplicateInProgress.interval, Duration.seconds(30)))
    assert.isTrue(t.ResourceBusy._tag === "Recheck" && Duration.equals(t.ResourceBusy.interval, Duration.seconds(30)))
    assert.isTrue(t.RecentlyRemediated._tag === "Cooldown" && Duration.equals(t.RecentlyRemediated.cooldown, Duration.minutes(5)))
    assert.isTrue(
      t.ExponentialBackoff._tag === "Backoff" &&
        Duration.equals(t.ExponentialBackoff.base, Duration.minutes(1)) &&
        Duration.equals(t.ExponentialBackoff.max, Duration.minutes(10))
    )
    assert.strictEqual(t.UnmanagedResource._tag, "UntilLabeled")
    assert.strictEqual(t.IneffectiveChain._tag, "None")
  })

  it("exponential backoff doubles from 1 minute and caps at 10", () => {
    const minutes = [1, 2, 3, 4, 5, 6, 50].map((n) => Duration.toMinutes(backoffDelay(n)))
    assert.deepStrictEqual(minutes, [1, 2, 4, 8, 10, 10, 10])
    assert.strictEqual(Duration.toSeconds(backoffDelay(2, "5 seconds", "5 minutes")), 10)
  })

  it("rejects an unknown block reason", () => {
    const r = Schema.decodeUnknownEither(BlockReason)("TooSpicy")
    assert.isTrue(Either.isLeft(r))
  })
})
