/**
 * REST write semantics on top of the Store: create/update/delete with uid, generation, optimistic concurrency,
 * the status subresource, finalizers, Secret stringData, and CRD schemas (defaulting, pruning, validation).
 */
import { randomUUID } from "node:crypto"
import { clone, deepEqual } from "./Patch.ts"
import { type CrdShape, groupVersion, type ResourceRegistry, type ResourceType, storageKey } from "./Resources.ts"
import { alreadyExists, badRequest, conflict, invalid, notFound, type StatusCause } from "./Status.ts"
import type { Obj, Store } from "./Store.ts"
import { defaultAndPrune, type JsonSchema, validate } from "./Validation.ts"

const crdKey = "apiextensions.k8s.io/customresourcedefinitions"
const namespacesKey = "/namespaces"

/** RFC 3339 without fractions, as metav1.Time marshals. */
export const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, "Z")

const randomSuffix = () => Array.from({ length: 5 }, () => "bcdfghjklmnpqrstvwxz2456789"[Math.floor(Math.random() * 27)]).join("")

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

export interface WriteOptions {
  /** Keep `.status` given on create / main-object writes (seeding and test helpers). */
  readonly allowStatus?: boolean
  /** `/status` subresource write. */
  readonly status?: boolean
}

export class Objects {
  constructor(
    readonly store: Store,
    readonly registry: ResourceRegistry
  ) {}

  /** The object as served at `rt`'s version. */
  present(rt: ResourceType, obj: Obj): Obj {
    return { ...obj, apiVersion: groupVersion(rt), kind: rt.kind }
  }

  get(rt: ResourceType, namespace: string | undefined, name: string): Obj {
    const found = this.store.get(storageKey(rt), rt.namespaced ? namespace : undefined, name)
    if (found === undefined) throw notFound(rt, name)
    return this.present(rt, found)
  }

  find(rt: ResourceType, namespace: string | undefined, name: string): Obj | undefined {
    return this.store.get(storageKey(rt), rt.namespaced ? namespace : undefined, name)
  }

  create(rt: ResourceType, namespace: string | undefined, body: unknown, options: WriteOptions = {}): Obj {
    const obj = this.checkBody(rt, body)
    const meta = obj.metadata
    const name = meta.name || (meta.generateName ? `${meta.generateName}${randomSuffix()}` : "")
    if (name === "") {
      throw invalid(rt, "", [{ reason: "FieldValueRequired", message: "Required value: name or generateName is required", field: "metadata.name" }])
    }
    const ns = this.namespaceFor(rt, namespace, meta.namespace)
    if (this.find(rt, ns, name) !== undefined) throw alreadyExists(rt, name)
    const { resourceVersion: _rv, deletionTimestamp: _dt, ...rest } = meta
    const created: Obj = {
      ...obj,
      metadata: {
        ...rest,
        name,
        ...(ns === undefined ? {} : { namespace: ns }),
        uid: randomUUID(),
        creationTimestamp: now(),
        generation: 1
      }
    }
    if (created.metadata.namespace === undefined) delete created.metadata.namespace
    if (rt.statusSubresource && !options.allowStatus) delete created.status
    if (storageKey(rt) === namespacesKey && created.status === undefined) created.status = { phase: "Active" }
    this.prepare(rt, created)
    const stored = this.store.commit(storageKey(rt), "ADDED", created)
    if (storageKey(rt) === crdKey) this.registry.registerCrd(stored as unknown as CrdShape)
    return this.present(rt, stored)
  }

