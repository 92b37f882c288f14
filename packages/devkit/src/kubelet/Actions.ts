/**
 * The standard remediation actions as the local kubelet performs them, in process against the dev cluster, for a
 * workflow Job whose container names its action in `ACTION_TYPE` (the workflow's action type) and its inputs in the
 * other env vars. Each returns the log lines a real action's container would print, or throws with the reason it
 * could not act (the Job then fails with that message in its log).
 */
import type { DevKube } from "../kube/index.ts"
import { canonicalJson } from "@kubemend/core/CanonicalJson"

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw Kubernetes JSON, walked field by field
type Obj = Record<string, any>
export type Params = Readonly<Record<string, string>>

const revisionKey = "deployment.kubernetes.io/revision"

const need = (p: Params, name: string): string => {
  const v = p[name]
  if (v === undefined || v === "") throw new Error(`parameter ${name} is required`)
  return v
}

const found = (o: Obj | undefined, what: string): Obj => {
  if (o === undefined) throw new Error(`${what} not found`)
  return o
}

const deployment = (kube: DevKube, p: Params) =>
  found(
    kube.get("apps/v1", "Deployment", need(p, "TARGET_NAME"), need(p, "TARGET_NAMESPACE")) as Obj | undefined,
    `deployment ${p["TARGET_NAMESPACE"]}/${p["TARGET_NAME"]}`
  )

/** A pod template as the Deployment holds it (the ReplicaSet copy carries `pod-template-hash`). */
export const plainTemplate = (template: Obj | undefined): Obj => {
  const labels = { ...(template?.["metadata"]?.["labels"] ?? {}) }
  delete labels["pod-template-hash"]
  return { ...template, metadata: { ...template?.["metadata"], labels } }
}

export const sameTemplate = (a: Obj | undefined, b: Obj | undefined) => canonicalJson(plainTemplate(a)) === canonicalJson(plainTemplate(b))

/** The Deployment's ReplicaSets, newest revision first. */
export const replicaSetsOf = (kube: DevKube, d: Obj): ReadonlyArray<Obj> =>
  (kube.list("apps/v1", "ReplicaSet", d["metadata"]["namespace"]) as ReadonlyArray<Obj>)
    .filter((rs) => (rs["metadata"]["ownerReferences"] ?? []).some((o: Obj) => o["kind"] === "Deployment" && o["name"] === d["metadata"]["name"]))
    .sort((a, b) => Number(b["metadata"]["annotations"]?.[revisionKey] ?? 0) - Number(a["metadata"]["annotations"]?.[revisionKey] ?? 0))

const withTemplate = (kube: DevKube, d: Obj, template: Obj) =>
  kube.put({ ...d, metadata: { ...d["metadata"], generation: Number(d["metadata"]["generation"] ?? 1) + 1 }, spec: { ...d["spec"], template } })

/** `kubectl rollout undo`: the template of the newest revision older than the current one. */
const rollback = async (kube: DevKube, p: Params) => {
  const d = deployment(kube, p)
  const sets = replicaSetsOf(kube, d)
  const current = sets.find((rs) => sameTemplate(rs["spec"]?.["template"], d["spec"]["template"]))
  const previous = sets.find((rs) =>
    rs !== current && rs["spec"]?.["template"] !== undefined && !sameTemplate(rs["spec"]["template"], d["spec"]["template"]) &&
    Number(rs["metadata"]["annotations"]?.[revisionKey] ?? 0) < Number(current?.["metadata"]["annotations"]?.[revisionKey] ?? Infinity)
  )
  if (previous === undefined) throw new Error(`deployment ${p["TARGET_NAMESPACE"]}/${p["TARGET_NAME"]} has no previous revision to roll back to`)
  withTemplate(kube, d, plainTemplate(previous["spec"]["template"]))
  return [`deployment.apps/${p["TARGET_NAME"]} rolled back to revision ${previous["metadata"]["annotations"]?.[revisionKey]} (${previous["metadata"]["name"]})`]
}

