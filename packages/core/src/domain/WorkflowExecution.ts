/**
 * WorkflowExecution, `{api_group}/v1alpha1`: runs the selected workflow against the target. The routing engine
 * reads it for `ResourceBusy`; the terminal cascade patches its phase to `Failed`.
 */
import { Schema } from "effect"
import { Enum, Int, Loose, NonEmpty, optional } from "./Common.ts"
import { Condition, ObjectReference, resource } from "./Meta.ts"

export const WorkflowExecutionKind = "WorkflowExecution"
export const WorkflowExecutionPlural = "workflowexecutions"

export const WorkflowExecutionPhase = Enum("Pending", "Running", "Completed", "Failed")
export type WorkflowExecutionPhase = typeof WorkflowExecutionPhase.Type

export const WorkflowRef = Schema.Struct({
  workflowId: NonEmpty,
  version: optional(Schema.String),
  workflowName: optional(Schema.String),
  executionBundle: optional(Schema.String),
  executionBundleDigest: optional(Schema.String),
  engineConfig: optional(Loose)
})

export const WorkflowExecutionSpec = Schema.Struct({
  remediationRequestRef: ObjectReference,
  /** The target as `namespace/Kind/name` (or `Kind/name` when cluster-scoped), as the original writes it. */
  targetResource: NonEmpty,
  workflowRef: WorkflowRef,
  parameters: optional(Loose),
  confidence: optional(Schema.Number),
  rationale: optional(Schema.String),
  executionConfig: optional(Schema.Struct({ timeout: optional(Schema.String) }))
})

export const WorkflowExecutionStatus = Schema.Struct({
  phase: optional(WorkflowExecutionPhase),
  startTime: optional(Schema.String),
  completionTime: optional(Schema.String),
  duration: optional(Schema.String),
  executionEngine: optional(Schema.String),
  executionRef: optional(Schema.Struct({ name: optional(Schema.String) })),
  /** The execution resource's own verdict (a Job's or PipelineRun's condition, an AWX job's status). */
  executionStatus: optional(Schema.Struct({
    status: Schema.String,
    reason: optional(Schema.String),
    message: optional(Schema.String),
    completedTasks: optional(Int),
    totalTasks: optional(Int)
  })),
  /** The runner ServiceAccount resolved from the catalog. */
  serviceAccountName: optional(Schema.String),
  /** `specHash` of the target's spec read just before the run started (effectiveness compares against it). */
  preRemediationSpecHash: optional(Schema.String),
  failureReason: optional(Schema.String),
  failureDetails: optional(Loose),
  observedGeneration: optional(Int),
  conditions: optional(Schema.Array(Condition))
})

export const WorkflowExecution = resource(WorkflowExecutionKind, WorkflowExecutionSpec, WorkflowExecutionStatus)
export interface WorkflowExecution extends Schema.Schema.Type<typeof WorkflowExecution> {}

/** `namespace/Kind/name`, or `Kind/name` for a cluster-scoped target. */
export const formatTargetResource = (t: { readonly kind: string; readonly name: string; readonly namespace?: string }) =>
  t.namespace === undefined || t.namespace === "" ? `${t.kind}/${t.name}` : `${t.namespace}/${t.kind}/${t.name}`
