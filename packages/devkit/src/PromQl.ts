/**
 * The dev metrics backend's PromQL: `GET /api/v1/query` and `/api/v1/query_range` answered from seeded series, so
 * the agent's Prometheus tools meet the real wire format locally and in tests. A subset, written here because no
 * kept JavaScript PromQL engine exists: selectors with `=`, `!=`, `=~`, `!~`; `rate`, `increase` and the
 * `*_over_time` functions over a range; the `offset` modifier; `sum`/`avg`/`min`/`max`/`count` with `by`/`without`; arithmetic and
 * comparisons between vectors (one-to-one on the labels without `__name__`) and with scalars. Anything else is a
 * `bad_data` error, as Prometheus answers an unparsable query.
 */

/** One seeded series: a constant `value`, or `values` oldest first, one every `stepSeconds` (default 60), ending now. */
export interface DevSeries {
  /** Includes `__name__`. */
  readonly labels: Readonly<Record<string, string>>
  readonly value?: number
  readonly values?: ReadonlyArray<number>
  readonly stepSeconds?: number
}

type Labels = Readonly<Record<string, string>>
interface Sample {
  readonly labels: Labels
  readonly value: number
}
type Value = { readonly kind: "scalar"; readonly value: number } | { readonly kind: "vector"; readonly samples: ReadonlyArray<Sample> }
type Node =
  | { readonly t: "num"; readonly value: number }
  | {
    readonly t: "sel"
    readonly name?: string
    readonly matchers: ReadonlyArray<readonly [string, string, string]>
    readonly range?: number
    readonly offset?: number
  }
  | { readonly t: "fn"; readonly name: string; readonly arg: Node }
  | { readonly t: "agg"; readonly op: string; readonly by?: ReadonlyArray<string>; readonly without?: ReadonlyArray<string>; readonly arg: Node }
  | { readonly t: "bin"; readonly op: string; readonly left: Node; readonly right: Node }

export class PromQlError extends Error {}

const tokenRe = /\s*(?:(\d+(?:\.\d+)?(?:[smhdw])?)|([A-Za-z_:][\w:]*)|("(?:[^"\\]|\\.)*")|(=~|!~|!=|==|>=|<=|[{}()[\],=+\-*/<>]))/y
const durationSeconds = (d: string) => {
  const unit = d.at(-1)!
  const n = parseFloat(d)
  return unit === "s" ? n : unit === "m" ? n * 60 : unit === "h" ? n * 3600 : unit === "d" ? n * 86400 : unit === "w" ? n * 604800 : n
}

const tokenize = (q: string): Array<string> => {
  const out: Array<string> = []
  tokenRe.lastIndex = 0
  while (tokenRe.lastIndex < q.length) {
    if (/^\s*$/.test(q.slice(tokenRe.lastIndex))) break
    const m = tokenRe.exec(q)
    if (m === null) throw new PromQlError(`unexpected character at position ${tokenRe.lastIndex}`)
    out.push(m[1] ?? m[2] ?? m[3] ?? m[4]!)
  }
  return out
}

const aggregations = new Set(["sum", "avg", "min", "max", "count"])
const rangeFns = new Set(["rate", "increase", "avg_over_time", "max_over_time", "min_over_time", "last_over_time"])
const precedence: Record<string, number> = { "==": 1, "!=": 1, ">": 1, "<": 1, ">=": 1, "<=": 1, "+": 2, "-": 2, "*": 3, "/": 3 }

