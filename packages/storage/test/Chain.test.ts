import { describe, expect, it } from "@effect/vitest"
import { canonicalJson } from "@kubemend/core/StorageApi"
import { createHash, createHmac } from "node:crypto"
import { type ChainEvent, type ChainRow, canonicalEvent, makeHasher, verifyChain } from "../src/Chain.ts"
import { canonicalData, canonicalFromValues, canonicalKeys } from "../src/Chain/Canonical.ts"

const event = (i: number, overrides: Partial<ChainEvent> = {}): ChainEvent => ({
  event_id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  version: "1.0",
  event_type: "apifrontend.tool.executed",
  event_timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
  event_category: "apifrontend",
  event_action: "executed",
  event_outcome: "success",
  correlation_id: "rr-1",
  retention_days: 2555,
  event_data: { step: i, nested: { b: 1, a: [2, { d: 1, c: null }] } },
  ...overrides
})

const chain = (key: string | undefined, n: number): Array<ChainRow> => {
  const hasher = makeHasher(key)
  let previous = ""
  return Array.from({ length: n }, (_, i) => {
    const e = event(i + 1)
    const hash = hasher.hash(previous, e)
    const row = { event: e, chainPosition: i + 1, eventHash: hash, previousEventHash: previous, hashAlgorithm: hasher.algorithm }
    previous = hash
    return row
  })
}

describe("hash chain", () => {
  it("canonical JSON sorts keys at every level and leaves out null and absent top-level fields", () => {
    const a = canonicalEvent(event(1, { actor_id: null, severity: undefined }))
    const b = canonicalEvent({ ...event(1), event_data: { nested: { a: [2, { c: null, d: 1 }], b: 1 }, step: 1 } })
    expect(a).toBe(b)
    expect(a.startsWith("{\"correlation_id\":\"rr-1\",\"event_action\"")).toBe(true)
    expect(a).not.toContain("actor_id")
  })

  it("records the algorithm: unkeyed SHA-256 without a key, HMAC-SHA256 with one", () => {
    expect(makeHasher(undefined).algorithm).toBe("sha256-unkeyed")
    expect(makeHasher("k").algorithm).toBe("hmac-sha256")
    expect(makeHasher("k").hash("", event(1))).not.toBe(makeHasher(undefined).hash("", event(1)))
  })

  it("verifies an intact chain of either algorithm", () => {
    for (const key of [undefined, "secret"]) {
      const report = verifyChain(chain(key, 5), makeHasher(key), { chainPosition: 5, eventHash: chain(key, 5)[4]!.eventHash })
      expect(report).toMatchObject({ total: 5, verified: 5, findings: [] })
    }
  })

  it("with a key, a whole rewritten tail is caught at the first rewritten row", () => {
    const rows = chain("secret", 4)
    // An attacker without the key rewrites row 2 onwards and re-hashes with plain SHA-256, claiming HMAC.
    const forger = makeHasher(undefined)
    let previous = rows[0]!.eventHash
    const forged = rows.map((r, i) => {
      if (i === 0) return r
      const e = i === 1 ? { ...r.event, event_outcome: "failure" } : r.event
      const hash = forger.hash(previous, e)
      const row = { ...r, event: e, eventHash: hash, previousEventHash: previous }
      previous = hash
      return row
    })
    const report = verifyChain(forged, makeHasher("secret"))
    expect(report.findings[0]!.event_id).toBe(rows[1]!.event.event_id)
    expect(report.verified).toBe(1)
  })

  it("a keyed row cannot be verified without the key and is reported, not passed", () => {
    const report = verifyChain(chain("secret", 2), makeHasher(undefined))
    expect(report.findings.map((f) => f.message)).toEqual([expect.stringContaining("no hash key"), expect.stringContaining("no hash key")])
  })

  it("reports a missing first row, a position gap and a missing tail", () => {
    const rows = chain(undefined, 4)
    expect(verifyChain(rows.slice(1), makeHasher(undefined)).findings[0]!.event_id).toBe(rows[1]!.event.event_id)
    const gap = verifyChain([rows[0]!, rows[2]!, rows[3]!], makeHasher(undefined))
    expect(gap.findings.map((f) => f.event_id)).toEqual([rows[2]!.event.event_id])
    const tail = verifyChain(rows.slice(0, 3), makeHasher(undefined), { chainPosition: 4, eventHash: rows[3]!.eventHash })
    expect(tail.findings.at(-1)!.message).toContain("deleted")
  })

  // The plain definition: sorted keys, everything else JSON.stringify.
  const reference = (v: unknown): string => {
    if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null"
    if (Array.isArray(v)) return `[${v.map((x) => (x === undefined || typeof x === "function" ? "null" : reference(x))).join(",")}]`
    const r = v as Record<string, unknown>
    const keys = Object.keys(r).sort().filter((k) => r[k] !== undefined && typeof r[k] !== "function")
    return `{${keys.map((k) => `${JSON.stringify(k)}:${reference(r[k])}`).join(",")}}`
  }

  it("the payload canonicalisation is the plain definition (sorted keys, JSON.stringify), escapes and key order included", () => {
    const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${19 - i}`, i]))
    const values: ReadonlyArray<unknown> = [
      { b: 1, a: { d: [3, { z: null, y: "q\"uote" }], c: "tab\there" }, "10": "ten", "9": "nine", "": "empty" },
      { "é": "ü", "\u{1F600}": "smile \u{1F600}", "\ud800": "lone \udc00 surrogate", "ß": "\u0001\u001f\u007f\u2028" },
      { nested: [[], {}, [null, true, false, 0, -0, 1e21, 1.5e-7, 12345678901234567890]] },
      { back: "a\\b/c", newline: "x\ny\r\n", unicode: "\u00e9\u4e2d" },
      many,
      [1, "two", { three: 3 }],
      "just a string",
      42,
      null
    ]
    for (const v of values) {
      expect(canonicalData(v)).toBe(reference(v))
      expect(canonicalJson(v)).toBe(reference(v))
    }
  })

  it("builds the same canonical JSON from a database row's values as from the event", () => {
    const e = event(7, { actor_id: "bob", duration_ms: 5, is_sensitive: false, severity: null, error_message: "a \"b\"\n" })
    const values = canonicalKeys.map((k) => e[k] ?? null)
    expect(canonicalFromValues(values, canonicalData(e.event_data))).toBe(canonicalEvent(e))
  })

  it("hashes as stored chains were hashed: SHA-256 or HMAC-SHA256 (string key) over previous hash + canonical JSON", () => {
    const e = event(3)
    const previous = "ab".repeat(32)
    expect(makeHasher(undefined).hash(previous, e)).toBe(createHash("sha256").update(previous).update(canonicalEvent(e)).digest("hex"))
    expect(makeHasher("s3cret-ключ").hash(previous, e)).toBe(
      createHmac("sha256", "s3cret-ключ").update(previous).update(canonicalEvent(e)).digest("hex")
    )
  })
})
