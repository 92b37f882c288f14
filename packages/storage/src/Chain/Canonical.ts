/**
 * The canonical JSON of a chain event, the bytes its hash covers: its fields in sorted key order, null and absent
 * ones left out, `event_data` with keys sorted at every level, otherwise exactly `JSON.stringify` (no spaces).
 * `canonicalData` gives what core's `canonicalJson` gives for the same value (a test holds them together); it is
 * written again here because it runs once per event on every write and every verification, and these shortcuts
 * roughly halve its cost: strings that need no escaping are quoted by hand, and key lists that are already sorted
 * are not sorted again.
 */

/** The hashed fields of an event, in canonical (sorted) order. `version` is stored as `event_version`. */
export const canonicalKeys = [
  "actor_id", "actor_ip", "actor_type", "cluster_id", "correlation_id", "duration_ms", "error_code", "error_message",
  "event_action", "event_category", "event_data", "event_id", "event_outcome", "event_timestamp", "event_type",
  "is_sensitive", "namespace", "parent_event_date", "parent_event_id", "resource_id", "resource_type",
  "retention_days", "severity", "version"
] as const

export type CanonicalKey = (typeof canonicalKeys)[number]

/** Index of `event_data` in `canonicalKeys`. */
export const dataIndex = canonicalKeys.indexOf("event_data")

const keyPrefixes = canonicalKeys.map((k) => `"${k}":`)

// Anything JSON.stringify would escape: quote, backslash, control characters, and (lone) surrogates.
const needsEscape = /["\\\u0000-\u001f\ud800-\udfff]/

/** `JSON.stringify` of a string. */
export const quote = (s: string): string => (needsEscape.test(s) ? JSON.stringify(s) : `"${s}"`)

// Payloads repeat the same keys in every event; their quoted `"key":` prefix is built once (bounded).
const prefixes = new Map<string, string>()
const keyPrefix = (k: string): string => {
  let p = prefixes.get(k)
  if (p === undefined) {
    p = quote(k) + ":"
    if (prefixes.size < 10_000) prefixes.set(k, p)
  }
  return p
}

/**
 * `Object.keys(record).sort()`. Payload objects are small, and an insertion sort of a few keys in place is several
 * times cheaper than `Array.prototype.sort`, which allocates on every call; large objects still use it.
 */
const sortedKeys = (record: object): Array<string> => {
  const keys = Object.keys(record)
  if (keys.length > 16) return keys.sort()
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i]!
    let j = i - 1
    while (j >= 0 && keys[j]! > k) {
      keys[j + 1] = keys[j]!
      j--
    }
    keys[j + 1] = k
  }
  return keys
}

/** JSON with object keys sorted (UTF-16 code units) at every level; `undefined` members dropped, array holes `null`. */
export const canonicalData = (value: unknown): string => {
  if (typeof value === "string") return quote(value)
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
  if (Array.isArray(value)) {
    let out = "["
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ","
      const item: unknown = value[i]
      out += item === undefined || typeof item === "function" ? "null" : canonicalData(item)
    }
    return out + "]"
  }
  const record = value as Record<string, unknown>
  const keys = sortedKeys(record)
  let out = "{"
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!
    const v = record[k]
    if (v === undefined || typeof v === "function") continue
    out += (out.length === 1 ? "" : ",") + keyPrefix(k) + canonicalData(v)
  }
  return out + "}"
}

type Fields = { readonly [K in CanonicalKey]?: unknown }

const field = (out: string, i: number, v: unknown): string =>
  v === null || v === undefined
    ? out
    : out + (out.length === 1 ? "" : ",") + keyPrefixes[i]! + (typeof v === "string" ? quote(v) : JSON.stringify(v))

/** The canonical JSON of an event; `data` is `canonicalData(event.event_data)` when the caller already has it. */
export const canonicalEvent = (event: Fields, data: string = canonicalData(event.event_data)): string => {
  let out = "{"
  for (let i = 0; i < canonicalKeys.length; i++) {
    out = i === dataIndex ? out + (out.length === 1 ? "" : ",") + keyPrefixes[i]! + data : field(out, i, event[canonicalKeys[i]!])
  }
  return out + "}"
}

/** The same from the field values in `canonicalKeys` order (a database row); `values[dataIndex]` is not read. */
export const canonicalFromValues = (values: ReadonlyArray<unknown>, data: string): string => {
  let out = "{"
  for (let i = 0; i < canonicalKeys.length; i++) {
    out = i === dataIndex ? out + (out.length === 1 ? "" : ",") + keyPrefixes[i]! + data : field(out, i, values[i])
  }
  return out + "}"
}
