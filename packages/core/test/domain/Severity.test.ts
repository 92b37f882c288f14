import { assert, describe, it } from "@effect/vitest"
import { Array as Arr, Either, Schema } from "effect"
import { classifySeverity, Severity, SeverityDescending, SeverityInput, SeverityLenient, severityRank } from "../../src/domain/index.ts"

const decodeInput = Schema.decodeUnknownEither(SeverityInput)

describe("severity", () => {
  it("accepts the five canonical values", () => {
    for (const s of ["critical", "high", "warning", "info", "unknown"] as const) {
      assert.deepStrictEqual(decodeInput(s), Either.right(s))
    }
  })

  it("maps the input aliases medium -> warning and low -> info", () => {
    assert.deepStrictEqual(decodeInput("medium"), Either.right("warning"))
    assert.deepStrictEqual(decodeInput("low"), Either.right("info"))
    assert.deepStrictEqual(decodeInput("MEDIUM"), Either.right("warning"))
    assert.deepStrictEqual(decodeInput(" Critical "), Either.right("critical"))
  })

  it("never outputs an alias", () => {
    assert.strictEqual(Schema.encodeSync(SeverityInput)("warning"), "warning")
    assert.isTrue(Either.isLeft(Schema.decodeUnknownEither(Severity)("medium")))
  })

  it("rejects anything else on strict input", () => {
    const r = decodeInput("page")
    assert.isTrue(Either.isLeft(r))
    assert.isTrue(Either.isLeft(decodeInput(3)))
  })

  it("classifies unrecognised upstream values as unknown", () => {
    assert.strictEqual(Schema.decodeUnknownSync(SeverityLenient)("page"), "unknown")
    assert.strictEqual(Schema.decodeUnknownSync(SeverityLenient)("low"), "info")
    assert.strictEqual(classifySeverity(undefined), "unknown")
  })

  it("ranks for sorting, most severe first", () => {
    assert.isTrue(severityRank.critical > severityRank.high)
    assert.isTrue(severityRank.high > severityRank.warning)
    assert.isTrue(severityRank.warning > severityRank.info)
    assert.isTrue(severityRank.info > severityRank.unknown)
    const sorted = Arr.sort(["info", "unknown", "critical", "warning", "high"] as const, SeverityDescending)
    assert.deepStrictEqual(sorted, ["critical", "high", "warning", "info", "unknown"])
  })
})
