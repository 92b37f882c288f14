/**
 * Tool results as the caller sees them: JSON text capped at the maximum tool output size (16,384 bytes by default).
 * A list result drops elements from the tail of its list until it fits and says `truncated: true`; any other
 * oversized result is replaced by a short summary (error messages are redacted by Redact.ts).
 */

const bytes = (s: string) => Buffer.byteLength(s, "utf8")

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The JSON of `build(n)` for the largest `n <= total` that fits in `maxBytes`, found by bisection (serializing is
 * the cost, so not one element at a time).
 */
export const largestFitting = (total: number, build: (n: number) => unknown, maxBytes: number): string =>
  JSON.stringify(build(fitCount(total, build, maxBytes)))

/** The largest `n <= total` whose `build(n)` serializes within `maxBytes` (0 when none does). */
export const fitCount = (total: number, build: (n: number) => unknown, maxBytes: number): number => {
  if (bytes(JSON.stringify(build(total))) <= maxBytes) return total
  let lo = 0
  let hi = total - 1
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (bytes(JSON.stringify(build(mid))) <= maxBytes) lo = mid
    else hi = mid - 1
  }
  return lo
}

const trimToFit = (value: Record<string, unknown>, field: string, items: ReadonlyArray<unknown>, maxBytes: number) =>
  largestFitting(
    items.length,
    (n) => ({ ...value, [field]: items.slice(0, n), ...("count" in value ? { count: n } : {}), truncated: true }),
    maxBytes
  )

export const renderResult = (value: unknown, maxBytes: number, listField?: string): string => {
  const text = JSON.stringify(value ?? null)
  if (bytes(text) <= maxBytes) return text
  if (listField !== undefined && isRecord(value) && Array.isArray(value[listField])) {
    return trimToFit(value, listField, value[listField] as ReadonlyArray<unknown>, maxBytes)
  }
  const ids = isRecord(value)
    ? Object.fromEntries(["rr_id", "session_id"].filter((k) => typeof value[k] === "string").map((k) => [k, value[k]]))
    : {}
  return JSON.stringify({
    truncated: true,
    original_size: bytes(text),
    summary: Buffer.from(text, "utf8").subarray(0, 128).toString("utf8"),
    ...ids
  })
}
