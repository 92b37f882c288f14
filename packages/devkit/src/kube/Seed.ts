/** Seeding: plain objects or multi-document YAML, created or overwritten with their status as given. */
import * as YAML from "yaml"
import type { Objects } from "./Objects.ts"
import type { ResourceRegistry, ResourceType } from "./Resources.ts"
import type { Obj } from "./Store.ts"

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/** Create or overwrite `body` (status kept, resourceVersion ignored): what seeding and test helpers want. */
export const upsert = (objects: Objects, rt: ResourceType, body: Obj): Obj => {
  const namespace = rt.namespaced ? (body.metadata.namespace || "default") : undefined
  const current = objects.find(rt, namespace, body.metadata.name)
  if (current === undefined) return objects.create(rt, namespace, body, { allowStatus: true })
  const { resourceVersion: _rv, ...metadata } = body.metadata
  return objects.replace(rt, current, { ...body, metadata }, { allowStatus: true })
}

export const resolveKind = (registry: ResourceRegistry, apiVersion: string, kind: string): ResourceType => {
  const rt = registry.byKind(apiVersion, kind)
  if (rt === undefined) throw new Error(`devkube: no resource serves ${apiVersion} ${kind}`)
  return rt
}

/** `kind: List` documents are flattened; CRDs and Namespaces go first so later objects find their kind and home. */
const order = (items: ReadonlyArray<unknown>): Array<Obj> => {
  const flat = items.flatMap((i) => (isRecord(i) && i["kind"] === "List" && Array.isArray(i["items"]) ? i["items"] : [i]))
  const objs = flat.filter(isRecord) as unknown as Array<Obj>
  const rank = (o: Obj) => (o.kind === "CustomResourceDefinition" ? 0 : o.kind === "Namespace" ? 1 : 2)
  return objs.map((o, i) => [o, i] as const).sort(([a, i], [b, j]) => rank(a) - rank(b) || i - j).map(([o]) => o)
}

export const seedObjects = (objects: Objects, items: ReadonlyArray<unknown>): Array<Obj> =>
  order(items).map((o) => {
    if (!isRecord(o.metadata) || typeof o.apiVersion !== "string" || typeof o.kind !== "string") {
      throw new Error("devkube: a seeded object needs apiVersion, kind and metadata")
    }
    return upsert(objects, resolveKind(objects.registry, o.apiVersion, o.kind), o)
  })

export const parseYaml = (text: string): Array<unknown> =>
  YAML.parseAllDocuments(text).flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(`devkube: invalid YAML: ${doc.errors[0]!.message}`)
    const value: unknown = doc.toJS()
    return value === null || value === undefined ? [] : [value]
  })
