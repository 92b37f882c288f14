/**
 * CRD structural-schema handling for stored custom resources: defaulting, pruning of unknown fields and validation of
 * the common OpenAPI v3 keywords. Not covered: CEL (`x-kubernetes-validations`), `format`, list-type uniqueness,
 * `not`/`oneOf`, and minProperties/maxProperties — a modest subset that catches what tests need.
 */
import type { StatusCause } from "./Status.ts"

export interface JsonSchema {
  readonly type?: string
  readonly nullable?: boolean
  readonly properties?: Readonly<Record<string, JsonSchema>>
  readonly additionalProperties?: boolean | JsonSchema
  readonly items?: JsonSchema
  readonly required?: ReadonlyArray<string>
  readonly enum?: ReadonlyArray<unknown>
  readonly minimum?: number
  readonly maximum?: number
  readonly exclusiveMinimum?: boolean
  readonly exclusiveMaximum?: boolean
  readonly minLength?: number
  readonly maxLength?: number
  readonly pattern?: string
  readonly minItems?: number
  readonly maxItems?: number
  readonly default?: unknown
  readonly anyOf?: ReadonlyArray<JsonSchema>
  readonly allOf?: ReadonlyArray<JsonSchema>
  readonly "x-kubernetes-preserve-unknown-fields"?: boolean
  readonly "x-kubernetes-int-or-string"?: boolean
}

type Obj = Record<string, unknown>
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v)
const rootKeys = new Set(["apiVersion", "kind", "metadata"])

/** Fills defaults and drops fields the schema does not know, in place (the object is the server's own copy). */
export const defaultAndPrune = (value: unknown, schema: JsonSchema, root = true): void => {
  if (Array.isArray(value)) {
    if (schema.items) { for (const item of value) defaultAndPrune(item, schema.items, false) }
    return
  }
  if (!isObject(value)) return
  const props = schema.properties ?? {}
  for (const [key, sub] of Object.entries(props)) {
    if (value[key] === undefined && sub.default !== undefined) value[key] = structuredClone(sub.default)
  }
  const additional = schema.additionalProperties
  const preserve = schema["x-kubernetes-preserve-unknown-fields"] === true
  for (const key of Object.keys(value)) {
    if (root && rootKeys.has(key)) continue
    const sub = props[key] ?? (typeof additional === "object" ? additional : undefined)
    if (sub) defaultAndPrune(value[key], sub, false)
    else if (!preserve && additional !== true) delete value[key]
  }
}

const typeOf = (v: unknown): string => v === null ? "null" : Array.isArray(v) ? "array" : Number.isInteger(v) ? "integer" : typeof v

const typeMatches = (schema: JsonSchema, v: unknown): boolean => {
  if (schema["x-kubernetes-int-or-string"] === true) return typeof v === "string" || Number.isInteger(v)
  if (schema.type === undefined) return true
  const actual = typeOf(v)
  return actual === schema.type || (schema.type === "number" && actual === "integer")
}

const show = (v: unknown): string => JSON.stringify(v)

const child = (path: string, key: string) => (path === "" ? key : `${path}.${key}`)

const invalidCause = (field: string, v: unknown, detail: string): StatusCause => ({
  reason: "FieldValueInvalid",
  message: `Invalid value: ${show(v)}: ${detail}`,
  field
})

const scalarChecks = (schema: JsonSchema, v: unknown, path: string): Array<StatusCause> => {
  const causes: Array<StatusCause> = []
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(v))) {
    causes.push({
      reason: "FieldValueNotSupported",
      message: `Unsupported value: ${show(v)}: supported values: ${schema.enum.map(show).join(", ")}`,
      field: path
    })
  }
  if (typeof v === "number") {
    if (schema.minimum !== undefined && (schema.exclusiveMinimum ? v <= schema.minimum : v < schema.minimum)) {
      const op = schema.exclusiveMinimum ? "greater than" : "greater than or equal to"
      causes.push(invalidCause(path, v, `${path} in body should be ${op} ${schema.minimum}`))
    }
    if (schema.maximum !== undefined && (schema.exclusiveMaximum ? v >= schema.maximum : v > schema.maximum)) {
      const op = schema.exclusiveMaximum ? "less than" : "less than or equal to"
      causes.push(invalidCause(path, v, `${path} in body should be ${op} ${schema.maximum}`))
    }
  }
  if (typeof v === "string") {
    const length = [...v].length
    if (schema.minLength !== undefined && length < schema.minLength) {
      causes.push(invalidCause(path, v, `${path} in body should be at least ${schema.minLength} chars long`))
    }
    if (schema.maxLength !== undefined && length > schema.maxLength) {
      causes.push({ reason: "FieldValueTooLong", message: `Too long: may not be more than ${schema.maxLength} bytes`, field: path })
    }
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, "u").test(v)) {
      causes.push(invalidCause(path, v, `${path} in body should match '${schema.pattern}'`))
    }
  }
  return causes
}

/** Validation errors as `details.causes` of a 422, with field paths like `spec.items[0].name`. */
export const validate = (v: unknown, schema: JsonSchema, path = "", root = true): Array<StatusCause> => {
  if (v === null && schema.nullable === true) return []
  if (!typeMatches(schema, v)) {
    const type = schema["x-kubernetes-int-or-string"] ? "integer or string" : schema.type
    return [invalidCause(path, v, `${path} in body must be of type ${type}: ${show(typeOf(v))}`)]
  }
  const causes = scalarChecks(schema, v, path)
  for (const sub of schema.allOf ?? []) causes.push(...validate(v, sub, path, root))
  if (schema.anyOf && !schema.anyOf.some((sub) => validate(v, sub, path, root).length === 0)) {
    causes.push(invalidCause(path, v, `${path} in body must match at least one schema in anyOf`))
  }
  if (Array.isArray(v)) {
    if (schema.minItems !== undefined && v.length < schema.minItems) {
      causes.push(invalidCause(path, v, `${path} in body should have at least ${schema.minItems} items`))
    }
    if (schema.maxItems !== undefined && v.length > schema.maxItems) {
      causes.push({ reason: "FieldValueTooMany", message: `Too many: ${v.length}: must have at most ${schema.maxItems} items`, field: path })
    }
    if (schema.items) v.forEach((item, i) => causes.push(...validate(item, schema.items!, `${path}[${i}]`, false)))
  }
  if (isObject(v)) {
    for (const key of schema.required ?? []) {
      if (v[key] === undefined) causes.push({ reason: "FieldValueRequired", message: "Required value", field: child(path, key) })
    }
    const additional = schema.additionalProperties
    for (const [key, value] of Object.entries(v)) {
      if (root && rootKeys.has(key)) continue
      const sub = schema.properties?.[key] ?? (typeof additional === "object" ? additional : undefined)
      if (sub) causes.push(...validate(value, sub, child(path, key), false))
    }
  }
  return causes
}
