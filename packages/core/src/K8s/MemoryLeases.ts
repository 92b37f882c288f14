/** The lease store of the in-memory layer: coordination.k8s.io/v1 Lease objects in the memory store. */
import { Effect, Option } from "effect"
import type { KubeObject } from "../K8s.ts"
import type { LeaseRecord, LeaseStore } from "./Leases.ts"
import type { MemoryStore } from "./MemoryStore.ts"
import { HttpFailure } from "./Retry.ts"

export const leaseResource = "coordination.k8s.io/leases"

const micro = (d: Date) => d.toISOString().replace(/Z$/, "000Z")
const date = (u: unknown) => (typeof u === "string" ? new Date(u) : undefined)

const fromObject = (o: KubeObject): LeaseRecord => {
  const spec = (o.spec ?? {}) as Record<string, unknown>
  return {
    name: o.metadata.name,
    holder: typeof spec.holderIdentity === "string" ? spec.holderIdentity : "",
    durationSeconds: typeof spec.leaseDurationSeconds === "number" ? spec.leaseDurationSeconds : 0,
    acquireTime: date(spec.acquireTime),
    renewTime: date(spec.renewTime),
    ...(o.metadata.resourceVersion === undefined ? {} : { resourceVersion: o.metadata.resourceVersion })
  }
}

const toObject = (namespace: string, r: LeaseRecord, base?: KubeObject): KubeObject => ({
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: { ...base?.metadata, name: r.name, namespace },
  spec: {
    holderIdentity: r.holder,
    leaseDurationSeconds: r.durationSeconds,
    ...(r.acquireTime === undefined ? {} : { acquireTime: micro(r.acquireTime) }),
    ...(r.renewTime === undefined ? {} : { renewTime: micro(r.renewTime) })
  }
})

/** `run` executes one request (gate, body, publish) under the request policy. */
export const makeMemoryLeaseStore = (
  store: MemoryStore,
  namespace: string,
  run: <A>(verb: string, name: string, body: () => A | HttpFailure) => Effect.Effect<A, HttpFailure>
): LeaseStore => {
  const stale = (name: string) => new HttpFailure({ status: 409, message: `Operation cannot be fulfilled on leases "${name}": the object has been modified` })
  const missing = (name: string) => new HttpFailure({ status: 404, message: `leases "${name}" not found` })
  return {
    get: (name) => run("get", name, () => Option.fromNullable(store.get(leaseResource, namespace, name)).pipe(Option.map(fromObject))),
    create: (r) =>
      run("create", r.name, () =>
        store.get(leaseResource, namespace, r.name) !== undefined
          ? new HttpFailure({ status: 409, message: `leases "${r.name}" already exists` })
          : fromObject(store.write(leaseResource, toObject(namespace, r), "ADDED").object)),
    replace: (r) =>
      run("update", r.name, () => {
        const current = store.get(leaseResource, namespace, r.name)
        if (current === undefined) return missing(r.name)
        if (r.resourceVersion !== current.metadata.resourceVersion) return stale(r.name)
        return fromObject(store.write(leaseResource, toObject(namespace, r, current), "MODIFIED").object)
      }),
    remove: (name, resourceVersion) =>
      run("delete", name, () => {
        const current = store.get(leaseResource, namespace, name)
        if (current === undefined) return missing(name)
        if (resourceVersion !== undefined && resourceVersion !== current.metadata.resourceVersion) return stale(name)
        store.remove(leaseResource, namespace, name)
      }),
    list: run("list", "", () => store.list(leaseResource, namespace).map(fromObject))
  }
}
