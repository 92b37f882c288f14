/**
 * A run's parameters checked against the workflow's parameter schema before anything runs: every declared
 * parameter's type, pattern, enum and range, required ones present (defaults filled in), nothing undeclared. The
 * orchestrator always adds `TARGET_NAME` / `TARGET_NAMESPACE`; a workflow that does not declare them does not get
 * them. Values become strings, as env vars and PipelineRun params are.
 */
import { Either } from "effect"

/** One declared parameter as the catalog stores it (the workflow document's `spec.parameters[]`). */
export interface ParameterSpec {
  readonly name: string
  readonly type?: string
  readonly required?: boolean
  readonly default?: unknown
  readonly pattern?: string
  readonly enum?: ReadonlyArray<string>
  readonly minimum?: number
  readonly maximum?: number
}

/** The catalog keeps `{ parameters: [...] }` (the original's JSON shape); a bare list is read too. */
export const parameterSchema = (stored: unknown): ReadonlyArray<ParameterSpec> => {
  const list = Array.isArray(stored) ? stored : (stored as { parameters?: unknown } | undefined)?.parameters
  return Array.isArray(list)
    ? list.filter((p): p is ParameterSpec => typeof p === "object" && p !== null && typeof (p as { name?: unknown }).name === "string")
    : []
}

/** Added by the orchestrator to every execution, declared or not. */
const implicit = new Set(["TARGET_NAME", "TARGET_NAMESPACE"])

const asString = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v))

const checkOne = (p: ParameterSpec, value: unknown): string | undefined => {
  const text = asString(value)
  switch (p.type) {
    case "integer":
      if (!/^-?\d+$/.test(text)) return `${p.name} must be an integer, got ${JSON.stringify(text)}`
      break
    case "number":
    case "float":
      if (text.trim() === "" || !Number.isFinite(Number(text))) return `${p.name} must be a number, got ${JSON.stringify(text)}`
      break
    case "boolean":
      if (text !== "true" && text !== "false") return `${p.name} must be true or false, got ${JSON.stringify(text)}`
      break
    case "array":
      if (!Array.isArray(value) && !(text.startsWith("[") && Either.isRight(Either.try(() => JSON.parse(text) as unknown)))) {
        return `${p.name} must be a JSON array, got ${JSON.stringify(text)}`
      }
      break
    default:
      break
  }
  if (p.pattern !== undefined && !new RegExp(p.pattern).test(text)) return `${p.name} does not match ${p.pattern}`
  if (p.enum !== undefined && p.enum.length > 0 && !p.enum.includes(text)) return `${p.name} must be one of ${p.enum.join(", ")}`
  const n = Number(text)
  if (p.minimum !== undefined && n < p.minimum) return `${p.name} must be at least ${p.minimum}`
  if (p.maximum !== undefined && n > p.maximum) return `${p.name} must be at most ${p.maximum}`
  return undefined
}

/** The parameters to pass, or every problem found (one line each). */
export const validateParameters = (
  schema: ReadonlyArray<ParameterSpec>,
  given: Readonly<Record<string, unknown>>
): Either.Either<Readonly<Record<string, string>>, ReadonlyArray<string>> => {
  const problems: Array<string> = []
  const out: Record<string, string> = {}
  const declared = new Set(schema.map((p) => p.name))
  for (const name of Object.keys(given)) {
    if (!declared.has(name) && !implicit.has(name)) problems.push(`${name} is not a parameter of this workflow`)
  }
  for (const p of schema) {
    const value = given[p.name] ?? p.default
    if (value === undefined || value === null || value === "") {
      if (p.required === true) problems.push(`${p.name} is required`)
      continue
    }
    const problem = checkOne(p, value)
    if (problem !== undefined) problems.push(problem)
    else out[p.name] = asString(value)
  }
  return problems.length > 0 ? Either.left(problems) : Either.right(out)
}
