/**
 * Validation issues with a dotted field path (`spec.apiFrontend.shutdown.drainSeconds`, array items as `[i]`),
 * turned from Schema parse errors. Used for the platform CR's `Error` condition and for config errors.
 */
import { ParseResult, Schema } from "effect"

export const ValidationIssue = Schema.Struct({ path: Schema.String, message: Schema.String })
export interface ValidationIssue extends Schema.Schema.Type<typeof ValidationIssue> {}

/** `spec` + `["agent", "llm", 0, "name"]` -> `spec.agent.llm[0].name`. */
export const formatPath = (root: string, path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((acc, key) => {
    if (typeof key === "number") return `${acc}[${key}]`
    const name = String(key)
    return acc === "" ? name : `${acc}.${name}`
  }, root)

/**
 * One issue per (path, message), in the order Schema reported them; "is missing" reads "is required". A nullable
 * or optional union reports its `null` / `undefined` member as well ("Expected null, actual 5"); that noise is
 * dropped when the same path has a real issue.
 */
export const issuesFromParseError = (error: ParseResult.ParseError, root = ""): Array<ValidationIssue> => {
  const seen = new Set<string>()
  const all: Array<ValidationIssue> = []
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const path = formatPath(root, issue.path)
    const message = issue._tag === "Missing" ? "is required" : issue.message
    const key = `${path}\u0000${message}`
    if (!seen.has(key)) {
      seen.add(key)
      all.push({ path, message })
    }
  }
  const isNoise = (i: ValidationIssue) => /^Expected (null|undefined), actual /.test(i.message)
  return all.filter((i) => !isNoise(i) || all.every((o) => o === i || o.path !== i.path || isNoise(o)))
}

/** `path: message; path: message` for a log line or a condition message. */
export const formatIssues = (issues: ReadonlyArray<ValidationIssue>): string =>
  issues.map((i) => (i.path === "" ? i.message : `${i.path}: ${i.message}`)).join("; ")
