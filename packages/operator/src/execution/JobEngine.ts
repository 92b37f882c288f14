/**
 * The `job` engine: one batch/v1 Job per execution in the workflow namespace, from the workflow's bundle image
 * (pinned by digest when the catalog has one), the validated parameters as env (plus `ACTION_TYPE`, the workflow's
 * action type), the workflow's runner ServiceAccount, no retries (a remediation is not re-run blindly) and
 * `activeDeadlineSeconds` from the executing timeout. The Job's conditions and its pod's container state are read
 * back; a failed pod's log tail is kept, credentials scrubbed.
 */
import { scrubCredentials } from "@kubemend/core/Credentials"
import type { K8sService, KubeObject } from "@kubemend/core/K8s"
import { Duration, Effect, Option } from "effect"
import type { ClusterService } from "../runtime/Cluster.ts"
import {
  type Engine,
  executionAnnotations,
  executionLabels,
  type FailureReason,
  type Observation,
  resourceName,
  type Run,
  type RunContext
} from "../clients/Engine.ts"

/** The container every workflow Job runs. */
export const workflowContainer = "workflow"

/** `repo@sha256:…` when a digest is known; a bundle that already names a digest is kept. */
export const pinnedImage = (bundle: string, digest: string | undefined): string => {
  if (digest === undefined || digest === "" || bundle.includes("@")) return bundle
  const slash = bundle.lastIndexOf("/")
  const colon = bundle.lastIndexOf(":")
  const repo = colon > slash ? bundle.slice(0, colon) : bundle
  return `${repo}@${digest.includes(":") ? digest : `sha256:${digest}`}`
}

export const renderJob = (run: Run): KubeObject => {
  const wf = run.workflow
  const labels = executionLabels(run, wf.workflowId)
  const env = [
    ...Object.entries(run.parameters).filter(([name]) => name !== "ACTION_TYPE").map(([name, value]) => ({ name, value })),
    { name: "ACTION_TYPE", value: wf.actionType }
  ]
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: resourceName(run.we.metadata.name),
      namespace: run.settings.workflowNamespace,
      labels,
      annotations: executionAnnotations(run)
    },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: Math.max(1, Math.ceil(Duration.toSeconds(run.timeout))),
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: "Never",
          ...(wf.serviceAccountName === undefined ? {} : { serviceAccountName: wf.serviceAccountName }),
          containers: [{
            name: workflowContainer,
            image: pinnedImage(
              wf.executionBundle ?? run.we.spec.workflowRef.executionBundle ?? "",
              wf.executionBundleDigest ?? run.we.spec.workflowRef.executionBundleDigest
            ),
            env
          }]
        }
      }
    }
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw Kubernetes JSON, walked field by field
type Json = Record<string, any>

const condition = (job: KubeObject, type: string): Json | undefined =>
  ((job.status as Json | undefined)?.["conditions"] as Array<Json> | undefined)?.find((c) => c["type"] === type && c["status"] === "True")

/** Waiting reasons that mean the workflow never started (nothing touched the target). */
const notStarted: Readonly<Record<string, FailureReason>> = {
  ImagePullBackOff: "ImagePullBackOff",
  ErrImagePull: "ImagePullBackOff",
  InvalidImageName: "ImagePullBackOff",
  CreateContainerConfigError: "ConfigurationError",
  CreateContainerError: "ConfigurationError"
}

const containerOf = (pod: KubeObject): Json | undefined =>
  ((pod.status as Json | undefined)?.["containerStatuses"] as Array<Json> | undefined)?.find((c) => c["name"] === workflowContainer)

export const makeJobEngine = (cluster: ClusterService, k8s: K8sService): Engine => {
  const ref = (run: Pick<RunContext, "settings">, name: string) => ({ apiVersion: "batch/v1", kind: "Job", name, namespace: run.settings.workflowNamespace })

  const logTail = (run: RunContext, pod: string) =>
    k8s.podLog({ namespace: run.settings.workflowNamespace, name: pod, container: workflowContainer, tailLines: run.settings.logTailLines, limitBytes: 16_384 })
      .pipe(
        Effect.map((text) => scrubCredentials(text.trimEnd())[0]),
        Effect.option,
        Effect.map(Option.getOrUndefined)
      )

  const failedRun = (run: RunContext, name: string, job: KubeObject, pods: ReadonlyArray<KubeObject>) =>
    Effect.gen(function* () {
      const failed = condition(job, "Failed")
      const pod = pods.find((p) => containerOf(p)?.["state"]?.["terminated"] !== undefined) ?? pods[0]
      const terminated = pod === undefined ? undefined : (containerOf(pod)?.["state"]?.["terminated"] as Json | undefined)
      const jobReason = String(failed?.["reason"] ?? "Failed")
      const reason: FailureReason = jobReason === "DeadlineExceeded"
        ? "DeadlineExceeded"
        : terminated?.["reason"] === "OOMKilled"
        ? "OOMKilled"
        : "TaskFailed"
      const tail = pod === undefined ? undefined : yield* logTail(run, pod.metadata.name)
      const exit = typeof terminated?.["exitCode"] === "number" ? terminated["exitCode"] as number : undefined
      const message = String(failed?.["message"] ?? terminated?.["message"] ?? `job ${name} failed`)
      return {
        _tag: "Failed",
        reason,
        engineReason: jobReason,
        message: exit === undefined ? message : `${message} (exit code ${exit})`,
        taskName: name,
        ...(exit === undefined ? {} : { exitCode: exit }),
        ...(tail === undefined || tail === "" ? {} : { logTail: tail }),
        wasExecutionFailure: terminated !== undefined || reason === "DeadlineExceeded"
      } satisfies Observation
    })

  return {
    name: "job",
    start: (run) => Effect.map(cluster.apply(renderJob(run)), (job) => job.metadata.name),
    observe: (run, name) =>
      Effect.gen(function* () {
        const found = yield* cluster.get(ref(run, name))
        if (Option.isNone(found)) return { _tag: "Gone" } satisfies Observation
        const job = found.value
        const pods =
          (yield* cluster.list({ apiVersion: "v1", kind: "Pod", namespace: run.settings.workflowNamespace, labelSelector: `job-name=${name}` })).items
        const complete = condition(job, "Complete")
        if (complete !== undefined) {
          return {
            _tag: "Succeeded",
            reason: String(complete["reason"] ?? "Completed"),
            message: String(complete["message"] ?? `job ${name} succeeded`)
          } satisfies Observation
        }
        if (condition(job, "Failed") !== undefined) return yield* failedRun(run, name, job, pods)
        for (const pod of pods) {
          const waiting = containerOf(pod)?.["state"]?.["waiting"] as Json | undefined
          const reason = notStarted[String(waiting?.["reason"] ?? "")]
          if (reason !== undefined) {
            return {
              _tag: "Failed",
              reason,
              engineReason: String(waiting?.["reason"]),
              message: `pod ${pod.metadata.name}: ${String(waiting?.["reason"])}: ${String(waiting?.["message"] ?? "")}`.trim(),
              taskName: name,
              wasExecutionFailure: false
            } satisfies Observation
          }
        }
        return { _tag: "Running" } satisfies Observation
      }),
    cancel: (run, name) => Effect.asVoid(cluster.remove(ref(run, name)))
  }
}