  /**
   * Replaces `current` with `next` (a full object): checks resourceVersion, keeps server-owned metadata, applies the
   * status-subresource split, bumps generation on spec changes, and deletes once the last finalizer is gone.
   */
  replace(rt: ResourceType, stored: Obj, next: unknown, options: WriteOptions = {}): Obj {
    // Compare at the requested version, so a write through another served version is not a change by itself.
    const current = this.present(rt, stored)
    const proposed = this.checkBody(rt, next)
    const name = current.metadata.name
    const rv = proposed.metadata.resourceVersion
    if (rv !== undefined && rv !== "" && rv !== current.metadata.resourceVersion) throw conflict(rt, name)
    if (proposed.metadata.name && proposed.metadata.name !== name) {
      throw badRequest(`the name of the object (${proposed.metadata.name}) does not match the name on the URL (${name})`)
    }
    let result: Obj
    if (options.status) {
      result = clone(current)
      if (proposed.status === undefined) delete result.status
      else result.status = proposed.status
    } else {
      const m = current.metadata
      result = {
        ...proposed,
        metadata: {
          ...proposed.metadata,
          name,
          uid: m.uid!,
          creationTimestamp: m.creationTimestamp!,
          generation: m.generation ?? 1
        }
      }
      if (m.namespace !== undefined) result.metadata.namespace = m.namespace
      if (m.deletionTimestamp !== undefined) result.metadata.deletionTimestamp = m.deletionTimestamp
      else delete result.metadata.deletionTimestamp
      if (rt.statusSubresource && !options.allowStatus) {
        if (current.status === undefined) delete result.status
        else result.status = current.status
      }
      this.checkFinalizers(rt, current, result)
    }
    this.prepare(rt, result)
    if (!options.status && !deepEqual(this.spec(rt, result), this.spec(rt, current))) {
      result.metadata.generation = (current.metadata.generation ?? 1) + 1
    }
    result.metadata.resourceVersion = current.metadata.resourceVersion!
    if (deepEqual(result, current)) return this.present(rt, current)
    if (result.metadata.deletionTimestamp !== undefined && (result.metadata.finalizers ?? []).length === 0) {
      return this.present(rt, this.remove(rt, result))
    }
    return this.present(rt, this.store.commit(storageKey(rt), "MODIFIED", result))
  }

  /** DELETE: marks objects with finalizers (`deletionTimestamp`), removes the rest. `deleted` says which. */
  delete(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    preconditions?: { readonly uid?: string; readonly resourceVersion?: string }
  ): { readonly object: Obj; readonly deleted: boolean } {
    const current = this.find(rt, namespace, name)
    if (current === undefined) throw notFound(rt, name)
    if (preconditions?.uid !== undefined && preconditions.uid !== current.metadata.uid) {
      throw conflict(rt, name)
    }
    if (preconditions?.resourceVersion !== undefined && preconditions.resourceVersion !== current.metadata.resourceVersion) {
      throw conflict(rt, name)
    }
    if ((current.metadata.finalizers ?? []).length > 0) {
      if (current.metadata.deletionTimestamp !== undefined) return { object: this.present(rt, current), deleted: false }
      const marked = clone(current)
      marked.metadata.deletionTimestamp = now()
      marked.metadata.deletionGracePeriodSeconds = 0
      marked.metadata.generation = (current.metadata.generation ?? 1) + 1
      return { object: this.present(rt, this.store.commit(storageKey(rt), "MODIFIED", marked)), deleted: false }
    }
    return { object: this.present(rt, this.remove(rt, current)), deleted: true }
  }

  private remove(rt: ResourceType, obj: Obj): Obj {
    const gone = this.store.commit(storageKey(rt), "DELETED", obj)
    if (storageKey(rt) === crdKey) this.registry.unregisterCrd(obj.metadata.name)
    // The namespace controller's job, done at once: a deleted namespace takes its objects with it.
    if (storageKey(rt) === namespacesKey) {
      for (const t of this.registry.all()) {
        if (!t.namespaced || this.registry.findAnyVersion(t.group, t.plural) !== t) continue
        for (const o of this.store.list(storageKey(t), obj.metadata.name)) this.store.commit(storageKey(t), "DELETED", o)
      }
    }
    return gone
  }

  /** What `generation` tracks: everything but metadata, and but status when status is a subresource. */
  private spec(rt: ResourceType, obj: Obj) {
    const { metadata: _m, status, ...rest } = obj
    return rt.statusSubresource ? rest : { ...rest, status }
  }

