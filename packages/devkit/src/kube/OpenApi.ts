/**
 * The OpenAPI documents kubectl downloads before `apply`, `create` and `replace`:
 *
 * - `/openapi/v3`: the index of group-versions, each with a `serverRelativeURL`; `/openapi/v3/<api|apis/...>`: one
 *   OpenAPI 3.0 document per group-version. Each kind has a component schema tagged `x-kubernetes-group-version-kind`
 *   (a stored CRD's `openAPIV3Schema` for custom kinds, an object that keeps unknown fields for built-in kinds) and
 *   its object paths, whose PATCH declares the `fieldValidation` query parameter. kubectl reads that parameter to
 *   learn that the server validates fields itself, so it skips client-side validation: without these documents it
 *   stops with "failed to download openapi" unless `--validate=false` is given.
 * - `/openapi/v2`: the same as Swagger 2.0 in JSON. Real servers also speak protobuf there; this one does not, and
 *   answers 406 to a client that accepts only protobuf (kubectl then uses v3).
 */
import { createHash } from "node:crypto"
import { groupVersion, type ResourceRegistry, type ResourceType } from "./Resources.ts"
import type { JsonSchema } from "./Validation.ts"

export type SchemaOf = (rt: ResourceType) => JsonSchema | undefined

/** `api/v1`, `apis/apps/v1`. */
const gvPath = (group: string, version: string) => (group === "" ? `api/${version}` : `apis/${group}/${version}`)

/** `io.k8s.api.core.v1.Pod`, `io.k8s.api.apps.v1.Deployment`, `io.kubemend.v1alpha1.RemediationWorkflow`. */
const definitionName = (rt: ResourceType) => {
  const group = rt.group === "" ? "core" : rt.group
  const prefix = rt.custom ? group.split(".").reverse().join(".") : `io.k8s.api.${group.split(".")[0]}`
  return `${prefix}.${rt.version}.${rt.kind}`
}

const gvk = (rt: ResourceType) => [{ group: rt.group, version: rt.version, kind: rt.kind }]

const builtinSchema: JsonSchema = {
  type: "object",
  properties: { apiVersion: { type: "string" }, kind: { type: "string" }, metadata: { type: "object" } },
  "x-kubernetes-preserve-unknown-fields": true
}

const schemaFor = (rt: ResourceType, schemaOf: SchemaOf) => ({
  ...(schemaOf(rt) ?? builtinSchema),
  "x-kubernetes-group-version-kind": gvk(rt)
})

const queryParameter = (name: string) => ({ name, in: "query", schema: { type: "string" }, type: "string", uniqueItems: true })

/** GET / PUT / PATCH / DELETE of one object, tagged with its kind. */
const objectPath = (rt: ResourceType, ref: (rt: ResourceType) => Record<string, unknown>) => {
  const op = (action: string, extra: Record<string, unknown> = {}) => ({
    operationId: `${action}${rt.kind}`,
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": gvk(rt)[0],
    responses: { "200": ref(rt) },
    ...extra
  })
  const writes = { parameters: ["dryRun", "fieldManager", "fieldValidation"].map(queryParameter) }
  return {
    get: op("get"),
    put: op("put", writes),
    patch: op("patch", { ...writes, parameters: [...writes.parameters, queryParameter("force")] }),
    delete: op("delete")
  }
}

const pathOf = (rt: ResourceType) => `/${gvPath(rt.group, rt.version)}${rt.namespaced ? "/namespaces/{namespace}" : ""}/${rt.plural}/{name}`

const typesOf = (registry: ResourceRegistry, group: string, version: string) =>
  registry.all().filter((t) => t.group === group && t.version === version && t.verbs.includes("get"))

/** One group-version as OpenAPI 3.0; undefined when the server does not serve it. */
export const openApiV3Document = (registry: ResourceRegistry, schemaOf: SchemaOf, group: string, version: string) => {
  const types = typesOf(registry, group, version)
  if (types.length === 0) return undefined
  const ref = (rt: ResourceType) => ({
    description: "OK",
    content: { "application/json": { schema: { $ref: `#/components/schemas/${definitionName(rt)}` } } }
  })
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: groupVersion({ group, version }) },
    paths: Object.fromEntries(types.map((rt) => [pathOf(rt), objectPath(rt, ref)])),
    components: { schemas: Object.fromEntries(types.map((rt) => [definitionName(rt), schemaFor(rt, schemaOf)])) }
  }
}

const hashOf = (doc: unknown) => createHash("sha512").update(JSON.stringify(doc)).digest("hex").slice(0, 128).toUpperCase()

/** The `/openapi/v3` index. */
export const openApiV3Index = (registry: ResourceRegistry, schemaOf: SchemaOf) => ({
  paths: Object.fromEntries(
    registry.groupVersions().flatMap((g) =>
      g.versions.flatMap((version) => {
        const doc = openApiV3Document(registry, schemaOf, g.group, version)
        const path = gvPath(g.group, version)
        return doc === undefined ? [] : [[path, { serverRelativeURL: `/openapi/v3/${path}?hash=${hashOf(doc)}` }]]
      })
    )
  )
})

/** Every served kind as Swagger 2.0. */
export const openApiV2Document = (registry: ResourceRegistry, schemaOf: SchemaOf) => {
  const types = registry.all().filter((t) => t.verbs.includes("get"))
  const ref = (rt: ResourceType) => ({ description: "OK", schema: { $ref: `#/definitions/${definitionName(rt)}` } })
  return {
    swagger: "2.0",
    info: { title: "Kubernetes", version: "v1.31.0-devkube" },
    paths: Object.fromEntries(types.map((rt) => [pathOf(rt), objectPath(rt, ref)])),
    definitions: Object.fromEntries(types.map((rt) => [definitionName(rt), schemaFor(rt, schemaOf)]))
  }
}

/** What `/openapi/...` answers: the document, or undefined for a path that names nothing. */
export const openApiFor = (registry: ResourceRegistry, schemaOf: SchemaOf, pathname: string): unknown => {
  if (pathname === "/openapi/v2") return openApiV2Document(registry, schemaOf)
  if (pathname === "/openapi/v3") return openApiV3Index(registry, schemaOf)
  const rest = pathname.replace(/^\/openapi\/v3\//, "").split("/")
  if (rest[0] === "api" && rest.length === 2) return openApiV3Document(registry, schemaOf, "", rest[1]!)
  if (rest[0] === "apis" && rest.length === 3) return openApiV3Document(registry, schemaOf, rest[1]!, rest[2]!)
  return undefined
}

/** A client that accepts only protobuf (client-go's v2 request) gets 406 from `/openapi/v2`. */
export const acceptsJson = (accept: string | undefined): boolean => accept === undefined || accept === "" || /application\/json|\*\/\*/.test(accept)
