/**
 * The health component: the target's pods as the API server reports them. A workload's pods are found by its
 * selector; a Pod is itself; a Node is its `Ready` condition. Score 0.0–1.0: 0 without a running pod or with a
 * container in CrashLoopBackOff, else ready pods over desired replicas, halved when a container restarted or was
 * OOM-killed since the remediation. Restarts "since" are counted per container: all restarts of a pod created after
 * the remediation, one for an older pod whose last termination came after it (its earlier count is history).
 * Kinds without pods or a Ready condition are not assessed (None).
 */
import type { TargetResource } from "@kubemend/core/domain/Meta"
import type { K8sAmbiguousKind, K8sService, K8sUnavailable, K8sUnknownKind, KubeObject } from "@kubemend/core/K8s"

type K8sError = K8sUnavailable | K8sUnknownKind | K8sAmbiguousKind
import { Effect, Option } from "effect"

/** `health_checks` of the `effectiveness.health.assessed` event (storage's history context shows them). */
export interface HealthChecks {
  readonly pod_running: boolean
  readonly readiness_pass: boolean
  readonly total_replicas: number
  readonly ready_replicas: number
  readonly restart_delta: number
  readonly crash_loops: boolean
  readonly oom_killed: boolean
  readonly pending_count: number
}

export interface Health {
  readonly score: number
  readonly checks: HealthChecks
  readonly details: string
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw Kubernetes JSON, walked field by field
type Json = Record<string, any>

const workloads = new Set(["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"])

const time = (s: unknown) => (typeof s === "string" ? Date.parse(s) : Number.NaN)

const isReady = (pod: KubeObject) => ((pod.status as Json | undefined)?.conditions ?? []).some((c: Json) => c.type === "Ready" && c.status === "True")

/** Health of a set of pods against `desired` replicas, restarts counted after `since` (Clock millis). */
export const podHealth = (pods: ReadonlyArray<KubeObject>, desired: number, since: number): Health => {
  const live = pods.filter((p) => p.metadata.deletionTimestamp === undefined && (p.status as Json | undefined)?.phase !== "Succeeded")
  let restartDelta = 0
  let crashLoops = false
  let oomKilled = false
  for (const pod of live) {
    const createdAfter = time(pod.metadata.creationTimestamp) >= since
    for (const c of ((pod.status as Json | undefined)?.containerStatuses ?? []) as Array<Json>) {
      const terminated = c.lastState?.terminated
      const terminatedAfter = time(terminated?.finishedAt) >= since
      restartDelta += createdAfter ? Number(c.restartCount ?? 0) : terminatedAfter ? 1 : 0
      if (c.state?.waiting?.reason === "CrashLoopBackOff") crashLoops = true
      if (terminated?.reason === "OOMKilled" && (createdAfter || terminatedAfter)) oomKilled = true
    }
  }
  const ready = live.filter(isReady).length
  const pending = live.filter((p) => (p.status as Json | undefined)?.phase === "Pending").length
  const running = live.some((p) => (p.status as Json | undefined)?.phase === "Running")
  const total = Math.max(desired, 1)
  const checks: HealthChecks = {
    pod_running: running,
    readiness_pass: ready >= total,
    total_replicas: total,
    ready_replicas: ready,
    restart_delta: restartDelta,
    crash_loops: crashLoops,
    oom_killed: oomKilled,
    pending_count: pending
  }
  const base = !running || crashLoops ? 0 : Math.min(ready, total) / total
  const score = restartDelta > 0 || oomKilled ? base / 2 : base
  const details = [
    `${ready} of ${total} replicas ready`,
    ...(crashLoops ? ["a container is in CrashLoopBackOff"] : []),
    ...(restartDelta > 0 ? [`${restartDelta} restart(s) since the remediation`] : []),
    ...(oomKilled ? ["OOMKilled since the remediation"] : []),
    ...(pending > 0 ? [`${pending} pod(s) pending`] : []),
    ...(live.length === 0 ? ["no pods"] : [])
  ].join("; ")
  return { score: Math.round(score * 10000) / 10000, checks, details }
}

const selectorOf = (o: KubeObject): string | undefined => {
  const labels = (o.spec as Json | undefined)?.selector?.matchLabels as Record<string, string> | undefined
  if (labels === undefined || Object.keys(labels).length === 0) return undefined
  return Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(",")
}

const desiredOf = (o: KubeObject, pods: number): number => {
  if (o.kind === "DaemonSet") return Number((o.status as Json | undefined)?.desiredNumberScheduled ?? pods)
  const replicas = (o.spec as Json | undefined)?.replicas
  return typeof replicas === "number" ? replicas : 1
}

const read = (k8s: K8sService, t: TargetResource) =>
  k8s.getResource({
    kind: t.kind,
    name: t.name,
    namespace: t.namespace ?? "",
    ...(t.apiVersion === undefined || t.apiVersion === "" ? {} : { apiVersion: t.apiVersion })
  }).pipe(
    Effect.map(Option.some),
    // A kind the cluster does not serve has nothing to read, as a missing object.
    Effect.catchTags({
      K8sNotFound: () => Effect.succeed(Option.none<KubeObject>()),
      K8sUnknownKind: () => Effect.succeed(Option.none<KubeObject>()),
      K8sAmbiguousKind: () => Effect.succeed(Option.none<KubeObject>())
    })
  )

/**
 * Health of `target` (falling back to `owner`, the remediation target, when the target is a Pod the remediation
 * replaced). None when neither has pods or a Ready condition to read.
 */
export const assessHealth = (
  k8s: K8sService,
  target: TargetResource,
  owner: TargetResource,
  since: number
): Effect.Effect<Option.Option<Health>, K8sError> =>
  Effect.gen(function* () {
    if (target.kind !== "Node" && target.kind !== "Pod" && !workloads.has(target.kind)) return Option.none<Health>()
    const found = yield* read(k8s, target)
    if (target.kind === "Node") {
      if (Option.isNone(found)) return Option.some<Health>({ score: 0, checks: podHealth([], 1, since).checks, details: "node not found" })
      const ready = ((found.value.status as Json | undefined)?.conditions ?? []).some((c: Json) => c.type === "Ready" && c.status === "True")
      return Option.some<Health>({
        score: ready ? 1 : 0,
        checks: { ...podHealth([], 1, since).checks, pod_running: ready, readiness_pass: ready },
        details: ready ? "node Ready" : "node not Ready"
      })
    }
    if (target.kind === "Pod") {
      if (Option.isSome(found)) return Option.some(podHealth([found.value], 1, since))
      if (owner.kind === "Pod" || !workloads.has(owner.kind)) return Option.some(podHealth([], 1, since))
      return yield* assessHealth(k8s, owner, owner, since)
    }
    if (Option.isNone(found)) return Option.some<Health>({ ...podHealth([], 1, since), details: `${target.kind} ${target.name} not found` })
    const selector = selectorOf(found.value)
    const pods = selector === undefined
      ? []
      : (yield* k8s.listResources({ kind: "Pod", apiVersion: "v1", namespace: target.namespace ?? "", labelSelector: selector })).items
    return Option.some(podHealth(pods, desiredOf(found.value, pods.length), since))
  })
