/** Building blocks of the scenarios' dev cluster: workloads with their owner chain, nodes, usage, workflows. */
import type { KubeObject } from "@kubemend/core/K8s"
import type { RemediationWorkflow } from "@kubemend/core/StorageApi"
import { wf } from "../test/Harness.ts"

type Obj = KubeObject & Record<string, unknown>

const owner = (apiVersion: string, kind: string, name: string) => [{ apiVersion, kind, name, uid: `uid-${name}`, controller: true }]

export interface WorkloadOptions {
  readonly image?: string
  readonly limits?: Record<string, string>
  readonly containerStatus?: Record<string, unknown>
  readonly podPhase?: string
  readonly podConditions?: ReadonlyArray<Record<string, unknown>>
  readonly nodeName?: string
  readonly volumes?: ReadonlyArray<Record<string, unknown>>
  readonly replicas?: number
}

/** Deployment -> ReplicaSet -> Pod `<name>-rs-pod` (container `app`). */
export const deployment = (namespace: string, name: string, o: WorkloadOptions = {}): Array<Obj> => {
  const labels = { app: name }
  const container = {
    name: "app",
    image: o.image ?? `registry.example/${name}:2.0`,
    ...(o.limits === undefined ? {} : { resources: { limits: o.limits, requests: o.limits } })
  }
  return [
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name, namespace, uid: `uid-${name}`, labels },
      spec: { replicas: o.replicas ?? 2, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [container] } } },
      status: { replicas: o.replicas ?? 2, availableReplicas: 0 }
    },
    {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: `${name}-rs`, namespace, uid: `uid-${name}-rs`, labels, ownerReferences: owner("apps/v1", "Deployment", name) },
      spec: {}
    },
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: `${name}-rs-pod`, namespace, labels, ownerReferences: owner("apps/v1", "ReplicaSet", `${name}-rs`) },
      spec: {
        containers: [container],
        ...(o.nodeName === undefined ? {} : { nodeName: o.nodeName }),
        ...(o.volumes === undefined ? {} : { volumes: o.volumes })
      },
      status: {
        phase: o.podPhase ?? "Running",
        ...(o.podConditions === undefined ? {} : { conditions: o.podConditions }),
        containerStatuses: [{ name: "app", image: container.image, restartCount: 0, ready: false, ...o.containerStatus }]
      }
    }
  ]
}

export const event = (namespace: string, name: string, kind: string, object: string, reason: string, message: string): Obj => ({
  apiVersion: "v1",
  kind: "Event",
  metadata: { name, namespace },
  type: "Warning",
  reason,
  message,
  count: 5,
  involvedObject: { kind, name: object, namespace }
})

export const node = (name: string, ready: boolean, extra: { taints?: ReadonlyArray<Record<string, string>>; pressure?: string } = {}): Obj => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: { name, labels: { "kubernetes.io/hostname": name } },
  spec: extra.taints === undefined ? {} : { taints: extra.taints },
  status: {
    conditions: [
      {
        type: "Ready",
        status: ready ? "True" : "Unknown",
        reason: ready ? "KubeletReady" : "NodeStatusUnknown",
        message: ready ? "kubelet is posting ready status" : "Kubelet stopped posting node status."
      },
      { type: "MemoryPressure", status: extra.pressure === "memory" ? "True" : "False" },
      { type: "DiskPressure", status: extra.pressure === "disk" ? "True" : "False" }
    ],
    capacity: { cpu: "4", memory: "16Gi" }
  }
})

export const podMetrics = (namespace: string, pod: string, usage: Record<string, string>): Obj => ({
  apiVersion: "metrics.k8s.io/v1beta1",
  kind: "PodMetrics",
  metadata: { name: pod, namespace },
  timestamp: "2025-01-01T00:00:00Z",
  window: "30s",
  containers: [{ name: "app", usage }]
})

/** A workflow whose discovery labels name one component (by kind), parameters as given. */
const entry = (n: number, name: string, actionType: string, component: string, parameters: ReadonlyArray<Record<string, unknown>>): RemediationWorkflow => ({
  ...wf(`aaaaaaaa-0000-4000-8000-${String(n).padStart(12, "0")}`, name, actionType, parameters),
  labels: { severity: ["critical", "high"], component: [component], environment: ["production"], priority: "*" }
})

const target = [
  { name: "TARGET_RESOURCE_NAME", type: "string", description: "target", required: true },
  { name: "TARGET_RESOURCE_NAMESPACE", type: "string", description: "namespace", required: false }
]

export const workflows = {
  restart: entry(1, "restart-deployment", "RestartDeployment", "deployment", target),
  rollback: entry(2, "rollback-deployment", "RollbackDeployment", "deployment", [...target, {
    name: "TO_REVISION",
    type: "integer",
    description: "revision, 0 for the previous",
    required: false,
    default: 0,
    minimum: 0
  }]),
  memory: entry(3, "increase-memory-limit", "IncreaseMemoryLimits", "deployment", [...target, {
    name: "MEMORY_LIMIT",
    type: "string",
    description: "new limit",
    required: true,
    pattern: "^[0-9]+(Mi|Gi)$"
  }]),
  drain: entry(4, "cordon-and-drain-node", "DrainNode", "node", [target[0]!]),
  expand: entry(5, "expand-pvc", "ExpandPVC", "persistentvolumeclaim", [...target, {
    name: "NEW_SIZE",
    type: "string",
    description: "new size",
    required: true,
    pattern: "^[0-9]+Gi$"
  }]),
  hpa: entry(6, "raise-hpa-max", "PatchHPA", "horizontalpodautoscaler", [...target, {
    name: "MAX_REPLICAS",
    type: "integer",
    description: "new maximum",
    required: true,
    minimum: 1,
    maximum: 100
  }]),
  cert: entry(7, "reissue-certificate", "ReissueCertificate", "certificate", target),
  netpol: entry(8, "revert-network-policy", "RevertNetworkPolicy", "networkpolicy", target),
  untaint: entry(9, "remove-node-taint", "RemoveTaint", "node", [target[0]!, { name: "TAINT_KEY", type: "string", description: "taint key", required: true }])
}

export const catalog: ReadonlyArray<RemediationWorkflow> = Object.values(workflows)
