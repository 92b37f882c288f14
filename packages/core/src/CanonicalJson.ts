/**
 * Canonical JSON: object keys sorted (by UTF-16 code units) at every level, otherwise exactly `JSON.stringify` (no
 * spaces, `undefined` members dropped, `undefined` array items as `null`). The bytes audit-chain hashes and workflow
 * content hashes cover. Built by hand because JS objects always enumerate integer-like keys first, so re-ordering an
 * object for `JSON.stringify` cannot sort `"10"` before `"9"`; it runs once per audit event on every write and
 * verification, hence the shortcuts (plain strings quoted by hand, small key lists sorted in place).
 */

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
export const canonicalJson = (value: unknown): string => {
  if (typeof value === "string") return quote(value)
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
  if (Array.isArray(value)) {
    let out = "["
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ","
      const item: unknown = value[i]
      out += item === undefined || typeof item === "function" ? "null" : canonicalJson(item)
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
    out += (out.length === 1 ? "" : ",") + keyPrefix(k) + canonicalJson(v)
  }
  return out + "}"
}
