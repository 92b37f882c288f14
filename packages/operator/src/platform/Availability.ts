/**
 * What keeps a service up when pods or nodes go (the CR's `highAvailability`): replicas per service, a
 * PodDisruptionBudget (maxUnavailable 1) for each service with more than one pod, topology spread of its pods over
 * nodes, and an optional HorizontalPodAutoscaler (the Deployment then leaves `replicas` to it).
 */
import type { KubeObject } from "@kubemend/core/K8s"
import type { PlatformSpec } from "@kubemend/core/domain/Platform/index"
import { refOf, type Snapshot } from "./Apply.ts"
import { podSelector, type ServiceName } from "./Names.ts"

type Workload = ServiceName | "console"

/** The CR block each service's replica count is read from. */
const block = { gateway: "apiFrontend", agent: "agent", storage: "dataStorage", signals: "gateway", console: "console" } as const

export const replicasOf = (spec: PlatformSpec, svc: Workload): number => spec.highAvailability.replicas[block[svc]]

/** The Deployment spec's `replicas` (absent under an autoscaler) and the pod spec's spread constraints. */
export const deploymentAvailability = (spec: PlatformSpec, svc: Workload, instance: string) => {
  const ha = spec.highAvailability
  const spread = ha.topologySpread
  return {
    replicas: ha.autoscaling.enabled ? {} : { replicas: replicasOf(spec, svc) },
    pod: spread.enabled
      ? {
        topologySpreadConstraints: [{
          maxSkew: 1,
          topologyKey: spread.topologyKey,
          whenUnsatisfiable: spread.whenUnsatisfiable,
          labelSelector: { matchLabels: podSelector(svc, instance) }
        }]
      }
      : {}
  }
}

/** PodDisruptionBudget and HorizontalPodAutoscaler of one service, as enabled. */
export const availabilityObjects = (
  spec: PlatformSpec,
  svc: Workload,
  meta: KubeObject["metadata"],
  instance: string
): ReadonlyArray<KubeObject> => {
  const ha = spec.highAvailability
  const replicas = replicasOf(spec, svc)
  const pdb: ReadonlyArray<KubeObject> = ha.podDisruptionBudgets && (replicas > 1 || ha.autoscaling.enabled)
    ? [{
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: meta,
      spec: { maxUnavailable: 1, selector: { matchLabels: podSelector(svc, instance) } }
    }]
    : []
  const hpa: ReadonlyArray<KubeObject> = ha.autoscaling.enabled
    ? [{
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: meta,
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: meta.name },
        minReplicas: replicas,
        maxReplicas: Math.max(replicas, ha.autoscaling.maxReplicas),
        metrics: [{
          type: "Resource",
          resource: { name: "cpu", target: { type: "Utilization", averageUtilization: ha.autoscaling.targetCPUUtilizationPercentage } }
        }]
      }
    }]
    : []
  return [...pdb, ...hpa]
}

/**
 * A Deployment rendered without `replicas` (an autoscaler owns it) is applied with its live count: leaving the field
 * out of a server-side apply would reset it to 1 for a moment before the autoscaler scales it up again.
 */
export const keepScaled = (o: KubeObject, live: Snapshot): KubeObject => {
  if (o.kind !== "Deployment" || (o.spec as { replicas?: number } | undefined)?.replicas !== undefined) return o
  const current = (live.get(refOf(o))?.spec as { replicas?: number } | undefined)?.replicas
  return current === undefined ? o : { ...o, spec: { ...(o.spec as object), replicas: current } }
}