  private checkBody(rt: ResourceType, body: unknown): Obj {
    if (!isRecord(body) || !isRecord(body["metadata"] ?? {})) throw badRequest("the body of the request is not a JSON object")
    const obj = clone(body) as Obj
    obj.metadata = (obj.metadata ?? {}) as Obj["metadata"]
    if (obj.kind !== undefined && obj.kind !== rt.kind) {
      throw badRequest(`the kind in the body (${String(obj.kind)}) does not match the expected kind (${rt.kind})`)
    }
    if (obj.apiVersion !== undefined && obj.apiVersion !== groupVersion(rt)) {
      throw badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${groupVersion(rt)})`)
    }
    obj.apiVersion = groupVersion(rt)
    obj.kind = rt.kind
    return obj
  }

  private namespaceFor(rt: ResourceType, fromPath: string | undefined, fromBody: string | undefined): string | undefined {
    if (!rt.namespaced) return undefined
    const ns = fromPath ?? fromBody
    if (ns === undefined || ns === "") {
      throw invalid(rt, "", [{ reason: "FieldValueRequired", message: "Required value", field: "metadata.namespace" }])
    }
    if (fromPath !== undefined && fromBody !== undefined && fromBody !== "" && fromBody !== fromPath) {
      throw badRequest("the namespace of the provided object does not match the namespace sent on the request")
    }
    return ns
  }

  private checkFinalizers(rt: ResourceType, current: Obj, next: Obj): void {
    if (current.metadata.deletionTimestamp === undefined) return
    const before = new Set(current.metadata.finalizers ?? [])
    const added = (next.metadata.finalizers ?? []).filter((f) => !before.has(f))
    if (added.length > 0) {
      throw invalid(rt, current.metadata.name, [{
        reason: "FieldValueForbidden",
        message: "Forbidden: no new finalizers can be added if the object is being deleted",
        field: "metadata.finalizers"
      }])
    }
  }

  /** Kind-specific normalisation plus the CRD schema, when one is stored for this kind. */
  private prepare(rt: ResourceType, obj: Obj): void {
    if (storageKey(rt) === "/secrets" && isRecord(obj["stringData"])) {
      const data = isRecord(obj["data"]) ? obj["data"] : {}
      for (const [k, v] of Object.entries(obj["stringData"])) data[k] = Buffer.from(String(v)).toString("base64")
      obj["data"] = data
      delete obj["stringData"]
    }
    const causes: Array<StatusCause> = []
    if (storageKey(rt) === crdKey) causes.push(...crdCauses(obj))
    const schema = this.schemaFor(rt)
    if (schema !== undefined) {
      defaultAndPrune(obj, schema)
      causes.push(...validate(obj, schema))
    }
    if (causes.length > 0) throw invalid(rt, obj.metadata.name, causes)
  }

  /** The stored CRD's schema of a custom kind (also served in the OpenAPI documents). */
  schemaFor(rt: ResourceType): JsonSchema | undefined {
    const crd = this.store.peek(crdKey, undefined, `${rt.plural}.${rt.group}`) as unknown as CrdShape | undefined
    const version = crd?.spec.versions?.find((v) => v.name === rt.version)
    return version?.schema?.openAPIV3Schema as JsonSchema | undefined
  }
}

const crdCauses = (obj: Obj): Array<StatusCause> => {
  const spec = obj["spec"] as Partial<CrdShape["spec"]> | undefined
  if (!spec?.group || !spec.names?.plural || !spec.names.kind) {
    return [{ reason: "FieldValueRequired", message: "Required value", field: "spec.names" }]
  }
  const expected = `${spec.names.plural}.${spec.group}`
  return obj.metadata.name === expected
    ? []
    : [{ reason: "FieldValueInvalid", message: `Invalid value: "${obj.metadata.name}": must be spec.names.plural+"."+spec.group`, field: "metadata.name" }]
}
