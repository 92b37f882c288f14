/**
 * Kind -> REST resource, namespaced or cluster-scoped. Discovery answers from the server are cached for a TTL; when
 * discovery fails the static table of common kinds stands in. A kind served by several groups takes `apiVersion` or
 * `apiGroup` (`core` or `""` is the core group); without one the core group wins when it serves the kind (as kubectl
 * resolves `Event` to core/v1), otherwise the caller gets K8sAmbiguousKind naming the groups.
 */
import { Duration, Effect, Option, Ref } from "effect"
import { K8sAmbiguousKind, K8sUnknownKind } from "../K8s.ts"
import { crKinds, crVersion } from "./Config.ts"
import type { HttpFailure } from "./Retry.ts"

export interface ResourceMapping {
  /** `""` for the core group. */
  readonly group: string
  readonly version: string
  /** Plural resource name used in paths (`pods`). */
  readonly resource: string
  readonly kind: string
  readonly namespaced: boolean
  /** The version the server prefers for this group; kind-only lookups use only these. */
  readonly preferred: boolean
}

export const apiVersionOf = (m: Pick<ResourceMapping, "group" | "version">): string => m.group === "" ? m.version : `${m.group}/${m.version}`

export const groupLabel = (group: string): string => (group === "" ? "core" : group)

const row = (group: string, version: string, namespaced: boolean) => (kind: string, resource: string): ResourceMapping => ({
  group,
  version,
  kind,
  resource,
  namespaced,
  preferred: true
})

/** Common kinds, used when discovery is unavailable (and by the in-memory layer as its whole "server"). */
export const staticTable = (apiGroup: string): ReadonlyArray<ResourceMapping> => {
  const core = row("", "v1", true)
  const apps = row("apps", "v1", true)
  const cr = row(apiGroup, crVersion, true)
  return [
    core("Pod", "pods"),
    core("Service", "services"),
    core("ConfigMap", "configmaps"),
    core("Secret", "secrets"),
    core("Event", "events"),
    core("ServiceAccount", "serviceaccounts"),
    core("Endpoints", "endpoints"),
    core("PersistentVolumeClaim", "persistentvolumeclaims"),
    core("ReplicationController", "replicationcontrollers"),
    core("ResourceQuota", "resourcequotas"),
    core("LimitRange", "limitranges"),
    row("", "v1", false)("Namespace", "namespaces"),
    row("", "v1", false)("Node", "nodes"),
    row("", "v1", false)("PersistentVolume", "persistentvolumes"),
    row("storage.k8s.io", "v1", false)("StorageClass", "storageclasses"),
    apps("Deployment", "deployments"),
    apps("ReplicaSet", "replicasets"),
    apps("StatefulSet", "statefulsets"),
    apps("DaemonSet", "daemonsets"),
    apps("ControllerRevision", "controllerrevisions"),
    row("batch", "v1", true)("Job", "jobs"),
    row("batch", "v1", true)("CronJob", "cronjobs"),
    row("autoscaling", "v2", true)("HorizontalPodAutoscaler", "horizontalpodautoscalers"),
    row("policy", "v1", true)("PodDisruptionBudget", "poddisruptionbudgets"),
    row("networking.k8s.io", "v1", true)("NetworkPolicy", "networkpolicies"),
    row("networking.k8s.io", "v1", true)("Ingress", "ingresses"),
    row("discovery.k8s.io", "v1", true)("EndpointSlice", "endpointslices"),
    row("coordination.k8s.io", "v1", true)("Lease", "leases"),
    row("events.k8s.io", "v1", true)("Event", "events"),
    row("rbac.authorization.k8s.io", "v1", true)("Role", "roles"),
    row("rbac.authorization.k8s.io", "v1", true)("RoleBinding", "rolebindings"),
    row("rbac.authorization.k8s.io", "v1", false)("ClusterRole", "clusterroles"),
    row("rbac.authorization.k8s.io", "v1", false)("ClusterRoleBinding", "clusterrolebindings"),
    row("metrics.k8s.io", "v1beta1", true)("PodMetrics", "pods"),
    row("metrics.k8s.io", "v1beta1", false)("NodeMetrics", "nodes"),
    ...Object.entries(crKinds).map(([plural, kind]) => cr(kind, plural))
  ]
}

