/**
 * The dev API server has no kubelet and no Job or Deployment controllers, so the local platform plays their part:
 * - the migration Job succeeds (storage migrates itself when it starts) and a service's Deployment reports ready
 *   while its child process answers `/readyz`;
 * - a workflow Job (labelled `{api_group}/workflow-execution`) gets a pod that "runs" for `executionTime`, then its
 *   action is performed in process against the dev cluster (Actions.ts, chosen by the container's `ACTION_TYPE`
 *   env, inputs from the other env vars); the pod terminates with exit code 0 or 1 and the action's output as its
 *   log, and the Job gets `Complete` or `Failed` as the Job controller would write them. No image is pulled or run;
 *   an action type the kubelet does not know fails the Job with a reason. `activeDeadlineSeconds` is honoured;
 * - the demo namespace's Deployments get ReplicaSets and pods (Workloads.ts), and the alerts backend fires what
 *   the pods show.
 * The operator then reads the world exactly as it would in a cluster.
 */
import type { DevAlert, DevAlertsService } from "../Alerts.ts"
import type { DevKube } from "../kube/index.ts"
import { Duration, Effect, Schedule } from "effect"
import { actions, type Params } from "./Actions.ts"
import { derivedAlerts, reconcileDeployments } from "./Workloads.ts"

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw Kubernetes JSON, walked field by field
type Obj = Record<string, any>

export interface KubeletOptions {
  /** The platform's namespace: its Jobs complete, its Deployments are ready while their service answers. */
  readonly platformNamespace: string
  /** `/readyz` URL per platform service (its Deployment is ready while it answers 200). */
  readonly readyz: Readonly<Record<string, string>>
  readonly apiGroup: string
  /** Where the execution controller creates workflow Jobs. */
  readonly workflowNamespace: string
  /** How long a workflow Job's pod runs before its action is performed. */
  readonly executionTime: Duration.Duration
  /** The demo workloads' namespace and what each image needs in memory. */
  readonly demoNamespace: string
  readonly imageWorkingSets: Readonly<Record<string, string>>
  /** The dev alerts backend: derived alerts replace its list, next to `staticAlerts`. */
  readonly alerts?: Pick<DevAlertsService, "set">
  readonly staticAlerts?: ReadonlyArray<DevAlert>
}

const readyOf = async (url: string) => {
  try {
    return (await fetch(url)).status === 200
  } catch {
    return false
  }
}

const container = "workflow"

/** Runs the Job's action; the pod's exit code and log. */
const perform = async (kube: DevKube, job: Obj): Promise<{ readonly ok: boolean; readonly log: string }> => {
  const env = (job["spec"]?.["template"]?.["spec"]?.["containers"]?.[0]?.["env"] ?? []) as Array<{ name: string; value?: string }>
  const params: Params = Object.fromEntries(env.map((e) => [e.name, e.value ?? ""]))
  const type = params["ACTION_TYPE"] ?? ""
  const action = actions[type]
  if (action === undefined) {
    return { ok: false, log: `local kubelet: cannot run action type "${type}" (it runs ${Object.keys(actions).join(", ")})` }
  }
  try {
    const lines = await action(kube, params)
    return { ok: true, log: [`${type}: ${params["TARGET_NAMESPACE"] ?? ""}/${params["TARGET_NAME"] ?? ""}`, ...lines].join("\n") }
  } catch (e) {
    return { ok: false, log: `${type} failed: ${e instanceof Error ? e.message : String(e)}` }
  }
}

