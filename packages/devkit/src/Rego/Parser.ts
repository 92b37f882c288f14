/**
 * Parser of the Rego subset our policies use (OPA has no JavaScript build that evaluates Rego source; see
 * `Rego.ts`). Supported, in v1 syntax (and v0's `name = v { … }`):
 * - `package a.b`; `import rego.v1` / `import future.keywords…` (accepted, ignored);
 * - rules: `default name := term`; `name := term if { … }`, `name := term if literal`, `name if { … }`,
 *   `name := term` (constant); `name contains term if { … }` (partial sets); `name[key] := value if { … }`
 *   (partial objects); `else := term if { … }` chains; several definitions of one name (their values must agree);
 * - body literals, separated by newlines or `;`: expressions, `not expr`, `x := expr`, `a = b`, `some x in coll`,
 *   `some k, v in coll`, `some x` (declares an iteration variable used in brackets, as does `_`);
 * - terms: strings ("…" and `…`), numbers, true/false/null, arrays, objects, sets, refs (`input.a.b`, `x["k"]`,
 *   `xs[i]`, `data.pkg.rule`), calls of the builtins in `Builtins.ts`, `[t | body]` and `{t | body}` comprehensions;
 * - operators: `== != < <= > >=`, `in`, `+ - * / %`, `&` (set intersection), parentheses.
 * Not supported (a policy using them is rejected with a parse error): user functions, `every`, `with`,
 * object comprehensions, `|` as set union, `import data…` aliases, metadata annotations' semantics (comments are ignored).
 */
import type { Body, Definition, Expr, Literal, Module, Rule } from "./Ast.ts"
import { RegoSyntaxError, type Token, tokenize } from "./Lexer.ts"

const comparisons = new Set(["==", "!=", "<", "<=", ">", ">="])

