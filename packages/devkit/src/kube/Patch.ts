/** JSON patch (RFC 6902) over plain JSON values; JSON merge patch (RFC 7386) is core's K8s/MergePatch.ts. */
import { ApiError, badRequest } from "./Status.ts"

type Json = unknown
type JsonObject = Record<string, Json>

const isObject = (v: Json): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v)

export const clone = <A>(value: A): A => structuredClone(value)

export { mergePatch } from "@kubemend/core/K8s/MergePatch"

export const deepEqual = (a: Json, b: Json): boolean => {
  if (a === b) return true
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]))
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a)
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]))
  }
  return false
}

export interface JsonPatchOp {
  readonly op: string
  readonly path: string
  readonly from?: string
  readonly value?: Json
}

/** The apiserver answers a patch that cannot be applied with 422 and the library's message. */
const unprocessable = (message: string) => new ApiError(422, "Invalid", message)

const parsePointer = (pointer: string): Array<string> => {
  if (pointer === "") return []
  if (!pointer.startsWith("/")) throw unprocessable(`invalid JSON pointer "${pointer}"`)
  return pointer.slice(1).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
}

const arrayIndex = (arr: ReadonlyArray<Json>, token: string, forInsert: boolean): number => {
  if (forInsert && token === "-") return arr.length
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw unprocessable(`invalid array index "${token}"`)
  const i = Number(token)
  if (i > arr.length || (!forInsert && i === arr.length)) throw unprocessable(`array index ${i} out of bounds`)
  return i
}

/** Walks to the parent container of the pointer's last token (containers along the way are copies of `doc`). */
const parentOf = (doc: Json, tokens: ReadonlyArray<string>, path: string): Json => {
  let current = doc
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(current)) current = current[arrayIndex(current, token, false)]
    else if (isObject(current) && Object.hasOwn(current, token)) current = current[token]
    else throw unprocessable(`doc is missing path: "${path}"`)
  }
  return current
}

const get = (doc: Json, path: string): Json => {
  const tokens = parsePointer(path)
  if (tokens.length === 0) return doc
  const parent = parentOf(doc, tokens, path)
  const last = tokens[tokens.length - 1]!
  if (Array.isArray(parent)) return parent[arrayIndex(parent, last, false)]
  if (isObject(parent) && Object.hasOwn(parent, last)) return parent[last]
  throw unprocessable(`doc is missing path: "${path}"`)
}

const remove = (doc: Json, path: string): Json => {
  const tokens = parsePointer(path)
  if (tokens.length === 0) throw unprocessable("cannot remove the whole document")
  const parent = parentOf(doc, tokens, path)
  const last = tokens[tokens.length - 1]!
  if (Array.isArray(parent)) return parent.splice(arrayIndex(parent, last, false), 1)[0]
  if (isObject(parent) && Object.hasOwn(parent, last)) {
    const old = parent[last]
    delete parent[last]
    return old
  }
  throw unprocessable(`doc is missing path: "${path}"`)
}

const add = (doc: Json, path: string, value: Json, replace: boolean): Json => {
  const tokens = parsePointer(path)
  if (tokens.length === 0) return clone(value)
  const parent = parentOf(doc, tokens, path)
  const last = tokens[tokens.length - 1]!
  if (Array.isArray(parent)) {
    const i = arrayIndex(parent, last, !replace)
    parent.splice(i, replace ? 1 : 0, clone(value))
  } else if (isObject(parent)) {
    if (replace && !Object.hasOwn(parent, last)) throw unprocessable(`doc is missing key: "${path}"`)
    parent[last] = clone(value)
  } else throw unprocessable(`doc is missing path: "${path}"`)
  return doc
}

/** `from` of a move or copy; without it the apiserver (evanphx/json-patch) fails the patch, never reading "" (the whole document). */
const fromOf = (op: JsonPatchOp): string => {
  if (typeof op.from !== "string") {
    throw unprocessable(`${op.op} operation failed to decode from: operation, missing from field: missing value`)
  }
  return op.from
}

/** RFC 6902 on a copy of `doc`; the whole patch fails when one operation does. */
export const jsonPatch = (doc: Json, ops: unknown): Json => {
  if (!Array.isArray(ops)) throw badRequest("json patch must be an array of operations")
  let result = clone(doc)
  for (const raw of ops as ReadonlyArray<JsonPatchOp>) {
    if (!isObject(raw) || typeof raw.op !== "string" || typeof raw.path !== "string") {
      throw badRequest("json patch operation needs 'op' and 'path'")
    }
    const needsValue = raw.op === "add" || raw.op === "replace" || raw.op === "test"
    if (needsValue && !Object.hasOwn(raw, "value")) throw unprocessable(`missing value for "${raw.op}" operation`)
    switch (raw.op) {
      case "add":
        result = add(result, raw.path, raw.value, false)
        break
      case "replace":
        result = raw.path === "" ? clone(raw.value) : add(result, raw.path, raw.value, true)
        break
      case "remove":
        remove(result, raw.path)
        break
      case "test":
        if (!deepEqual(get(result, raw.path), raw.value)) throw unprocessable(`testing value ${raw.path} failed`)
        break
      case "move": {
        const from = fromOf(raw)
        if (raw.path.startsWith(`${from}/`)) throw unprocessable(`cannot move "${from}" into its own child`)
        result = add(result, raw.path, remove(result, from), false)
        break
      }
      case "copy":
        result = add(result, raw.path, get(result, fromOf(raw)), false)
        break
      default:
        throw badRequest(`unknown json patch operation "${raw.op}"`)
    }
  }
  return result
}
