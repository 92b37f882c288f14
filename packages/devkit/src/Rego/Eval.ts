/**
 * Top-down evaluation of the Rego subset: bodies are searched depth first (an unbound variable in brackets, `_`
 * and `some … in` iterate), an undefined or false expression fails its literal, `not` succeeds when its expression
 * has no solution. Rule values are computed once per query; a complete rule whose definitions produce two
 * different values is an error, as in OPA.
 */
import type { Body, Expr, Literal, Module, Rule } from "./Ast.ts"
import { builtins } from "./Builtins.ts"
import { compare, entries, equal, index, RegoEvalError, RegoSet, type Value } from "./Values.ts"

type Env = ReadonlyMap<string, Value | typeof unbound>
type Solutions<A> = Generator<A, void, undefined>

const unbound = Symbol("unbound")

interface PackageNode {
  readonly rules: Map<string, { readonly rule: Rule; readonly module: Module }>
  readonly children: Map<string, PackageNode>
}

const node = (): PackageNode => ({ rules: new Map(), children: new Map() })

/** The package tree of a set of modules (several modules may share a package). */
export const packageTree = (modules: ReadonlyArray<Module>): PackageNode => {
  const root = node()
  for (const m of modules) {
    let at = root
    for (const part of m.packagePath) {
      const next = at.children.get(part) ?? node()
      at.children.set(part, next)
      at = next
    }
    for (const [name, rule] of m.rules) {
      if (at.rules.has(name) && at.rules.get(name)!.module !== m) {
        throw new RegoEvalError(`rule data.${m.packagePath.join(".")}.${name} is defined in two modules`)
      }
      at.rules.set(name, { rule, module: m })
    }
  }
  return root
}