const runWorkflowJob = async (kube: DevKube, job: Obj, o: KubeletOptions, now: number) => {
  const status = (job["status"] ?? {}) as Obj
  if ((status["conditions"] ?? []).some((c: Obj) => (c["type"] === "Complete" || c["type"] === "Failed") && c["status"] === "True")) return
  const ns = job["metadata"]["namespace"] as string
  const name = job["metadata"]["name"] as string
  const podName = `${name}-run`
  const at = new Date(now).toISOString()
  if (status["startTime"] === undefined) {
    const labels = { ...job["spec"]?.["template"]?.["metadata"]?.["labels"], "job-name": name, "batch.kubernetes.io/job-name": name }
    kube.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: podName, namespace: ns, labels, ownerReferences: [{ apiVersion: "batch/v1", kind: "Job", name, controller: true }] },
      spec: job["spec"]?.["template"]?.["spec"],
      status: { phase: "Running", startTime: at, containerStatuses: [{ name: container, ready: true, restartCount: 0, state: { running: { startedAt: at } } }] }
    })
    kube.put({ ...job, status: { ...status, active: 1, startTime: at } })
    return
  }
  const started = Date.parse(status["startTime"])
  const deadline = job["spec"]?.["activeDeadlineSeconds"]
  const finish = (ok: boolean, log: string, jobReason: string, message: string) => {
    kube.setPodLog(ns, podName, container, log + "\n")
    const pod = kube.get("v1", "Pod", podName, ns) as Obj | undefined
    if (pod !== undefined) {
      kube.put({
        ...pod,
        status: {
          ...pod["status"],
          phase: ok ? "Succeeded" : "Failed",
          containerStatuses: [{
            name: container,
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: ok ? 0 : 1, reason: ok ? "Completed" : "Error", finishedAt: at } }
          }]
        }
      })
    }
    const type = ok ? "Complete" : "Failed"
    kube.put({
      ...job,
      status: {
        ...status,
        active: 0,
        ...(ok ? { succeeded: 1, completionTime: at } : { failed: 1 }),
        conditions: [{ type, status: "True", reason: jobReason, message, lastTransitionTime: at }]
      }
    })
  }
  if (typeof deadline === "number" && now - started >= deadline * 1000) {
    return finish(false, "local kubelet: killed at the active deadline", "DeadlineExceeded", "Job was active longer than specified deadline")
  }
  if (now - started < Duration.toMillis(o.executionTime)) return
  const result = await perform(kube, job)
  finish(
    result.ok,
    result.log,
    result.ok ? "Completed" : "BackoffLimitExceeded",
    result.ok ? "Reached expected number of succeeded pods" : "Job has reached the specified backoff limit"
  )
}

const pass = (kube: DevKube, o: KubeletOptions, since: Map<string, string>) =>
  Effect.promise(async () => {
    const now = Date.now()
    for (const job of kube.list("batch/v1", "Job", o.platformNamespace)) {
      const status = (job["status"] ?? {}) as Record<string, unknown>
      if (status["succeeded"] !== 1) await kube.put({ ...job, status: { ...status, succeeded: 1, completionTime: new Date().toISOString() } })
    }
    for (const job of kube.list("batch/v1", "Job", o.workflowNamespace) as ReadonlyArray<Obj>) {
      if (job["metadata"]["labels"]?.[`${o.apiGroup}/workflow-execution`] !== undefined) await runWorkflowJob(kube, job, o, now)
    }
    reconcileDeployments(kube, o.demoNamespace, o.imageWorkingSets, now)
    for (const deployment of kube.list("apps/v1", "Deployment", o.platformNamespace)) {
      const service = deployment.metadata.name.replace(/^kubemend-/, "")
      const url = o.readyz[service]
      if (url === undefined) continue
      // One process serves all of a service's replicas here: ready means every desired replica is.
      const desired = Number((deployment["spec"] as { replicas?: number } | undefined)?.replicas ?? 1)
      const ready = (await readyOf(url)) ? desired : 0
      const status = (deployment["status"] ?? {}) as Record<string, unknown>
      const generation = deployment.metadata["generation"] ?? 1
      if (status["readyReplicas"] === ready && status["observedGeneration"] === generation) continue
      await kube.put({
        ...deployment,
        status: { ...status, observedGeneration: generation, replicas: desired, updatedReplicas: desired, readyReplicas: ready, availableReplicas: ready }
      })
    }
    return derivedAlerts(kube, o.demoNamespace, since, now)
  })

const tick = (kube: DevKube, o: KubeletOptions, since: Map<string, string>) =>
  Effect.flatMap(pass(kube, o, since), (derived) => o.alerts === undefined ? Effect.void : o.alerts.set([...(o.staticAlerts ?? []), ...derived]))

export const runLocalKubelet = (kube: DevKube, options: KubeletOptions) => {
  const since = new Map<string, string>()
  return Effect.suspend(() => tick(kube, options, since)).pipe(
    Effect.catchAllDefect((d) => Effect.logWarning("local kubelet: a pass failed", d)),
    Effect.repeat(Schedule.spaced(Duration.seconds(1))),
    Effect.forkScoped
  )
}
