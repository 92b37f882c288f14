/**
 * The local kubelet's Deployment controller for the demo namespace: each Deployment's template gets a ReplicaSet
 * (a new revision when the template changes, an old one back on top after a rollback), the current ReplicaSet owns
 * `replicas` pods and older ones none, and a pod is ready unless its container's memory limit is below what its
 * image needs (`Demo.imageWorkingSets`), in which case it is OOMKilled in a crash loop whose restart count grows.
 * The Deployment's status is counted from its pods, and the alerts backend fires `KubePodCrashLooping` for crash
 * looping pods and `KubeDeploymentReplicasMismatch` for Deployments short of ready pods, as Prometheus would.
 */
import type { DevAlert } from "../Alerts.ts"
import type { DevKube } from "../kube/index.ts"
import { createHash } from "node:crypto"
import { canonicalJson } from "@kubemend/core/CanonicalJson"
import { mebibytes, plainTemplate, replicaSetsOf, sameTemplate } from "./Actions.ts"

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw Kubernetes JSON, walked field by field
type Obj = Record<string, any>
const revisionKey = "deployment.kubernetes.io/revision"
/** A crash-looping container restarts this often. */
const restartEvery = 10_000

const owner = (o: Obj) => ({ apiVersion: o["apiVersion"], kind: o["kind"], name: o["metadata"]["name"], controller: true })

const crashes = (template: Obj, workingSets: Readonly<Record<string, string>>): Obj | undefined =>
  (template["spec"]?.["containers"] as Array<Obj> | undefined)?.find((c) => {
    const needs = mebibytes(workingSets[c["image"]])
    const limit = mebibytes(c["resources"]?.["limits"]?.["memory"])
    return needs !== undefined && limit !== undefined && limit < needs
  })

const podStatus = (template: Obj, workingSets: Readonly<Record<string, string>>, now: number, previous?: Obj): Obj => {
  const bad = crashes(template, workingSets)
  const at = new Date(now).toISOString()
  if (bad === undefined) {
    return {
      phase: "Running",
      startTime: previous?.["startTime"] ?? at,
      conditions: [{ type: "Ready", status: "True" }],
      containerStatuses: (template["spec"]["containers"] as ReadonlyArray<Obj>).map((c) => ({
        name: c["name"],
        image: c["image"],
        ready: true,
        restartCount: 0,
        state: { running: { startedAt: at } }
      }))
    }
  }
  const old = (previous?.["containerStatuses"] as Array<Obj> | undefined)?.find((c) => c["name"] === bad["name"])
  const last = Date.parse(old?.["lastState"]?.["terminated"]?.["finishedAt"] ?? "")
  const restarts = Number(old?.["restartCount"] ?? 0) + (Number.isNaN(last) || now - last >= restartEvery ? 1 : 0)
  return {
    phase: "Running",
    startTime: previous?.["startTime"] ?? at,
    conditions: [{ type: "Ready", status: "False", reason: "ContainersNotReady" }],
    containerStatuses: [{
      name: bad["name"],
      image: bad["image"],
      ready: false,
      restartCount: restarts,
      lastState: {
        terminated: {
          reason: "OOMKilled",
          exitCode: 137,
          finishedAt: restarts === old?.["restartCount"] ? old?.["lastState"]?.["terminated"]?.["finishedAt"] : at
        }
      },
      state: { waiting: { reason: "CrashLoopBackOff", message: `back-off restarting failed container ${bad["name"]}` } }
    }]
  }
}

const isReady = (pod: Obj) => (pod["status"]?.["conditions"] ?? []).some((c: Obj) => c["type"] === "Ready" && c["status"] === "True")