/** One query: `input`, the package tree, and the rule values computed so far. */
export const makeQuery = (root: PackageNode, input: Value | undefined) => {
  const cache = new Map<Rule, Value | undefined>()
  const running = new Set<Rule>()

  const packageAt = (path: ReadonlyArray<string>) => {
    let at: PackageNode | undefined = root
    for (const p of path) at = at?.children.get(p)
    return at
  }

  const ruleValue = (rule: Rule, pkg: PackageNode): Value | undefined => {
    if (cache.has(rule)) return cache.get(rule)
    if (running.has(rule)) throw new RegoEvalError(`rule ${rule.name} depends on itself`)
    running.add(rule)
    try {
      const v = computeRule(rule, pkg)
      cache.set(rule, v)
      return v
    } finally {
      running.delete(rule)
    }
  }

  const computeRule = (rule: Rule, pkg: PackageNode): Value | undefined => {
    const ctx: Ctx = { pkg }
    if (rule.kind === "set") {
      const set = new RegoSet()
      for (const d of rule.definitions) for (const env of body(ctx, d.body, 0, new Map())) for (const [v] of expr(ctx, d.value, env)) set.add(v)
      return set
    }
    if (rule.kind === "object") {
      const out: Record<string, Value> = {}
      for (const d of rule.definitions) {
        for (const env of body(ctx, d.body, 0, new Map())) {
          for (const [k, env2] of expr(ctx, d.key!, env)) {
            for (const [v] of expr(ctx, d.value, env2)) {
              const key = typeof k === "string" ? k : JSON.stringify(k)
              if (Object.hasOwn(out, key) && !equal(out[key]!, v)) throw new RegoEvalError(`object rule ${rule.name} has two values for key ${key}`)
              out[key] = v
            }
          }
        }
      }
      return out
    }
    const values: Array<Value> = []
    const collect = (b: Body, value: Expr) => {
      let found = false
      for (const env of body(ctx, b, 0, new Map())) {
        for (const [v] of expr(ctx, value, env)) {
          found = true
          if (!values.some((x) => equal(x, v))) values.push(v)
        }
      }
      return found
    }
    for (const d of rule.definitions) {
      if (collect(d.body, d.value)) continue
      for (const branch of d.orElse) if (collect(branch.body, branch.value)) break
    }
    if (values.length > 1) throw new RegoEvalError(`complete rule ${rule.name} produced more than one value`)
    if (values.length === 1) return values[0]
    if (rule.defaultValue === undefined) return undefined
    for (const [v] of expr(ctx, rule.defaultValue, new Map())) return v
    return undefined
  }

  /** The document under `data.<path>`: a rule's value, or a package's rules (and subpackages) as an object. */
  const document = (at: PackageNode): Value => {
    const out: Record<string, Value> = {}
    for (const [name, { rule }] of at.rules) {
      const v = ruleValue(rule, at)
      if (v !== undefined) out[name] = v
    }
    for (const [name, child] of at.children) out[name] = document(child)
    return out
  }

  interface Ctx {
    readonly pkg: PackageNode
  }

  const isIterationVar = (ctx: Ctx, e: Expr, env: Env): e is { type: "var"; name: string } =>
    e.type === "var" &&
    (e.name === "_" || env.get(e.name) === unbound || (!env.has(e.name) && !ctx.pkg.rules.has(e.name) && e.name !== "input" && e.name !== "data"))

  const bind = (env: Env, name: string, v: Value): Env => (name === "_" ? env : new Map(env).set(name, v))

  function* walk(ctx: Ctx, base: Value | undefined, path: ReadonlyArray<Expr>, i: number, env: Env): Solutions<[Value, Env]> {
    if (base === undefined) return
    if (i === path.length) {
      yield [base, env]
      return
    }
    const step = path[i]!
    if (isIterationVar(ctx, step, env)) {
      for (const [k, v] of entries(base)) yield* walk(ctx, v, path, i + 1, bind(env, step.name, k))
      return
    }
    for (const [k, env2] of expr(ctx, step, env)) yield* walk(ctx, index(base, k), path, i + 1, env2)
  }

  /** `data.…`: package segments first, then the rule's value walked by the rest of the path. */
  function* dataRef(ctx: Ctx, path: ReadonlyArray<Expr>, env: Env): Solutions<[Value, Env]> {
    let at = root
    for (let i = 0; i < path.length; i++) {
      const step = path[i]!
      if (step.type !== "scalar" || typeof step.value !== "string") throw new RegoEvalError("data references must name packages and rules")
      const rule = at.rules.get(step.value)
      if (rule !== undefined) {
        yield* walk(ctx, ruleValue(rule.rule, at), path, i + 1, env)
        return
      }
      const child = at.children.get(step.value)
      if (child === undefined) return
      at = child
    }
    yield [document(at), env]
  }

  function* variable(ctx: Ctx, name: string, env: Env): Solutions<Value> {
    const local = env.get(name)
    if (local !== undefined && local !== unbound) {
      yield local
      return
    }
    if (name === "input") {
      if (input !== undefined) yield input
      return
    }
    if (name === "data") {
      yield document(root)
      return
    }
    const rule = ctx.pkg.rules.get(name)
    if (rule === undefined) throw new RegoEvalError(`var ${name} is unsafe (not bound, not a rule of this package)`)
    const v = ruleValue(rule.rule, ctx.pkg)
    if (v !== undefined) yield v
  }

  function* all(ctx: Ctx, items: ReadonlyArray<Expr>, i: number, env: Env, acc: Array<Value>): Solutions<[Array<Value>, Env]> {
    if (i === items.length) {
      yield [acc, env]
      return
    }
    for (const [v, env2] of expr(ctx, items[i]!, env)) yield* all(ctx, items, i + 1, env2, [...acc, v])
  }

  function* expr(ctx: Ctx, e: Expr, env: Env): Solutions<[Value, Env]> {
    switch (e.type) {
      case "scalar":
        yield [e.value, env]
        return
      case "var":
        for (const v of variable(ctx, e.name, env)) yield [v, env]
        return
      case "ref":
        if (e.head === "data" && !env.has("data")) {
          yield* dataRef(ctx, e.path, env)
          return
        }
        for (const base of variable(ctx, e.head, env)) yield* walk(ctx, base, e.path, 0, env)
        return
      case "array":
        for (const [vs, env2] of all(ctx, e.items, 0, env, [])) yield [vs, env2]
        return
      case "set":
        for (const [vs, env2] of all(ctx, e.items, 0, env, [])) yield [new RegoSet(vs), env2]
        return
      case "object":
        for (const [vs, env2] of all(ctx, e.entries.flat(), 0, env, [])) {
          const o: Record<string, Value> = {}
          for (let i = 0; i < vs.length; i += 2) {
            const k = vs[i]!
            o[typeof k === "string" ? k : JSON.stringify(k)] = vs[i + 1]!
          }
          yield [o, env2]
        }
        return
      case "call": {
        const f = builtins[e.name]
        if (f === undefined) throw new RegoEvalError(`function ${e.name} is not supported by this evaluator`)
        for (const [args, env2] of all(ctx, e.args, 0, env, [])) {
          const v = f(...args)
          if (v !== undefined) yield [v, env2]
        }
        return
      }
      case "compr": {
        const heads: Array<Value> = []
        for (const env2 of body(ctx, e.body, 0, env)) for (const [v] of expr(ctx, e.head, env2)) heads.push(v)
        yield [e.kind === "set" ? new RegoSet(heads) : heads, env]
        return
      }
      case "binary":
        for (const [l, env1] of expr(ctx, e.left, env)) {
          for (const [r, env2] of expr(ctx, e.right, env1)) {
            const v = binary(e.op, l, r)
            if (v !== undefined) yield [v, env2]
          }
        }
    }
  }

  function* literal(ctx: Ctx, lit: Literal, env: Env): Solutions<Env> {
    switch (lit.type) {
      case "expr":
        for (const [v, env2] of expr(ctx, lit.expr, env)) if (v !== false) yield env2
        return
      case "not": {
        for (const [v] of expr(ctx, lit.expr, env)) if (v !== false) return
        yield env
        return
      }
      case "someDecl":
        yield new Map([...env, ...lit.names.map((n) => [n, unbound] as const)])
        return
      case "someIn":
        for (const [coll, env2] of expr(ctx, lit.collection, env)) {
          for (const [k, v] of entries(coll)) {
            const withValue = bind(env2, lit.value, v)
            yield lit.key === undefined ? withValue : bind(withValue, lit.key, k)
          }
        }
        return
      case "assign": {
        const target = lit.left.type === "var" && (lit.op === ":=" || isIterationVar(ctx, lit.left, env)) ? lit.left.name : undefined
        if (target !== undefined) {
          for (const [v, env2] of expr(ctx, lit.right, env)) yield bind(env2, target, v)
          return
        }
        if (lit.op === ":=") throw new RegoEvalError(":= assigns to a variable only")
        const reverse = lit.right.type === "var" && isIterationVar(ctx, lit.right, env) ? lit.right.name : undefined
        for (const [l, env1] of expr(ctx, lit.left, env)) {
          if (reverse !== undefined) yield bind(env1, reverse, l)
          else for (const [r, env2] of expr(ctx, lit.right, env1)) if (equal(l, r)) yield env2
        }
      }
    }
  }

  function* body(ctx: Ctx, b: Body, i: number, env: Env): Solutions<Env> {
    if (i === b.length) {
      yield env
      return
    }
    for (const env2 of literal(ctx, b[i]!, env)) yield* body(ctx, b, i + 1, env2)
  }

  return {
    /** The value at `data.<path>`; undefined when it has none. */
    evaluate: (path: ReadonlyArray<string>): Value | undefined => {
      const ctx: Ctx = { pkg: packageAt(path) ?? root }
      for (const [v] of dataRef(ctx, path.map((p) => ({ type: "scalar", value: p })), new Map())) return v
      return undefined
    }
  }
}

const binary = (op: string, l: Value, r: Value): Value | undefined => {
  switch (op) {
    case "==":
      return equal(l, r)
    case "!=":
      return !equal(l, r)
    case "<":
      return compare(l, r) < 0
    case "<=":
      return compare(l, r) <= 0
    case ">":
      return compare(l, r) > 0
    case ">=":
      return compare(l, r) >= 0
    case "in":
      return entries(r).some(([, v]) => equal(v, l))
    case "&":
      return l instanceof RegoSet && r instanceof RegoSet ? new RegoSet(l.values().filter((v) => r.has(v))) : undefined
  }
  if (typeof l !== "number" || typeof r !== "number") return undefined
  switch (op) {
    case "+":
      return l + r
    case "-":
      return l - r
    case "*":
      return l * r
    case "/":
      return r === 0 ? undefined : l / r
    case "%":
      return r === 0 || !Number.isInteger(l) || !Number.isInteger(r) ? undefined : l % r
  }
  return undefined
}
