/** Rego values: JSON plus sets; `undefined` is Rego's undefined (no value). */

export type Value = null | boolean | number | string | ReadonlyArray<Value> | RegoSet | { readonly [k: string]: Value }

export class RegoSet {
  private readonly byKey = new Map<string, Value>()
  constructor(items: Iterable<Value> = []) {
    for (const v of items) this.add(v)
  }
  add(v: Value) {
    this.byKey.set(canonical(v), v)
  }
  has(v: Value) {
    return this.byKey.has(canonical(v))
  }
  get size() {
    return this.byKey.size
  }
  values(): Array<Value> {
    return [...this.byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v)
  }
}

export class RegoEvalError extends Error {}

export const isObject = (v: unknown): v is { readonly [k: string]: Value } =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof RegoSet)

/** A stable text of a value: object keys sorted, sets as their sorted members. */
export const canonical = (v: Value): string => {
  if (v instanceof RegoSet) return `set(${v.values().map(canonical).join(",")})`
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`
  if (isObject(v)) {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k]!)}`).join(",")}}`
  }
  return JSON.stringify(v)
}

export const equal = (a: Value, b: Value) => canonical(a) === canonical(b)

/** The JSON OPA answers with: sets become arrays. */
export const toJson = (v: Value): unknown => {
  if (v instanceof RegoSet) return v.values().map(toJson)
  if (Array.isArray(v)) return v.map(toJson)
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJson(x)]))
  return v
}

/** Rego's order of types (null < boolean < number < string < array < object < set) then values. */
const rank = (v: Value) =>
  v === null ? 0 : typeof v === "boolean" ? 1 : typeof v === "number" ? 2 : typeof v === "string" ? 3 : Array.isArray(v) ? 4 : v instanceof RegoSet ? 6 : 5

export const compare = (a: Value, b: Value): number => {
  const ra = rank(a)
  const rb = rank(b)
  if (ra !== rb) return ra - rb
  if (typeof a === "number" || typeof a === "string" || typeof a === "boolean") {
    return a < (b as typeof a) ? -1 : a > (b as typeof a) ? 1 : 0
  }
  const ca = canonical(a)
  const cb = canonical(b)
  return ca < cb ? -1 : ca > cb ? 1 : 0
}

/** The members of a collection as [key, value] pairs (sets: the member is its own key). */
export const entries = (v: Value): Array<readonly [Value, Value]> => {
  if (Array.isArray(v)) return v.map((x, i) => [i, x] as const)
  if (v instanceof RegoSet) return v.values().map((x) => [x, x] as const)
  if (isObject(v)) return Object.entries(v).map(([k, x]) => [k, x] as const)
  return []
}

/** `v[key]`; undefined when absent. */
export const index = (v: Value, key: Value): Value | undefined => {
  if (Array.isArray(v)) return typeof key === "number" && Number.isInteger(key) ? v[key] : undefined
  if (v instanceof RegoSet) return v.has(key) ? key : undefined
  if (isObject(v)) return typeof key === "string" && Object.hasOwn(v, key) ? v[key] : undefined
  return undefined
}