/** One pass over the namespace's Deployments. */
export const reconcileDeployments = (kube: DevKube, namespace: string, workingSets: Readonly<Record<string, string>>, now: number) => {
  for (const d of kube.list("apps/v1", "Deployment", namespace) as ReadonlyArray<Obj>) {
    const template = plainTemplate(d["spec"]?.["template"])
    if (template["spec"]?.["containers"] === undefined) continue
    const replicas = Number(d["spec"]?.["replicas"] ?? 1)
    const sets = replicaSetsOf(kube, d)
    const top = Math.max(0, ...sets.map((rs) => Number(rs["metadata"]["annotations"]?.[revisionKey] ?? 0)))
    let current = sets.find((rs) => sameTemplate(rs["spec"]?.["template"], template))
    if (current === undefined) {
      const hash = createHash("sha256").update(canonicalJson(template)).digest("hex").slice(0, 10)
      current = kube.put({
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        metadata: {
          name: `${d["metadata"]["name"]}-${hash}`,
          namespace,
          labels: { ...template["metadata"]?.["labels"], "pod-template-hash": hash },
          annotations: { [revisionKey]: String(top + 1) },
          ownerReferences: [owner(d)]
        },
        spec: {
          replicas,
          template: { ...template, metadata: { ...template["metadata"], labels: { ...template["metadata"]?.["labels"], "pod-template-hash": hash } } }
        }
      }) as Obj
    } else if (Number(current["metadata"]["annotations"]?.[revisionKey] ?? 0) < top || current["spec"]?.["replicas"] !== replicas) {
      // Back on top after a rollback (the revision moves up, as the Deployment controller does), or rescaled.
      const revision = Number(current["metadata"]["annotations"]?.[revisionKey] ?? 0) < top
        ? String(top + 1)
        : current["metadata"]["annotations"]?.[revisionKey]
      current = kube.put({
        ...current,
        metadata: { ...current["metadata"], annotations: { ...current["metadata"]["annotations"], [revisionKey]: revision } },
        spec: { ...current["spec"], replicas }
      }) as Obj
    }
    const pods = kube.list("v1", "Pod", namespace) as ReadonlyArray<Obj>
    const ownedBy = (rs: Obj) =>
      pods.filter((p) => (p["metadata"]["ownerReferences"] ?? []).some((o: Obj) => o["kind"] === "ReplicaSet" && o["name"] === rs["metadata"]["name"]))
    for (const rs of sets.filter((s) => s["metadata"]["name"] !== current!["metadata"]["name"])) {
      if (rs["spec"]?.["replicas"] !== 0) kube.put({ ...rs, spec: { ...rs["spec"], replicas: 0 } })
      for (const p of ownedBy(rs)) kube.delete("v1", "Pod", p["metadata"]["name"], namespace)
    }
    const mine = ownedBy(current)
    for (const p of mine.slice(replicas)) kube.delete("v1", "Pod", p["metadata"]["name"], namespace)
    for (let i = mine.length; i < replicas; i++) {
      const suffix = createHash("sha256").update(`${current["metadata"]["name"]}/${now}/${i}`).digest("hex").slice(0, 5)
      kube.put({
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          name: `${current["metadata"]["name"]}-${suffix}`,
          namespace,
          labels: current["spec"]["template"]["metadata"]["labels"],
          ownerReferences: [owner(current)]
        },
        spec: current["spec"]["template"]["spec"],
        status: podStatus(template, workingSets, now)
      })
    }
    for (const p of mine.slice(0, replicas)) {
      const status = podStatus(template, workingSets, now, p["status"])
      if (canonicalJson(status) !== canonicalJson(p["status"] ?? {})) kube.put({ ...p, status })
    }
    const live = (kube.list("v1", "Pod", namespace) as ReadonlyArray<Obj>).filter((p) =>
      (p["metadata"]["ownerReferences"] ?? []).some((o: Obj) => o["name"] === current!["metadata"]["name"])
    )
    const ready = live.filter(isReady).length
    const status = {
      observedGeneration: d["metadata"]["generation"] ?? 1,
      replicas: live.length,
      updatedReplicas: live.length,
      readyReplicas: ready,
      availableReplicas: ready,
      unavailableReplicas: Math.max(0, replicas - ready)
    }
    if (canonicalJson(status) !== canonicalJson(d["status"] ?? {})) kube.put({ ...d, status })
  }
}

/** What Prometheus would fire for the namespace now. */
export const derivedAlerts = (kube: DevKube, namespace: string, since: Map<string, string>, now: number): ReadonlyArray<DevAlert> => {
  const alerts: Array<DevAlert> = []
  const at = (key: string) => {
    const t = since.get(key) ?? new Date(now).toISOString()
    since.set(key, t)
    return t
  }
  for (const p of kube.list("v1", "Pod", namespace) as ReadonlyArray<Obj>) {
    const looping = (p["status"]?.["containerStatuses"] ?? []).find((c: Obj) => c["state"]?.["waiting"]?.["reason"] === "CrashLoopBackOff")
    if (looping === undefined) continue
    const key = `crash/${p["metadata"]["name"]}`
    alerts.push({
      labels: { alertname: "KubePodCrashLooping", severity: "critical", namespace, pod: p["metadata"]["name"], container: looping["name"] },
      annotations: { summary: `Pod ${namespace}/${p["metadata"]["name"]} is crash looping (${looping["lastState"]?.["terminated"]?.["reason"] ?? "Error"})` },
      state: "firing",
      activeAt: at(key),
      value: String(looping["restartCount"] ?? 0)
    })
  }
  for (const d of kube.list("apps/v1", "Deployment", namespace) as ReadonlyArray<Obj>) {
    const want = Number(d["spec"]?.["replicas"] ?? 1)
    const ready = Number(d["status"]?.["readyReplicas"] ?? 0)
    if (ready >= want) continue
    alerts.push({
      labels: { alertname: "KubeDeploymentReplicasMismatch", severity: "warning", namespace, deployment: d["metadata"]["name"] },
      annotations: { summary: `Deployment ${namespace}/${d["metadata"]["name"]} has ${ready} of ${want} replicas available` },
      state: "firing",
      activeAt: at(`replicas/${d["metadata"]["name"]}`),
      value: String(ready)
    })
  }
  const firing = new Set(alerts.map((a) => a.labels["pod"] === undefined ? `replicas/${a.labels["deployment"]}` : `crash/${a.labels["pod"]}`))
  for (const key of since.keys()) if (!firing.has(key)) since.delete(key)
  return alerts
}