export const parse = (query: string): Node => {
  const toks = tokenize(query)
  let i = 0
  const peek = () => toks[i]
  const next = () => toks[i++] ?? ""
  const expect = (t: string) => {
    if (next() !== t) throw new PromQlError(`expected "${t}" at token ${i}`)
  }
  const labelList = () => {
    expect("(")
    const names: Array<string> = []
    while (peek() !== ")") {
      names.push(next())
      if (peek() === ",") next()
    }
    expect(")")
    return names
  }
  const selector = (name?: string): Node => {
    const matchers: Array<readonly [string, string, string]> = []
    if (peek() === "{") {
      next()
      while (peek() !== "}") {
        const label = next()
        const op = next()
        const value = next()
        if (!["=", "!=", "=~", "!~"].includes(op) || !value.startsWith("\"")) throw new PromQlError(`bad matcher for ${label}`)
        matchers.push([label, op, JSON.parse(value) as string])
        if (peek() === ",") next()
      }
      expect("}")
    }
    let range: number | undefined
    if (peek() === "[") {
      next()
      range = durationSeconds(next())
      expect("]")
    }
    let offset: number | undefined
    if (peek() === "offset") {
      next()
      offset = durationSeconds(next())
    }
    return {
      t: "sel",
      ...(name === undefined ? {} : { name }),
      matchers,
      ...(range === undefined ? {} : { range }),
      ...(offset === undefined ? {} : { offset })
    }
  }
  const primary = (): Node => {
    const tok = next()
    if (tok === "(") {
      const e = expr(0)
      expect(")")
      return e
    }
    if (/^\d/.test(tok)) return { t: "num", value: parseFloat(tok) }
    if (tok === "{") {
      i--
      return selector()
    }
    if (aggregations.has(tok)) {
      let by: Array<string> | undefined
      let without: Array<string> | undefined
      // The grouping clause may come before or after the argument.
      const grouping = () => {
        const word = peek()
        if (word !== "by" && word !== "without") return
        next()
        if (word === "by") by = labelList()
        else without = labelList()
      }
      grouping()
      expect("(")
      const arg = expr(0)
      expect(")")
      grouping()
      return { t: "agg", op: tok, arg, ...(by === undefined ? {} : { by }), ...(without === undefined ? {} : { without }) }
    }
    if (rangeFns.has(tok)) {
      expect("(")
      const arg = expr(0)
      expect(")")
      if (arg.t !== "sel" || arg.range === undefined) throw new PromQlError(`${tok} expects a range vector`)
      return { t: "fn", name: tok, arg }
    }
    if (/^[A-Za-z_:]/.test(tok)) return selector(tok)
    throw new PromQlError(`unexpected "${tok}"`)
  }
  const expr = (min: number): Node => {
    let left = primary()
    while (peek() !== undefined && (precedence[peek()!] ?? 0) > min) {
      const op = next()
      left = { t: "bin", op, left, right: expr(precedence[op]!) }
    }
    return left
  }
  const tree = expr(0)
  if (i !== toks.length) throw new PromQlError(`unexpected "${toks[i]}"`)
  return tree
}

const matches = (labels: Labels, matchers: ReadonlyArray<readonly [string, string, string]>) =>
  matchers.every(([l, op, v]) => {
    const have = labels[l] ?? ""
    return op === "=" ? have === v : op === "!=" ? have !== v : op === "=~" ? new RegExp(`^(?:${v})$`).test(have) : !new RegExp(`^(?:${v})$`).test(have)
  })

/** A series' samples `[t, v]` within (from, to], from its seeded shape and the current time. */
const samplesOf = (s: DevSeries, from: number, to: number, now: number): Array<readonly [number, number]> => {
  const step = s.stepSeconds ?? 60
  if (s.values === undefined) {
    const out: Array<readonly [number, number]> = []
    for (let t = to; t > from; t -= step) out.unshift([t, s.value ?? 0])
    return out
  }
  const n = s.values.length
  return s.values.map((v, k) => [now - (n - 1 - k) * step, v] as const).filter(([t]) => t > from && t <= to)
}

const withoutName = (labels: Labels): Labels => Object.fromEntries(Object.entries(labels).filter(([k]) => k !== "__name__"))
const key = (labels: Labels) => JSON.stringify(Object.entries(withoutName(labels)).sort())
const lookback = 300

const binary = (op: string, a: number, b: number): number | undefined => {
  switch (op) {
    case "+":
      return a + b
    case "-":
      return a - b
    case "*":
      return a * b
    case "/":
      return a / b
    default: {
      const keep = op === ">" ? a > b : op === "<" ? a < b : op === ">=" ? a >= b : op === "<=" ? a <= b : op === "==" ? a === b : a !== b
      return keep ? a : undefined
    }
  }
}

