/**
 * An in-process evaluator of a Rego subset, for the local platform and tests, which have no OPA binary: OPA ships
 * no JavaScript build that evaluates Rego source (its WebAssembly target needs `opa build` to compile each policy,
 * and Microsoft's Regorus publishes no npm package). In a cluster the platform evaluates the same policies with
 * OPA itself; this module is what `devkit/Opa.ts` serves behind OPA's REST API. The supported subset is listed in
 * `Rego/Parser.ts` (syntax) and `Rego/Builtins.ts` (functions); anything else is rejected when the policy is
 * loaded or evaluated, never silently ignored.
 *
 *   const policies = new RegoPolicies()
 *   policies.put("approval.rego", source)                       // RegoSyntaxError / RegoEvalError
 *   policies.evaluate(["approval", "require_approval"], input)  // JSON, or undefined
 */
import type { Module } from "./Rego/Ast.ts"
import { makeQuery, packageTree } from "./Rego/Eval.ts"
import { parseModule } from "./Rego/Parser.ts"
import { toJson, type Value } from "./Rego/Values.ts"

export { RegoSyntaxError } from "./Rego/Lexer.ts"
export { RegoEvalError } from "./Rego/Values.ts"

export class RegoPolicies {
  private modules = new Map<string, Module>()
  private tree = packageTree([])

  /** Adds or replaces the module `id`; nothing changes when it does not parse or conflicts with the others. */
  put(id: string, source: string): void {
    const next = new Map(this.modules).set(id, parseModule(source, id))
    this.tree = packageTree([...next.values()])
    this.modules = next
  }

  remove(id: string): boolean {
    const had = this.modules.delete(id)
    this.tree = packageTree([...this.modules.values()])
    return had
  }

  ids(): ReadonlyArray<string> {
    return [...this.modules.keys()]
  }

  /** The JSON value at `data.<path>` for `input`; undefined when the policy defines none. */
  evaluate(path: ReadonlyArray<string>, input: unknown): unknown {
    const v = makeQuery(this.tree, input as Value | undefined).evaluate(path)
    return v === undefined ? undefined : toJson(v)
  }
}