/** Deletes the pod, or every pod of the Deployment; their controller recreates them. */
const restart = async (kube: DevKube, p: Params) => {
  const ns = need(p, "TARGET_NAMESPACE")
  const name = need(p, "TARGET_NAME")
  if (kube.get("v1", "Pod", name, ns) !== undefined) {
    kube.delete("v1", "Pod", name, ns)
    return [`pod "${name}" deleted`]
  }
  const d = deployment(kube, p)
  const selector = d["spec"]?.["selector"]?.["matchLabels"] ?? {}
  const pods = (kube.list("v1", "Pod", ns) as ReadonlyArray<Obj>).filter((pod) =>
    Object.entries(selector).every(([k, v]) => pod["metadata"]["labels"]?.[k] === v)
  )
  for (const pod of pods) kube.delete("v1", "Pod", pod["metadata"]["name"], ns)
  return pods.map((pod) => `pod "${pod["metadata"]["name"]}" deleted`)
}

const scale = async (kube: DevKube, p: Params) => {
  const replicas = Number(need(p, "REPLICAS"))
  if (!Number.isInteger(replicas) || replicas < 0) throw new Error(`REPLICAS must be a non-negative integer, got ${p["REPLICAS"]}`)
  const kind = p["TARGET_KIND"] === "StatefulSet" ? "StatefulSet" : "Deployment"
  const o = found(kube.get("apps/v1", kind, need(p, "TARGET_NAME"), need(p, "TARGET_NAMESPACE")) as Obj | undefined, `${kind} ${p["TARGET_NAME"]}`)
  kube.put({ ...o, spec: { ...o["spec"], replicas } })
  return [`${kind.toLowerCase()}.apps/${p["TARGET_NAME"]} scaled to ${replicas}`]
}

const mebibytes = (q: string | undefined): number | undefined => {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|K|M|G)?$/.exec(q ?? "")
  if (m === null) return undefined
  const factor: Record<string, number> = { Ki: 1 / 1024, Mi: 1, Gi: 1024, K: 1000 / 1048576, M: 1e6 / 1048576, G: 1e9 / 1048576 }
  return Number(m[1]) * (m[2] === undefined ? 1 / 1048576 : factor[m[2]]!)
}
export { mebibytes }

/** Raises the memory limit of the Deployment's containers (or `CONTAINER`) to `MEMORY_LIMIT`, default twice the old. */
const raiseMemory = async (kube: DevKube, p: Params) => {
  const d = deployment(kube, p)
  const template = d["spec"]["template"]
  const lines: Array<string> = []
  const containers = (template["spec"]["containers"] as ReadonlyArray<Obj>).map((c) => {
    if (p["CONTAINER"] !== undefined && p["CONTAINER"] !== "" && c["name"] !== p["CONTAINER"]) return c
    const old = c["resources"]?.["limits"]?.["memory"] as string | undefined
    const limit = p["MEMORY_LIMIT"] ?? (mebibytes(old) === undefined ? undefined : `${Math.ceil(mebibytes(old)! * 2)}Mi`)
    if (limit === undefined) throw new Error(`container ${c["name"]} has no memory limit to raise; set MEMORY_LIMIT`)
    if ((mebibytes(limit) ?? 0) <= (mebibytes(old) ?? 0)) throw new Error(`MEMORY_LIMIT ${limit} does not raise the current limit ${old}`)
    lines.push(`container ${c["name"]}: memory limit ${old ?? "none"} -> ${limit}`)
    return { ...c, resources: { ...c["resources"], limits: { ...c["resources"]?.["limits"], memory: limit } } }
  })
  if (lines.length === 0) throw new Error(`no container named ${p["CONTAINER"]}`)
  withTemplate(kube, d, { ...template, spec: { ...template["spec"], containers } })
  return lines
}

