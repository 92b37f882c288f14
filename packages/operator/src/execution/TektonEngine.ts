/**
 * The `tekton` engine: a tekton.dev/v1 PipelineRun per execution in the workflow namespace, its Pipeline resolved
 * from the workflow's bundle by Tekton's bundles resolver (pinned by digest when known; `engineConfig.pipelineName`
 * names the Pipeline in the bundle, default `workflow`), the parameters as PipelineRun params, the runner
 * ServiceAccount on every TaskRun and the executing timeout as `timeouts.pipeline`. Its `Succeeded` condition
 * decides: True completed, False failed (a `PipelineRunTimeout` reason is a deadline), Unknown still running.
 */
import { formatGoDuration } from "@kubemend/core/Config"
import type { KubeObject } from "@kubemend/core/K8s"
import { Effect, Option } from "effect"
import type { ClusterService } from "../runtime/Cluster.ts"
import { type Engine, executionAnnotations, executionLabels, type Observation, resourceName, type Run, type RunContext } from "../clients/Engine.ts"
import { pinnedImage } from "./JobEngine.ts"

export const renderPipelineRun = (run: Run): KubeObject => {
  const wf = run.workflow
  const engineConfig = (wf.engineConfig ?? run.we.spec.workflowRef.engineConfig ?? {}) as { pipelineName?: unknown }
  const pipeline = typeof engineConfig.pipelineName === "string" && engineConfig.pipelineName !== "" ? engineConfig.pipelineName : "workflow"
  return {
    apiVersion: "tekton.dev/v1",
    kind: "PipelineRun",
    metadata: {
      name: resourceName(run.we.metadata.name),
      namespace: run.settings.workflowNamespace,
      labels: executionLabels(run, wf.workflowId),
      annotations: executionAnnotations(run)
    },
    spec: {
      pipelineRef: {
        resolver: "bundles",
        params: [
          {
            name: "bundle",
            value: pinnedImage(
              wf.executionBundle ?? run.we.spec.workflowRef.executionBundle ?? "",
              wf.executionBundleDigest ?? run.we.spec.workflowRef.executionBundleDigest
            )
          },
          { name: "name", value: pipeline },
          { name: "kind", value: "pipeline" }
        ]
      },
      params: [
        ...Object.entries(run.parameters).map(([name, value]) => ({ name, value })),
        { name: "ACTION_TYPE", value: wf.actionType }
      ],
      ...(wf.serviceAccountName === undefined ? {} : { taskRunTemplate: { serviceAccountName: wf.serviceAccountName } }),
      timeouts: { pipeline: formatGoDuration(run.timeout) }
    }
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw Kubernetes JSON, walked field by field
type Json = Record<string, any>

export const makeTektonEngine = (cluster: ClusterService): Engine => {
  const ref = (run: Pick<RunContext, "settings">, name: string) => ({
    apiVersion: "tekton.dev/v1",
    kind: "PipelineRun",
    name,
    namespace: run.settings.workflowNamespace
  })
  return {
    name: "tekton",
    start: (run) => Effect.map(cluster.apply(renderPipelineRun(run)), (pr) => pr.metadata.name),
    observe: (run, name) =>
      Effect.map(cluster.get(ref(run, name)), (found): Observation => {
        if (Option.isNone(found)) return { _tag: "Gone" }
        const status = (found.value.status ?? {}) as Json
        const succeeded = ((status["conditions"] ?? []) as Array<Json>).find((c) => c["type"] === "Succeeded")
        const reason = String(succeeded?.["reason"] ?? "Running")
        const message = String(succeeded?.["message"] ?? "")
        const tasks = (status["childReferences"] ?? []) as Array<Json>
        if (succeeded?.["status"] === "True") {
          return {
            _tag: "Succeeded",
            reason,
            message: message === "" ? `pipelinerun ${name} succeeded` : message,
            completedTasks: tasks.length,
            totalTasks: tasks.length
          }
        }
        if (succeeded?.["status"] === "False") {
          return {
            _tag: "Failed",
            reason: reason === "PipelineRunTimeout"
              ? "DeadlineExceeded"
              : reason === "CouldntGetPipeline" || reason === "InvalidParamValue"
              ? "ConfigurationError"
              : "TaskFailed",
            engineReason: reason,
            message: message === "" ? `pipelinerun ${name} failed (${reason})` : message,
            taskName: name,
            wasExecutionFailure: reason !== "CouldntGetPipeline" && reason !== "InvalidParamValue"
          }
        }
        return { _tag: "Running", ...(message === "" ? {} : { message }) }
      }),
    cancel: (run, name) => Effect.asVoid(cluster.remove(ref(run, name)))
  }
}
