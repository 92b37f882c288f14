/**
 * Walking JSON values: how deep a request may nest, and mapping the strings of one.
 *
 * How deep a JSON request may nest. V8's `JSON.stringify` overflows the stack at a few thousand levels, and so does
 * any recursive walk (hashing, canonical JSON), which turned deep bodies into 500s; no request of ours needs more
 * than a few levels, and 1000 is a common JSON parser limit.
 */
export const maxJsonDepth = 1000

/** Whether `value` nests objects or arrays more than `limit` levels deep (the value itself is level 1); no recursion. */
export const nestsDeeperThan = (value: unknown, limit: number = maxJsonDepth): boolean => {
  if (value === null || typeof value !== "object") return false
  const pending: Array<readonly [object, number]> = [[value, 1]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, level] = next
    if (level > limit) return true
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === "object") pending.push([child, level + 1])
    }
  }
  return false
}

/** `value` with `f` applied to every string in it, object keys included (keys that then collide keep the last value). */
export const mapJsonStrings = (value: unknown, f: (s: string) => string): unknown => {
  if (typeof value === "string") return f(value)
  if (Array.isArray(value)) return value.map((v) => mapJsonStrings(v, f))
  if (value === null || typeof value !== "object") return value
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [f(k), mapJsonStrings(v, f)]))
}

/** Whether a JSON value holds NUL in any string (PostgreSQL text cannot); throws, as `JSON.stringify` does, when it nests too deep. */
export const holdsNul = (value: unknown): boolean => JSON.stringify(value).includes("\\u0000")
