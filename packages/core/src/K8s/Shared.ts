/** Small helpers both layers use to shape requests and answers the way the API server does. */
import type { EventFilter, KubeList, KubeObject } from "../K8s.ts"
import { apiVersionOf, type ResourceMapping } from "./RestMapper.ts"

/** `/api/v1/namespaces/ns/pods[/name]` or `/apis/g/v/namespaces/ns/res[/name]`. */
export const resourcePath = (m: ResourceMapping, namespace: string, name?: string): string => {
  const base = `/${m.group === "" ? "api" : "apis"}/${apiVersionOf(m)}`
  const scoped = m.namespaced ? `${base}/namespaces/${encodeURIComponent(namespace)}/${m.resource}` : `${base}/${m.resource}`
  return name === undefined ? scoped : `${scoped}/${encodeURIComponent(name)}`
}

/** A list response as KubeList; items get apiVersion/kind, which servers leave out of list items. */
export const toKubeList = (u: unknown, apiVersion: string, kind: string): KubeList => {
  const list = (u ?? {}) as { items?: ReadonlyArray<KubeObject>; metadata?: { resourceVersion?: string } }
  return {
    items: (list.items ?? []).map((o) => ({ ...o, apiVersion: o.apiVersion ?? apiVersion, kind: o.kind ?? kind })),
    resourceVersion: list.metadata?.resourceVersion ?? ""
  }
}

/** Adds `metadata.name=<name>` to a field selector. */
export const withName = (fieldSelector: string | undefined, name: string | undefined): string | undefined => {
  if (name === undefined) return fieldSelector
  const byName = `metadata.name=${name}`
  return fieldSelector === undefined || fieldSelector === "" ? byName : `${fieldSelector},${byName}`
}

/** The field selector of an event query (`reason=…,involvedObject.kind=…,involvedObject.name=…`). */
export const eventSelector = (filter: EventFilter): string | undefined => {
  const parts = [
    filter.reason === undefined ? undefined : `reason=${filter.reason}`,
    filter.involvedObjectKind === undefined ? undefined : `involvedObject.kind=${filter.involvedObjectKind}`,
    filter.involvedObjectName === undefined ? undefined : `involvedObject.name=${filter.involvedObjectName}`
  ].filter((p): p is string => p !== undefined)
  return parts.length === 0 ? undefined : parts.join(",")
}

/**
 * Whether a patch carries `metadata.resourceVersion`, i.e. the caller asked for optimistic concurrency. Its 409 is a
 * real lost race that the caller must resolve by reading again, so it is not retried as-is.
 */
/** The body of a status merge-patch; with `resourceVersion`, the API server applies it only at that version. */
export const statusPatch = (status: Record<string, unknown>, resourceVersion: string | undefined): Record<string, unknown> =>
  resourceVersion === undefined ? { status } : { metadata: { resourceVersion }, status }

export const retriesConflicts = (patch: Record<string, unknown>): boolean =>
  (patch.metadata as { resourceVersion?: unknown } | undefined)?.resourceVersion === undefined