const patchHpa = async (kube: DevKube, p: Params) => {
  const name = p["HPA_NAME"] ?? need(p, "TARGET_NAME")
  const hpa = found(kube.get("autoscaling/v2", "HorizontalPodAutoscaler", name, need(p, "TARGET_NAMESPACE")) as Obj | undefined, `hpa ${name}`)
  const max = Number(need(p, "MAX_REPLICAS"))
  if (!Number.isInteger(max) || max < (hpa["spec"]?.["minReplicas"] ?? 1)) throw new Error(`MAX_REPLICAS ${p["MAX_REPLICAS"]} is below minReplicas`)
  kube.put({ ...hpa, spec: { ...hpa["spec"], maxReplicas: max } })
  return [`horizontalpodautoscaler/${name}: maxReplicas ${hpa["spec"]?.["maxReplicas"]} -> ${max}`]
}

const relaxPdb = async (kube: DevKube, p: Params) => {
  const name = p["PDB_NAME"] ?? need(p, "TARGET_NAME")
  const pdb = found(kube.get("policy/v1", "PodDisruptionBudget", name, need(p, "TARGET_NAMESPACE")) as Obj | undefined, `pdb ${name}`)
  const spec = { ...pdb["spec"] }
  if (p["MAX_UNAVAILABLE"] !== undefined) {
    delete spec["minAvailable"]
    spec["maxUnavailable"] = /^\d+$/.test(p["MAX_UNAVAILABLE"]) ? Number(p["MAX_UNAVAILABLE"]) : p["MAX_UNAVAILABLE"]
  } else if (typeof spec["minAvailable"] === "number" && spec["minAvailable"] > 0) {
    spec["minAvailable"] = spec["minAvailable"] - 1
  } else {
    throw new Error(`pdb ${name}: nothing to relax; set MAX_UNAVAILABLE`)
  }
  kube.put({ ...pdb, spec })
  return [`poddisruptionbudget/${name}: ${JSON.stringify(pdb["spec"])} -> ${JSON.stringify(spec)}`]
}

const nodeOf = (kube: DevKube, p: Params) => {
  const name = p["NODE_NAME"] ?? need(p, "TARGET_NAME")
  return found(kube.get("v1", "Node", name) as Obj | undefined, `node ${name}`)
}

const removeTaint = async (kube: DevKube, p: Params) => {
  const node = nodeOf(kube, p)
  const key = need(p, "TAINT_KEY")
  const taints = (node["spec"]?.["taints"] ?? []) as ReadonlyArray<Obj>
  const kept = taints.filter((t) => t["key"] !== key)
  if (kept.length === taints.length) throw new Error(`node ${node["metadata"]["name"]} has no taint ${key}`)
  kube.put({ ...node, spec: { ...node["spec"], taints: kept } })
  return [`node/${node["metadata"]["name"]} untainted (${key})`]
}

/** Cordons the node and evicts its pods (DaemonSet pods stay, as `kubectl drain --ignore-daemonsets`). */
const cordonDrain = async (kube: DevKube, p: Params) => {
  const node = nodeOf(kube, p)
  const name = node["metadata"]["name"] as string
  kube.put({ ...node, spec: { ...node["spec"], unschedulable: true } })
  const lines = [`node/${name} cordoned`]
  for (const pod of kube.list("v1", "Pod") as ReadonlyArray<Obj>) {
    if (pod["spec"]?.["nodeName"] !== name) continue
    if ((pod["metadata"]["ownerReferences"] ?? []).some((o: Obj) => o["kind"] === "DaemonSet")) continue
    kube.delete("v1", "Pod", pod["metadata"]["name"], pod["metadata"]["namespace"])
    lines.push(`evicting pod ${pod["metadata"]["namespace"]}/${pod["metadata"]["name"]}`)
  }
  return [...lines, `node/${name} drained`]
}

/** The action types the local kubelet runs, by the name the demo catalog registers them under. */
export const actions: Readonly<Record<string, (kube: DevKube, p: Params) => Promise<ReadonlyArray<string>>>> = {
  RestartPod: restart,
  RollbackDeployment: rollback,
  ScaleReplicas: scale,
  IncreaseMemoryLimit: raiseMemory,
  PatchHPA: patchHpa,
  RelaxPDB: relaxPdb,
  RemoveTaint: removeTaint,
  CordonDrainNode: cordonDrain
}
