/** The syntax tree of the Rego subset (see `Parser.ts`). */

export type Expr =
  | { readonly type: "scalar"; readonly value: string | number | boolean | null }
  | { readonly type: "var"; readonly name: string }
  | { readonly type: "ref"; readonly head: string; readonly path: ReadonlyArray<Expr> }
  | { readonly type: "array"; readonly items: ReadonlyArray<Expr> }
  | { readonly type: "set"; readonly items: ReadonlyArray<Expr> }
  | { readonly type: "object"; readonly entries: ReadonlyArray<readonly [Expr, Expr]> }
  | { readonly type: "call"; readonly name: string; readonly args: ReadonlyArray<Expr> }
  | { readonly type: "binary"; readonly op: string; readonly left: Expr; readonly right: Expr }
  | { readonly type: "compr"; readonly kind: "array" | "set"; readonly head: Expr; readonly body: Body }

export type Literal =
  | { readonly type: "expr"; readonly expr: Expr }
  | { readonly type: "not"; readonly expr: Expr }
  /** `x := e` (declares x) and `a = b` (unification: binds an unbound side, else compares). */
  | { readonly type: "assign"; readonly op: ":=" | "="; readonly left: Expr; readonly right: Expr }
  /** `some k, v in coll` (`key` absent for `some v in coll`). */
  | { readonly type: "someIn"; readonly key?: string; readonly value: string; readonly collection: Expr }
  /** `some x, y`: declares iteration variables. */
  | { readonly type: "someDecl"; readonly names: ReadonlyArray<string> }

export type Body = ReadonlyArray<Literal>

export interface Definition {
  /** Empty for a rule with no body (always true). */
  readonly body: Body
  readonly value: Expr
  /** Tried in order when the body (and the previous else branches) produced nothing. */
  readonly orElse: ReadonlyArray<{ readonly body: Body; readonly value: Expr }>
}

export interface Rule {
  readonly name: string
  /** `complete`: one value; `set`: `name contains term`; `object`: `name[key] := value`. */
  readonly kind: "complete" | "set" | "object"
  readonly definitions: Array<Definition & { readonly key?: Expr }>
  readonly defaultValue?: Expr
}

export interface Module {
  readonly file: string
  readonly packagePath: ReadonlyArray<string>
  readonly rules: ReadonlyMap<string, Rule>
}
