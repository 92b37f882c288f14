/**
 * What every execution engine (Job, Tekton PipelineRun, AWX job template) offers the controller: start a run,
 * look at it, stop it. The controller owns the WorkflowExecution's status; an engine only reports.
 */
import type { K8sConflict, K8sNotFound, K8sUnavailable } from "@kubemend/core/K8s"
import type { RemediationWorkflow } from "@kubemend/core/StorageApi"
import { Data, type Duration, type Effect } from "effect"
import type { WorkflowExecution } from "../remediation/Objects.ts"
import type { ExecutionSettings } from "../remediation/ExecutionConfig.ts"

/** `failureDetails.reason` values of the reference CRD. */
export type FailureReason =
  | "OOMKilled"
  | "DeadlineExceeded"
  | "Forbidden"
  | "ResourceExhausted"
  | "ConfigurationError"
  | "ImagePullBackOff"
  | "TaskFailed"
  | "UnsupportedEngine"
  | "Unknown"

/** What observing or stopping a run needs. */
export interface RunContext {
  readonly we: WorkflowExecution
  readonly settings: ExecutionSettings
  /** The platform's API group (labels). */
  readonly apiGroup: string
}

export interface Run extends RunContext {
  readonly workflow: RemediationWorkflow
  /** Validated parameters, as strings. */
  readonly parameters: Readonly<Record<string, string>>
  /** The executing deadline of this run. */
  readonly timeout: Duration.Duration
}

export type Observation =
  | { readonly _tag: "Running"; readonly message?: string }
  | {
    readonly _tag: "Succeeded"
    readonly reason: string
    readonly message: string
    readonly completedTasks?: number
    readonly totalTasks?: number
  }
  | {
    readonly _tag: "Failed"
    readonly reason: FailureReason
    /** The engine's own reason (`BackoffLimitExceeded`, `PipelineRunTimeout`, AWX `failed`). */
    readonly engineReason: string
    readonly message: string
    readonly taskName: string
    readonly exitCode?: number
    /** Redacted last lines of the failed step's log. */
    readonly logTail?: string
    /** False when nothing ran (image pull, configuration): the target was not touched. */
    readonly wasExecutionFailure: boolean
  }
  /** The execution resource is gone (deleted by someone). */
  | { readonly _tag: "Gone" }

/** An engine's backend could not be reached or refused a call; the reconcile is retried with backoff. */
export class EngineUnavailable extends Data.TaggedError("EngineUnavailable")<{ readonly engine: string; readonly message: string }> {}

/** The engine refused the run for good (no such job template, bad request): the execution fails. */
export class EngineRejected extends Data.TaggedError("EngineRejected")<{
  readonly reason: FailureReason
  readonly message: string
}> {}

export type EngineError = EngineUnavailable | EngineRejected | K8sUnavailable | K8sNotFound | K8sConflict

export interface Engine {
  readonly name: "job" | "tekton" | "ansible"
  /** Starts the run (idempotent: a retried start finds its own earlier one); the execution resource's name. */
  readonly start: (run: Run) => Effect.Effect<string, EngineError>
  readonly observe: (run: RunContext, ref: string) => Effect.Effect<Observation, EngineError>
  /** Stops the run and removes what it created; a missing resource is fine. */
  readonly cancel: (run: RunContext, ref: string) => Effect.Effect<void, EngineError>
}

/** Labels on everything an execution creates: the request, the execution and the workflow it runs. */
export const executionLabels = (run: Pick<RunContext, "we" | "apiGroup">, workflowId?: string) => ({
  "app.kubernetes.io/managed-by": "kubemend",
  [`${run.apiGroup}/remediation-request`]: (run.we.spec.remediationRequestRef.name ?? "").slice(0, 63),
  [`${run.apiGroup}/workflow-execution`]: run.we.metadata.name.slice(0, 63),
  ...(workflowId === undefined ? {} : { [`${run.apiGroup}/workflow-id`]: workflowId.slice(0, 63) })
})

/**
 * Links back to the request. Owner references cannot cross namespaces (the run is in the workflow namespace, the
 * request in the controller namespace), so the links are annotations and the controller deletes what it created.
 */
export const executionAnnotations = (run: Pick<RunContext, "we" | "apiGroup">) => {
  const ref = run.we.spec.remediationRequestRef
  return {
    [`${run.apiGroup}/remediation-request`]: `${ref.namespace ?? run.we.metadata.namespace ?? ""}/${ref.name ?? ""}`,
    [`${run.apiGroup}/workflow-execution`]: `${run.we.metadata.namespace ?? ""}/${run.we.metadata.name}`
  }
}

/** Kubernetes names: at most 63 characters (Job names become pod labels); a long name keeps a hash suffix. */
export const resourceName = (weName: string): string => {
  if (weName.length <= 63) return weName
  let h = 0
  for (const c of weName) h = (Math.imul(h, 31) + c.charCodeAt(0)) | 0
  return `${weName.slice(0, 54)}-${(h >>> 0).toString(36).padStart(7, "0").slice(0, 8)}`.slice(0, 63)
}
