/**
 * Writing the world for the reconciler: a snapshot of what exists (one list per kind), apply of what differs with
 * an ownership check (an object with our name that another owner created is left alone), prune of what is no longer
 * wanted, Warning events on the platform CR, and status writes that send only what changed.
 */
import type { K8sConflict, K8sNotFound, K8sUnavailable, KubeObject } from "@kubemend/core/K8s"
import { Clock, Data, Effect } from "effect"
import { createHash } from "node:crypto"
import type { ClusterService, CollectionRef, ObjectRef } from "../runtime/Cluster.ts"
import { ownerSelector } from "./Names.ts"
import { mergePatchOf, storedStatus } from "./Status.ts"

/** An object we would write exists and belongs to someone else. */
export class NotOwned extends Data.TaggedError("NotOwned")<{ readonly kind: string; readonly name: string }> {}

export const refOf = (o: KubeObject): ObjectRef => ({
  apiVersion: o.apiVersion ?? "v1",
  kind: o.kind ?? "",
  name: o.metadata.name,
  ...(o.metadata.namespace === undefined ? {} : { namespace: o.metadata.namespace })
})

/**
 * Ours: its controller ownerReference is the platform CR (same kind and name: a CR deleted and created again keeps
 * its children where garbage collection has not run), or it has none yet carries our owner labels.
 */
const ownedBy = (existing: KubeObject, cr: KubeObject, labels: Readonly<Record<string, string>>): boolean => {
  const refs = (existing.metadata.ownerReferences ?? []) as ReadonlyArray<{ kind?: unknown; name?: unknown; controller?: unknown }>
  const controller = refs.find((r) => r.controller === true)
  if (controller !== undefined) return controller.kind === cr.kind && controller.name === cr.metadata.name
  const have = existing.metadata.labels ?? {}
  return Object.entries(labels).every(([k, v]) => have[k] === v)
}

/** Requests a reconcile keeps in flight at once: the objects of one step are independent of each other. */
export const applyConcurrency = 8

const keyOf = (r: ObjectRef) => `${r.apiVersion}|${r.kind}|${r.namespace ?? ""}|${r.name}`

/** What exists of the kinds a reconcile writes, read with one list per kind. */
export interface Snapshot {
  readonly get: (ref: ObjectRef) => KubeObject | undefined
  readonly items: ReadonlyArray<KubeObject>
}

export const snapshot = (cluster: ClusterService, collections: ReadonlyArray<CollectionRef>): Effect.Effect<Snapshot, K8sUnavailable> =>
  Effect.forEach(collections, (c) => cluster.list(c), { concurrency: applyConcurrency }).pipe(
    Effect.map((lists) => {
      const items = lists.flatMap((l) => l.items)
      const byKey = new Map(items.map((o) => [keyOf(refOf(o)), o]))
      return { items, get: (ref: ObjectRef) => byKey.get(keyOf(ref)) }
    })
  )

/**
 * True when `live` already has every field `desired` sets (arrays item by item): the API server adds defaults,
 * status and metadata, so equality would never hold, but a missing or different field means an apply is due.
 */
export const covers = (live: unknown, desired: unknown): boolean => {
  if (Array.isArray(desired)) {
    return Array.isArray(live) && live.length === desired.length && desired.every((d, i) => covers(live[i], d))
  }
  if (typeof desired === "object" && desired !== null) {
    if (typeof live !== "object" || live === null || Array.isArray(live)) return false
    return Object.entries(desired).every(([k, v]) => covers((live as Record<string, unknown>)[k], v))
  }
  return live === desired
}

/** Applies the objects that differ from the snapshot; answers each object as it now is. */
export const applyChanged = (cluster: ClusterService, objects: ReadonlyArray<KubeObject>, snap: Snapshot) =>
  Effect.forEach(objects, (o) => {
    const live = snap.get(refOf(o))
    return live !== undefined && covers(live, o) ? Effect.succeed(live) : cluster.apply(o)
  }, { concurrency: applyConcurrency })