export interface MappingQuery {
  readonly kind: string
  readonly apiVersion?: string
  readonly apiGroup?: string
}

const parseApiVersion = (apiVersion: string): { group: string; version: string } => {
  const slash = apiVersion.lastIndexOf("/")
  return slash < 0 ? { group: "", version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) }
}

const normalGroup = (g: string): string => (g === "core" ? "" : g)

/** Picks the mapping for a query out of a table; pure, so both layers and the tests share it. */
export const resolveIn = (
  table: ReadonlyArray<ResourceMapping>,
  query: MappingQuery
): Effect.Effect<ResourceMapping, K8sAmbiguousKind | K8sUnknownKind> => {
  const wanted = query.kind.toLowerCase()
  const named = table.filter((m) => m.kind.toLowerCase() === wanted || m.resource === wanted)
  let candidates: ReadonlyArray<ResourceMapping>
  if (query.apiVersion !== undefined && query.apiVersion !== "") {
    const gv = parseApiVersion(query.apiVersion)
    candidates = named.filter((m) => m.group === gv.group && m.version === gv.version)
  } else if (query.apiGroup !== undefined) {
    const group = normalGroup(query.apiGroup)
    candidates = named.filter((m) => m.group === group && m.preferred)
  } else {
    candidates = named.filter((m) => m.preferred)
  }
  const groups = [...new Set(candidates.map((m) => m.group))]
  if (groups.length > 1 && groups.includes("")) candidates = candidates.filter((m) => m.group === "")
  else if (groups.length > 1) return Effect.fail(new K8sAmbiguousKind({ kind: query.kind, groups: groups.map(groupLabel).sort() }))
  const found = candidates[0]
  return found === undefined ? Effect.fail(new K8sUnknownKind({ kind: query.kind })) : Effect.succeed(found)
}

export interface RestMapper {
  readonly resolve: (query: MappingQuery) => Effect.Effect<ResourceMapping, K8sAmbiguousKind | K8sUnknownKind>
}

/**
 * A mapper over a discovery source. Discovery runs at most once at a time and at most once per `ttl / 10`; a good
 * answer is kept for `ttl`, a failed one leaves the last good table (or the static one) in place. An unknown kind asks
 * for a fresh discovery (a CRD may have been installed since), still bounded by that interval, so a caller asking for a
 * bogus kind cannot make us hammer the server.
 */
export const make = (options: {
  readonly discover: Effect.Effect<ReadonlyArray<ResourceMapping>, HttpFailure>
  readonly fallback: ReadonlyArray<ResourceMapping>
  readonly ttl: Duration.Duration
}): Effect.Effect<RestMapper> =>
  Effect.gen(function* () {
    type Cached = { readonly at: number; readonly attemptedAt: number; readonly table: ReadonlyArray<ResourceMapping> }
    const cache = yield* Ref.make(Option.none<Cached>())
    const lock = yield* Effect.makeSemaphore(1)
    const ttl = Duration.toMillis(options.ttl)
    const minInterval = ttl / 10

    const table = (maxAge: number) =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
          const cached = yield* Ref.get(cache)
          if (Option.isSome(cached) && (now - cached.value.at < maxAge || now - cached.value.attemptedAt < minInterval)) {
            return cached.value.table
          }
          return yield* options.discover.pipe(
            Effect.tap((fresh) => Ref.set(cache, Option.some({ at: now, attemptedAt: now, table: fresh }))),
            Effect.catchAll((e) => {
              const previous = Option.getOrUndefined(cached)
              const kept = previous?.table ?? options.fallback
              return Ref.set(cache, Option.some({ at: previous?.at ?? 0, attemptedAt: now, table: kept })).pipe(
                Effect.zipRight(Effect.logWarning("Kubernetes discovery failed; using the last known kinds", e.message)),
                Effect.as(kept)
              )
            })
          )
        })
      )

    const resolve = (query: MappingQuery) =>
      Effect.flatMap(table(ttl), (t) => resolveIn(t, query)).pipe(
        Effect.catchTag("K8sUnknownKind", () => Effect.flatMap(table(minInterval), (t) => resolveIn(t, query)))
      )
    return { resolve }
  })

/** Core v1 Events, which `listEvents` reads without asking the mapper. */
export const coreEvent: ResourceMapping = row("", "v1", true)("Event", "events")
