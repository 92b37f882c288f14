import { describe, expect, it } from "vitest"
import { isoTimestamp, wellFormedJson } from "../src/Normalise.ts"

const pad = (n: number, width: number) => String(n).padStart(width, "0")

describe("isoTimestamp", () => {
  it("prints what new Date(ts).toISOString() prints, around every field's edges", () => {
    let checked = 0
    for (const year of [0, 1900, 1970, 2000, 2023, 2024, 2100, 9999]) {
      for (let month = 0; month <= 13; month++) {
        for (let day = 0; day <= 32; day++) {
          for (const [h, m, s] of [[0, 0, 0], [23, 59, 59], [24, 0, 0], [12, 60, 0], [12, 0, 60]] as const) {
            const ts = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}.123Z`
            // The batch decoder refuses what Date cannot read.
            if (Number.isNaN(Date.parse(ts))) continue
            expect(isoTimestamp(ts), ts).toBe(new Date(ts).toISOString())
            checked++
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(3000)
  })

  it("normalises other forms to UTC milliseconds", () => {
    expect(isoTimestamp("2026-03-01T10:00:00+02:00")).toBe("2026-03-01T08:00:00.000Z")
    expect(isoTimestamp("2026-03-01t10:00:00.5z")).toBe("2026-03-01T10:00:00.500Z")
    expect(isoTimestamp("2026-03-01T10:00:00.123456Z")).toBe("2026-03-01T10:00:00.123Z")
    expect(isoTimestamp("2024-02-29T00:00:00.000Z")).toBe("2024-02-29T00:00:00.000Z")
    expect(isoTimestamp("2023-02-29T00:00:00.000Z")).toBe("2023-03-01T00:00:00.000Z")
  })
})

describe("wellFormedJson", () => {
  it("makes lone surrogates U+FFFD in strings and keys at any depth, leaves pairs and other values alone", () => {
    expect(wellFormedJson({ "\ud800k": ["a\udc00", { b: "\u{1F600}", n: 1, t: true, z: null }], ok: "é" })).toEqual({
      "\ufffdk": ["a\ufffd", { b: "\u{1F600}", n: 1, t: true, z: null }],
      ok: "é"
    })
    expect(wellFormedJson("\ud83d")).toBe("\ufffd")
    expect(wellFormedJson(42)).toBe(42)
  })
})