/** Like `applyChanged`, refusing (NotOwned) to take over an object with our name that another owner created. */
export const applyOwned = (cluster: ClusterService, cr: KubeObject, objects: ReadonlyArray<KubeObject>, snap: Snapshot) =>
  Effect.gen(function* () {
    const foreign = objects.find((o) => {
      const live = snap.get(refOf(o))
      return live !== undefined && !ownedBy(live, cr, o.metadata.labels ?? {})
    })
    if (foreign !== undefined) return yield* new NotOwned({ kind: foreign.kind ?? "", name: foreign.metadata.name })
    return yield* applyChanged(cluster, objects, snap)
  })

/** Deletes the objects of `owned` whose names are not in `keep`. Returns the names deleted. */
export const prune = (
  cluster: ClusterService,
  owned: ReadonlyArray<KubeObject>,
  keep: ReadonlySet<string>
): Effect.Effect<ReadonlyArray<string>, K8sUnavailable> => {
  const stale = owned.filter((o) => !keep.has(o.metadata.name))
  return Effect.forEach(stale, (o) => cluster.remove(refOf(o)), { discard: true, concurrency: applyConcurrency }).pipe(
    Effect.as(stale.map((o) => o.metadata.name))
  )
}

/** The owned cluster-scoped RBAC of one platform, found by its owner labels. */
export const ownedClusterRbac = (cluster: ClusterService, owner: { readonly apiGroup: string; readonly namespace: string; readonly name: string }) =>
  snapshot(
    cluster,
    (["ClusterRole", "ClusterRoleBinding"] as const).map((kind) => ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind,
      labelSelector: ownerSelector(owner.apiGroup, owner.namespace, owner.name)
    }))
  )

/** Deletes namespaced objects by name when they exist and are ours (disabled console, network policies). */
export const removeOwned = (
  cluster: ClusterService,
  cr: KubeObject,
  refs: ReadonlyArray<ObjectRef>,
  snap: Snapshot,
  labels: Readonly<Record<string, string>>
) =>
  Effect.forEach(
    refs.filter((ref) => {
      const live = snap.get(ref)
      return live !== undefined && ownedBy(live, cr, labels)
    }),
    (ref) => cluster.remove(ref),
    { discard: true, concurrency: applyConcurrency }
  )

/** A Warning (or Normal) event on the platform CR. Failing to record it never fails the reconcile. */
export const recordEvent = (cluster: ClusterService, cr: KubeObject, type: "Normal" | "Warning", reason: string, message: string) =>
  Effect.gen(function* () {
    const now = new Date(yield* Clock.currentTimeMillis).toISOString().replace(/\.\d{3}Z$/, "Z")
    const id = createHash("sha256").update(`${reason}\u0000${message}`).digest("hex").slice(0, 12)
    yield* cluster.apply({
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: `${cr.metadata.name}.${id}`, namespace: cr.metadata.namespace ?? "" },
      involvedObject: {
        apiVersion: cr.apiVersion,
        kind: cr.kind,
        name: cr.metadata.name,
        namespace: cr.metadata.namespace,
        uid: cr.metadata.uid
      },
      type,
      reason,
      message,
      source: { component: "kubemend-operator" },
      reportingComponent: "kubemend-operator",
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1
    })
  }).pipe(Effect.catchAll((e) => Effect.logWarning("could not record event", e.message)))

/** Writes `next` to the status subresource when it differs from what is stored; returns the CR as written. */
export const writeStatus = (
  cluster: ClusterService,
  cr: KubeObject,
  next: Record<string, unknown>
): Effect.Effect<KubeObject, K8sNotFound | K8sConflict | K8sUnavailable> => {
  const patch = mergePatchOf(storedStatus(cr), next)
  return Object.keys(patch).length === 0 ? Effect.succeed(cr) : cluster.patchStatus(refOf(cr), patch)
}
