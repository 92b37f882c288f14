/**
 * The builtins of the Rego subset, with OPA's meaning. As in OPA's default (non-strict) mode, a builtin given
 * arguments of the wrong type is undefined rather than an error. `regex.match` uses JavaScript regular
 * expressions (OPA uses RE2: the common syntax is the same; lookarounds work here and would not in OPA).
 */
import { isObject, RegoSet, type Value } from "./Values.ts"

type Builtin = (...args: ReadonlyArray<Value>) => Value | undefined

const str = (v: Value | undefined): v is string => typeof v === "string"
const num = (v: Value | undefined): v is number => typeof v === "number"

const numbers = (v: Value | undefined): Array<number> | undefined => {
  const items = Array.isArray(v) ? v : v instanceof RegoSet ? v.values() : undefined
  return items?.every(num) ? (items as Array<number>) : undefined
}

const formatOne = (v: Value): string => (typeof v === "string" ? v : JSON.stringify(v instanceof RegoSet ? v.values() : v))

const sprintf: Builtin = (format, args) => {
  if (!str(format) || !Array.isArray(args)) return undefined
  let i = 0
  return format.replace(/%[vsdf%]/g, (m) => (m === "%%" ? "%" : i < args.length ? formatOne(args[i++]!) : m))
}

export const builtins: Readonly<Record<string, Builtin>> = {
  count: (v) => (Array.isArray(v) ? v.length : v instanceof RegoSet ? v.size : isObject(v) ? Object.keys(v).length : str(v) ? [...v].length : undefined),
  startswith: (s, p) => (str(s) && str(p) ? s.startsWith(p) : undefined),
  endswith: (s, p) => (str(s) && str(p) ? s.endsWith(p) : undefined),
  contains: (s, p) => (str(s) && str(p) ? s.includes(p) : undefined),
  lower: (s) => (str(s) ? s.toLowerCase() : undefined),
  upper: (s) => (str(s) ? s.toUpperCase() : undefined),
  trim_space: (s) => (str(s) ? s.trim() : undefined),
  split: (s, d) => (str(s) && str(d) ? s.split(d) : undefined),
  concat: (d, xs) => {
    const items = Array.isArray(xs) ? xs : xs instanceof RegoSet ? xs.values() : undefined
    return str(d) && items?.every(str) ? (items as Array<string>).join(d) : undefined
  },
  sprintf,
  to_number: (
    v
  ) => (num(v) ? v : str(v) && v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : v === null ? 0 : typeof v === "boolean" ? Number(v) : undefined),
  sum: (v) => numbers(v)?.reduce((a, b) => a + b, 0),
  max: (v) => {
    const xs = numbers(v)
    return xs === undefined || xs.length === 0 ? undefined : Math.max(...xs)
  },
  min: (v) => {
    const xs = numbers(v)
    return xs === undefined || xs.length === 0 ? undefined : Math.min(...xs)
  },
  abs: (v) => (num(v) ? Math.abs(v) : undefined),
  round: (v) => (num(v) ? Math.round(v) : undefined),
  "object.get": (o, k, fallback) => {
    if (!isObject(o)) return undefined
    const path = Array.isArray(k) ? k : [k]
    let cur: Value | undefined = o
    for (const p of path) {
      cur = isObject(cur) && str(p) && Object.hasOwn(cur, p) ? cur[p] : undefined
      if (cur === undefined) return fallback
    }
    return cur
  },
  "object.keys": (o) => (isObject(o) ? new RegoSet(Object.keys(o)) : undefined),
  "regex.match": (pattern, s) => {
    if (!str(pattern) || !str(s)) return undefined
    try {
      return new RegExp(pattern).test(s)
    } catch {
      return undefined
    }
  },
  is_string: (v) => str(v),
  is_number: (v) => num(v),
  is_boolean: (v) => typeof v === "boolean",
  is_array: (v) => Array.isArray(v),
  is_object: (v) => isObject(v),
  is_set: (v) => v instanceof RegoSet,
  is_null: (v) => v === null
}