/** The value of `node` at time `at` (seconds), with `now` the end of the seeded series. */
export const evaluate = (node: Node, series: ReadonlyArray<DevSeries>, at: number, now: number): Value => {
  switch (node.t) {
    case "num":
      return { kind: "scalar", value: node.value }
    case "sel": {
      if (node.range !== undefined) throw new PromQlError("a range vector must be the argument of a function")
      const all = [...node.matchers, ...(node.name === undefined ? [] : [["__name__", "=", node.name] as const])]
      return {
        kind: "vector",
        samples: series.filter((s) => matches(s.labels, all)).flatMap((s) => {
          const t = at - (node.offset ?? 0)
          const last = samplesOf(s, t - lookback, t, now).at(-1)
          return last === undefined ? [] : [{ labels: s.labels, value: last[1] }]
        })
      }
    }
    case "fn": {
      const sel = node.arg as Extract<Node, { t: "sel" }>
      const all = [...sel.matchers, ...(sel.name === undefined ? [] : [["__name__", "=", sel.name] as const])]
      return {
        kind: "vector",
        samples: series.filter((s) => matches(s.labels, all)).flatMap((s) => {
          const t = at - (sel.offset ?? 0)
          const points = samplesOf(s, t - sel.range!, t, now)
          if (points.length === 0) return []
          const vs = points.map(([, v]) => v)
          const span = points.at(-1)![0] - points[0]![0]
          const delta = vs.at(-1)! - vs[0]!
          const value = node.name === "rate" ?
            (span > 0 ? delta / span : 0)
            : node.name === "increase" ?
            delta
            : node.name === "avg_over_time" ?
            vs.reduce((x, y) => x + y, 0) / vs.length
            : node.name === "max_over_time" ?
            Math.max(...vs)
            : node.name === "min_over_time" ?
            Math.min(...vs)
            : vs.at(-1)!
          return [{ labels: withoutName(s.labels), value }]
        })
      }
    }
    case "agg": {
      const arg = evaluate(node.arg, series, at, now)
      if (arg.kind !== "vector") throw new PromQlError(`${node.op} expects a vector`)
      const groups = new Map<string, { labels: Labels; values: Array<number> }>()
      for (const s of arg.samples) {
        const labels = Object.fromEntries(
          Object.entries(withoutName(s.labels)).filter(([k]) =>
            node.by !== undefined ? node.by.includes(k) : node.without !== undefined ? !node.without.includes(k) : false
          )
        )
        const g = groups.get(key(labels)) ?? { labels, values: [] }
        g.values.push(s.value)
        groups.set(key(labels), g)
      }
      const reduce = (vs: Array<number>) =>
        node.op === "sum" ? vs.reduce((a, b) => a + b, 0) : node.op === "avg" ?
          vs.reduce((a, b) => a + b, 0) / vs.length
          : node.op === "max"
          ? Math.max(...vs)
          : node.op === "min"
          ? Math.min(...vs)
          : vs.length
      return { kind: "vector", samples: [...groups.values()].map((g) => ({ labels: g.labels, value: reduce(g.values) })) }
    }
    case "bin": {
      const l = evaluate(node.left, series, at, now)
      const r = evaluate(node.right, series, at, now)
      const arith = !["==", "!=", ">", "<", ">=", "<="].includes(node.op)
      const label = (labels: Labels) => (arith ? withoutName(labels) : labels)
      if (l.kind === "scalar" && r.kind === "scalar") return { kind: "scalar", value: binary(node.op, l.value, r.value) ?? Number.NaN }
      if (l.kind === "vector" && r.kind === "scalar") {
        return {
          kind: "vector",
          samples: l.samples.flatMap((s) => {
            const v = binary(node.op, s.value, r.value)
            return v === undefined ? [] : [{ labels: label(s.labels), value: v }]
          })
        }
      }
      if (l.kind === "scalar" && r.kind === "vector") {
        return {
          kind: "vector",
          samples: r.samples.flatMap((s) => {
            const v = binary(node.op, l.value, s.value)
            return v === undefined ? [] : [{ labels: label(s.labels), value: v }]
          })
        }
      }
      const right = new Map((r as Extract<Value, { kind: "vector" }>).samples.map((s) => [key(s.labels), s.value]))
      return {
        kind: "vector",
        samples: (l as Extract<Value, { kind: "vector" }>).samples.flatMap((s) => {
          const other = right.get(key(s.labels))
          const v = other === undefined ? undefined : binary(node.op, s.value, other)
          return v === undefined ? [] : [{ labels: label(s.labels), value: v }]
        })
      }
    }
  }
}

const text = (v: number) => (Number.isNaN(v) ? "NaN" : String(v))

/** The `data` of an instant query's answer. */
export const instantQuery = (query: string, series: ReadonlyArray<DevSeries>, at: number, now = at) => {
  const v = evaluate(parse(query), series, at, now)
  return v.kind === "scalar"
    ? { resultType: "scalar", result: [at, text(v.value)] }
    : { resultType: "vector", result: v.samples.map((s) => ({ metric: s.labels, value: [at, text(s.value)] })) }
}

/** The `data` of a range query's answer (at most 11 000 steps, as Prometheus allows). */
export const rangeQuery = (query: string, series: ReadonlyArray<DevSeries>, start: number, end: number, step: number, now = end) => {
  if (!(step > 0) || (end - start) / step > 11_000) throw new PromQlError("exceeded maximum resolution of 11,000 points per timeseries")
  const tree = parse(query)
  const out = new Map<string, { metric: Labels; values: Array<[number, string]> }>()
  for (let t = start; t <= end; t += step) {
    const v = evaluate(tree, series, t, now)
    const samples = v.kind === "scalar" ? [{ labels: {}, value: v.value }] : v.samples
    for (const s of samples) {
      const k = JSON.stringify(Object.entries(s.labels).sort())
      const entry = out.get(k) ?? { metric: s.labels, values: [] }
      entry.values.push([t, text(s.value)])
      out.set(k, entry)
    }
  }
  return { resultType: "matrix", result: [...out.values()] }
}