export const parseModule = (source: string, file: string): Module => {
  const tokens = tokenize(source, file)
  let pos = 0
  const peek = (offset = 0) => tokens[Math.min(pos + offset, tokens.length - 1)]!
  const fail = (detail: string, t: Token = peek()): never => {
    throw new RegoSyntaxError(file, t.line, t.col, detail)
  }
  const isOp = (text: string, t = peek()) => t.kind === "op" && t.text === text
  const isWord = (text: string, t = peek()) => t.kind === "ident" && t.text === text
  const skipNl = () => {
    while (peek().kind === "nl" || isOp(";")) pos++
  }
  const expectOp = (text: string) => (isOp(text) ? tokens[pos++]! : fail(`expected "${text}", found "${peek().text}"`))
  const ident = () => (peek().kind === "ident" ? tokens[pos++]!.text : fail(`expected a name, found "${peek().text}"`))

  const refPath = () => {
    const parts = [ident()]
    while (isOp(".")) {
      pos++
      parts.push(ident())
    }
    return parts
  }

  /** Inside brackets newlines are not separators. */
  const inside = <A>(f: () => A): A => {
    skipNlOnly()
    const a = f()
    skipNlOnly()
    return a
  }
  const skipNlOnly = () => {
    while (peek().kind === "nl") pos++
  }

  const list = (close: string, item: () => Expr): Array<Expr> => {
    const items: Array<Expr> = []
    skipNlOnly()
    while (!isOp(close)) {
      items.push(inside(item))
      if (!isOp(",")) break
      pos++
      skipNlOnly()
    }
    expectOp(close)
    return items
  }

  const primary = (): Expr => {
    const t = peek()
    if (t.kind === "string" || t.kind === "number") {
      pos++
      return { type: "scalar", value: t.value! }
    }
    if (isOp("-") && peek(1).kind === "number") {
      pos++
      return { type: "scalar", value: -(tokens[pos++]!.value as number) }
    }
    if (isOp("(")) {
      pos++
      const e = inside(expr)
      expectOp(")")
      return e
    }
    if (isOp("[")) {
      pos++
      skipNlOnly()
      if (isOp("]")) {
        pos++
        return { type: "array", items: [] }
      }
      const first = inside(expr)
      if (isOp("|")) return comprehension("array", first, "]")
      const rest = isOp(",") ? (pos++, list("]", expr)) : (expectOp("]"), [])
      return { type: "array", items: [first, ...rest] }
    }
    if (isOp("{")) return braces()
    if (t.kind === "ident") {
      if (t.text === "true" || t.text === "false") {
        pos++
        return { type: "scalar", value: t.text === "true" }
      }
      if (t.text === "null") {
        pos++
        return { type: "scalar", value: null }
      }
      if (["every", "with", "import", "package"].includes(t.text)) fail(`"${t.text}" is not supported here`)
      return refOrCall()
    }
    return fail(`unexpected "${t.text}"`)
  }

  const comprehension = (kind: "array" | "set", head: Expr, close: string): Expr => {
    expectOp("|")
    const body = literals(close)
    return { type: "compr", kind, head, body }
  }

  /** `{}` (empty object), objects, sets and set comprehensions. */
  const braces = (): Expr => {
    pos++
    skipNlOnly()
    if (isOp("}")) {
      pos++
      return { type: "object", entries: [] }
    }
    const first = inside(expr)
    if (isOp("|")) return comprehension("set", first, "}")
    if (isOp(":")) {
      pos++
      const entries: Array<readonly [Expr, Expr]> = [[first, inside(expr)]]
      while (isOp(",")) {
        pos++
        skipNlOnly()
        if (isOp("}")) break
        const k = inside(expr)
        expectOp(":")
        entries.push([k, inside(expr)])
      }
      expectOp("}")
      return { type: "object", entries }
    }
    const rest = isOp(",") ? (pos++, list("}", expr)) : (expectOp("}"), [])
    return { type: "set", items: [first, ...rest] }
  }

  const refOrCall = (): Expr => {
    const head = ident()
    const path: Array<Expr> = []
    for (;;) {
      if (isOp(".") && peek(1).kind === "ident") {
        pos++
        path.push({ type: "scalar", value: ident() })
      } else if (isOp("[")) {
        pos++
        path.push(inside(expr))
        expectOp("]")
      } else break
    }
    if (isOp("(")) {
      const dotted = [head, ...path.map((p) => (p.type === "scalar" ? String(p.value) : fail("a call needs a plain name")))]
      pos++
      return { type: "call", name: dotted.join("."), args: list(")", expr) }
    }
    return path.length === 0 ? { type: "var", name: head } : { type: "ref", head, path }
  }

  const binaryLevel = (ops: ReadonlyArray<string>, next: () => Expr, words: ReadonlyArray<string> = []) => (): Expr => {
    let left = next()
    for (;;) {
      const t = peek()
      const op = t.kind === "op" && ops.includes(t.text) ? t.text : t.kind === "ident" && words.includes(t.text) ? t.text : undefined
      if (op === undefined) return left
      pos++
      skipNlOnly()
      left = { type: "binary", op, left, right: next() }
    }
  }
  const multiplicative = binaryLevel(["*", "/", "%"], primary)
  const additive = binaryLevel(["+", "-"], multiplicative)
  // `|` is left to comprehensions (`[x | body]`); `&` intersects sets.
  const setOps = binaryLevel(["&"], additive)
  const membership = binaryLevel([], setOps, ["in"])
  const comparison = binaryLevel([...comparisons], membership)
  function expr(): Expr {
    return comparison()
  }

  const literal = (): Literal => {
    if (isWord("not")) {
      pos++
      return { type: "not", expr: expr() }
    }
    if (isWord("some")) {
      pos++
      const names = [ident()]
      while (isOp(",")) {
        pos++
        names.push(ident())
      }
      if (isWord("in")) {
        pos++
        if (names.length > 2) fail("some takes at most two variables before in")
        const collection = expr()
        return names.length === 2
          ? { type: "someIn", key: names[0]!, value: names[1]!, collection }
          : { type: "someIn", value: names[0]!, collection }
      }
      return { type: "someDecl", names }
    }
    const left = expr()
    if (isOp(":=") || isOp("=")) {
      const op = tokens[pos++]!.text as ":=" | "="
      return { type: "assign", op, left, right: expr() }
    }
    return { type: "expr", expr: left }
  }

  /** Literals up to `close` (already past the opening bracket). */
  const literals = (close: string): Body => {
    const body: Array<Literal> = []
    skipNl()
    while (!isOp(close)) {
      body.push(literal())
      if (!isOp(close) && peek().kind !== "nl" && !isOp(";")) fail(`expected a new line or "${close}", found "${peek().text}"`)
      skipNl()
    }
    expectOp(close)
    return body
  }

  /** `if { … }`, `if literal`, or a v0 `{ … }` body; empty when the rule has none. */
  const ruleBody = (): Body => {
    if (isWord("if")) {
      pos++
      if (isOp("{")) {
        pos++
        return literals("}")
      }
      return [literal()]
    }
    if (isOp("{")) {
      pos++
      return literals("}")
    }
    return []
  }

  const assigned = (): Expr | undefined => {
    if (!isOp(":=") && !isOp("=")) return undefined
    pos++
    return expr()
  }

  const rules = new Map<string, Rule>()
  const ruleNamed = (name: string, kind: Rule["kind"], at: Token): Rule => {
    const existing = rules.get(name)
    if (existing !== undefined && existing.kind !== kind) fail(`rule ${name} is defined with two different kinds`, at)
    const rule: Rule = existing ?? { name, kind, definitions: [] }
    rules.set(name, rule)
    return rule
  }

  const statement = () => {
    const at = peek()
    if (isWord("import")) {
      pos++
      refPath()
      if (isWord("as")) {
        pos++
        ident()
      }
      return
    }
    if (isWord("default")) {
      pos++
      const name = ident()
      const value = assigned() ?? fail("default rules need a value")
      const rule = ruleNamed(name, "complete", at)
      rules.set(name, { ...rule, defaultValue: value })
      return
    }
    const name = ident()
    if (isOp("(")) fail("functions are not supported by this evaluator")
    if (isWord("contains")) {
      pos++
      const value = expr()
      ruleNamed(name, "set", at).definitions.push({ body: ruleBody(), value, orElse: [] })
      return
    }
    if (isOp("[")) {
      pos++
      const key = inside(expr)
      expectOp("]")
      const value = assigned() ?? { type: "scalar", value: true }
      ruleNamed(name, "object", at).definitions.push({ key, body: ruleBody(), value, orElse: [] })
      return
    }
    const value: Expr = assigned() ?? { type: "scalar", value: true }
    const body = ruleBody()
    const orElse: Array<Definition["orElse"][number]> = []
    for (;;) {
      const before = pos
      skipNlOnly()
      if (!isWord("else")) {
        pos = before
        break
      }
      pos++
      const v: Expr = assigned() ?? { type: "scalar", value: true }
      orElse.push({ value: v, body: ruleBody() })
    }
    ruleNamed(name, "complete", at).definitions.push({ body, value, orElse })
  }

  skipNl()
  if (!isWord("package")) fail("a module starts with a package declaration")
  pos++
  const packagePath = refPath()
  skipNl()
  while (peek().kind !== "eof") {
    statement()
    if (peek().kind !== "eof" && peek().kind !== "nl" && !isOp(";")) fail(`unexpected "${peek().text}" after a rule`)
    skipNl()
  }
  return { file, packagePath, rules }
}
