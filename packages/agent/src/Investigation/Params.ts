/**
 * Workflow parameters proposed by the model, checked against the workflow's declared schema: required fields,
 * types, regex patterns, enums and numeric ranges. The errors are sentences the model can act on.
 */
import { Option, Schema } from "effect"
import { WorkflowParameter } from "@kubemend/core/domain/Workflow"

export type ParameterSpec = WorkflowParameter

const decodeParameter = Schema.decodeUnknownOption(WorkflowParameter)

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/** JSON Schema `properties` + `required` as parameter specs (catalogs that store the schema form). */
const fromJsonSchema = (schema: Record<string, unknown>): Array<ParameterSpec> => {
  const properties = isRecord(schema["properties"]) ? schema["properties"] : {}
  const required = Array.isArray(schema["required"]) ? (schema["required"] as Array<unknown>) : []
  return Object.entries(properties).flatMap(([name, p]) => {
    if (!isRecord(p)) return []
    const type = p["type"] === "number" ? "number" : p["type"]
    const spec = decodeParameter({
      name,
      type,
      description: typeof p["description"] === "string" ? p["description"] : "",
      required: required.includes(name),
      ...(p["default"] === undefined ? {} : { default: p["default"] }),
      ...(typeof p["pattern"] === "string" ? { pattern: p["pattern"] } : {}),
      ...(Array.isArray(p["enum"]) ? { enum: p["enum"].map(String) } : {}),
      ...(typeof p["minimum"] === "number" ? { minimum: p["minimum"] } : {}),
      ...(typeof p["maximum"] === "number" ? { maximum: p["maximum"] } : {})
    })
    return Option.toArray(spec)
  })
}

/**
 * The parameter list of a catalog record. The catalog stores it as JSON: the list itself, `{ parameters: [...] }`,
 * `{ schema: { parameters: [...] } }`, or a JSON Schema object; unreadable entries are skipped.
 */
export const parameterSpecs = (raw: unknown): Array<ParameterSpec> => {
  if (Array.isArray(raw)) return raw.flatMap((p) => Option.toArray(decodeParameter(p)))
  if (!isRecord(raw)) return []
  if (Array.isArray(raw["parameters"])) return parameterSpecs(raw["parameters"])
  if (isRecord(raw["schema"])) return parameterSpecs(raw["schema"])
  if (isRecord(raw["properties"])) return fromJsonSchema(raw)
  return []
}

const typeError = (spec: ParameterSpec, value: unknown): string | undefined => {
  switch (spec.type) {
    case "string":
      return typeof value === "string" ? undefined : "must be a string"
    case "integer":
      return typeof value === "number" && Number.isInteger(value) ? undefined : "must be an integer"
    case "float":
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? undefined : "must be a number"
    case "boolean":
      return typeof value === "boolean" ? undefined : "must be a boolean (true or false)"
    case "array":
      return Array.isArray(value) ? undefined : "must be an array"
  }
}

const patternError = (spec: ParameterSpec, value: unknown): string | undefined => {
  if (spec.pattern === undefined || typeof value !== "string") return undefined
  try {
    return new RegExp(spec.pattern).test(value) ? undefined : `must match the pattern ${spec.pattern}`
  } catch {
    return undefined
  }
}

/** The parameters the platform fills from the remediation target; the model may omit them, the schema may declare them. */
export const injectedPrefix = "TARGET_RESOURCE_"

export interface InjectionTarget {
  readonly kind: string
  readonly name: string
  readonly namespace?: string
  readonly apiVersion?: string
}

/**
 * What the platform injects for a target: `TARGET_RESOURCE_KIND`, `_NAME`, `_NAMESPACE` (namespaced targets) and
 * `_API_VERSION` (when known).
 */
export const injectedParameters = (t: InjectionTarget): Record<string, string> => ({
  TARGET_RESOURCE_KIND: t.kind,
  TARGET_RESOURCE_NAME: t.name,
  ...(t.namespace === undefined || t.namespace === "" ? {} : { TARGET_RESOURCE_NAMESPACE: t.namespace }),
  ...(t.apiVersion === undefined || t.apiVersion === "" ? {} : { TARGET_RESOURCE_API_VERSION: t.apiVersion })
})

/**
 * The selected parameters: what the model chose, plus the platform's values for the `TARGET_RESOURCE_*` names the
 * workflow declares (over any the model gave for them). Declared defaults are not copied: applying them is the
 * executor's business.
 */
export const selectedParameters = (
  specs: ReadonlyArray<ParameterSpec>,
  chosen: Readonly<Record<string, unknown>>,
  target: InjectionTarget | undefined
) => {
  const declared = new Set(specs.map((s) => s.name))
  const injected = Object.entries(target === undefined ? {} : injectedParameters(target)).filter(([k]) => declared.has(k))
  return { ...chosen, ...Object.fromEntries(injected) }
}

/**
 * Every problem with `parameters`; empty when they satisfy the schema. A required parameter with a declared default
 * may be left out (the executor applies the default). Unknown parameters are errors, except the platform's
 * `TARGET_RESOURCE_*`.
 */
export const validateParameters = (
  specs: ReadonlyArray<ParameterSpec>,
  parameters: Readonly<Record<string, unknown>>
): Array<string> => {
  const errors: Array<string> = []
  for (const spec of specs) {
    const value = parameters[spec.name]
    if (value === undefined || value === null) {
      if (spec.required && spec.default === undefined) errors.push(`${spec.name}: is required`)
      continue
    }
    const problem = typeError(spec, value) ??
      patternError(spec, value) ??
      (spec.enum !== undefined && !spec.enum.includes(String(value)) ? `must be one of ${spec.enum.join(", ")}` : undefined) ??
      (spec.minimum !== undefined && typeof value === "number" && value < spec.minimum ? `must be at least ${spec.minimum}` : undefined) ??
      (spec.maximum !== undefined && typeof value === "number" && value > spec.maximum ? `must be at most ${spec.maximum}` : undefined)
    if (problem !== undefined) errors.push(`${spec.name}: ${problem} (got ${JSON.stringify(value)})`)
  }
  const known = new Set(specs.map((s) => s.name))
  for (const name of Object.keys(parameters)) {
    if (!known.has(name) && !name.startsWith(injectedPrefix)) errors.push(`${name}: is not a parameter of this workflow`)
  }
  return errors
}

/** Declared defaults for parameters left out (the interactive flow's prefill; the autonomous result does not copy them). */
export const withDefaults = (specs: ReadonlyArray<ParameterSpec>, parameters: Readonly<Record<string, unknown>>) => {
  const out: Record<string, unknown> = { ...parameters }
  for (const spec of specs) if (out[spec.name] === undefined && spec.default !== undefined) out[spec.name] = spec.default
  return out
}
