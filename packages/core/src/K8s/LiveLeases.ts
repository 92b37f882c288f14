/** The lease store of the live layer: coordination.k8s.io/v1 Leases through client-node's CoordinationV1Api. */
import { CoordinationV1Api, type KubeConfig, type V1Lease, V1MicroTime } from "@kubernetes/client-node"
import { Effect, Option } from "effect"
import { type Call, callOptions } from "./Client.ts"
import type { LeaseRecord, LeaseStore } from "./Leases.ts"

// client-node has no deserializer for MicroTime, so reads may hold strings where the types say Date.
const toDate = (value: unknown): Date | undefined => value instanceof Date ? value : typeof value === "string" ? new Date(value) : undefined

const fromLease = (lease: V1Lease): LeaseRecord => ({
  name: lease.metadata?.name ?? "",
  holder: lease.spec?.holderIdentity ?? "",
  durationSeconds: lease.spec?.leaseDurationSeconds ?? 0,
  acquireTime: toDate(lease.spec?.acquireTime),
  renewTime: toDate(lease.spec?.renewTime),
  ...(lease.metadata?.resourceVersion === undefined ? {} : { resourceVersion: lease.metadata.resourceVersion })
})

// V1MicroTime prints the six fractional digits the API server's MicroTime parser requires.
const micro = (d: Date) => new V1MicroTime(d.getTime())

const toLease = (namespace: string, r: LeaseRecord): V1Lease => ({
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: {
    name: r.name,
    namespace,
    ...(r.resourceVersion === undefined ? {} : { resourceVersion: r.resourceVersion })
  },
  spec: {
    holderIdentity: r.holder,
    leaseDurationSeconds: r.durationSeconds,
    ...(r.acquireTime === undefined ? {} : { acquireTime: micro(r.acquireTime) }),
    ...(r.renewTime === undefined ? {} : { renewTime: micro(r.renewTime) })
  }
})

export const makeLeaseStore = (kc: KubeConfig, namespace: string, call: Call): LeaseStore => {
  const api = kc.makeApiClient(CoordinationV1Api)
  return {
    get: (name) =>
      call((s) => api.readNamespacedLease({ name, namespace }, callOptions(s))).pipe(
        Effect.map((l) => Option.some(fromLease(l))),
        Effect.catchIf((e) => e.status === 404, () => Effect.succeed(Option.none()))
      ),
    create: (r) =>
      call((s) => api.createNamespacedLease({ namespace, body: toLease(namespace, r) }, callOptions(s))).pipe(
        Effect.map(fromLease)
      ),
    replace: (r) =>
      call((s) => api.replaceNamespacedLease({ name: r.name, namespace, body: toLease(namespace, r) }, callOptions(s)))
        .pipe(Effect.map(fromLease)),
    remove: (name, resourceVersion) =>
      call((s) =>
        api.deleteNamespacedLease({
          name,
          namespace,
          ...(resourceVersion === undefined ? {} : { body: { preconditions: { resourceVersion } } })
        }, callOptions(s))
      ).pipe(Effect.asVoid),
    list: call((s) => api.listNamespacedLease({ namespace }, callOptions(s))).pipe(
      Effect.map((list) => list.items.map(fromLease))
    )
  }
}
