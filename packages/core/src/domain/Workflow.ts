/**
 * Workflow catalog and action-type records of the storage service (storage OpenAPI 1.5.7 names, camelCase). A
 * workflow is registered from the YAML of a RemediationWorkflow document; its id is a deterministic UUIDv5 of the
 * content hash, and `(workflowName, version)` plus `contentHash` identify a registration.
 */
import { Schema } from "effect"
import { DateTimeString, Enum, Int, Loose, minItems, NonEmpty, optional, UuidString } from "./Common.ts"

/** Catalog status. The spec shows `Active`/`Deprecated`; `Disabled` comes from the disable operation and
 * `Archived`/`Superseded` from the original's catalog (superseded versions of a name). */
export const WorkflowStatus = Enum("Active", "Disabled", "Deprecated", "Archived", "Superseded")
export type WorkflowStatus = typeof WorkflowStatus.Type

export const ExecutionEngine = Enum("tekton", "job", "ansible")

/** What / when / when not: the structured description of workflows and action types. */
export const StructuredDescription = Schema.Struct({
  what: Schema.String,
  whenToUse: Schema.String,
  whenNotToUse: optional(Schema.String),
  preconditions: optional(Schema.String)
})

export const WorkflowParameterType = Enum("string", "integer", "boolean", "array", "float", "number")

/** A workflow input parameter; the agent validates proposed values against it (type, pattern, enum, range). */
export const WorkflowParameter = Schema.Struct({
  name: NonEmpty,
  type: WorkflowParameterType,
  description: Schema.String,
  required: Schema.Boolean,
  default: optional(Schema.Unknown),
  pattern: optional(Schema.String),
  enum: optional(Schema.Array(Schema.String)),
  minimum: optional(Schema.Number),
  maximum: optional(Schema.Number),
  dependsOn: optional(Schema.Array(Schema.String))
})
export interface WorkflowParameter extends Schema.Schema.Type<typeof WorkflowParameter> {}

const nonEmptyList = <A, I>(item: Schema.Schema<A, I, never>) => Schema.Array(item).pipe(minItems(1))

/** The mandatory discovery labels; `*` matches any value. */
export const WorkflowLabels = Schema.Struct({
  severity: nonEmptyList(Enum("critical", "high", "warning", "info", "*")),
  component: nonEmptyList(Schema.String),
  environment: nonEmptyList(Schema.String),
  priority: Schema.String
})

/** `POST /api/v1/workflows`: the raw YAML of a RemediationWorkflow document. */
export const WorkflowRegistrationRequest = Schema.Struct({
  content: NonEmpty,
  source: optional(Schema.String),
  registeredBy: optional(Schema.String)
})

/** The `spec` of a RemediationWorkflow document (what registration parses out of `content`). */
export const RemediationWorkflowSpec = Schema.Struct({
  version: NonEmpty.pipe(Schema.maxLength(50)),
  actionType: NonEmpty,
  description: StructuredDescription,
  labels: WorkflowLabels,
  customLabels: optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  detectedLabels: optional(Loose),
  execution: optional(
    Schema.Struct({
      engine: optional(ExecutionEngine),
      bundle: optional(Schema.String),
      bundleDigest: optional(Schema.String),
      engineConfig: optional(Loose),
      serviceAccountName: optional(Schema.String)
    })
  ),
  parameters: nonEmptyList(WorkflowParameter),
  rollbackParameters: optional(Schema.Array(WorkflowParameter)),
  maintainers: optional(Schema.Array(Schema.Struct({ name: Schema.String, email: Schema.String })))
})

export const RemediationWorkflowDocument = Schema.Struct({
  apiVersion: optional(Schema.String),
  kind: optional(Schema.String),
  metadata: Schema.Struct({ name: NonEmpty }),
  spec: RemediationWorkflowSpec
})
export interface RemediationWorkflowDocument extends Schema.Schema.Type<typeof RemediationWorkflowDocument> {}

/** A stored catalog workflow. */
export const Workflow = Schema.Struct({
  workflowId: UuidString,
  workflowName: NonEmpty.pipe(Schema.maxLength(255)),
  /** Human-readable title. */
  name: Schema.String,
  version: NonEmpty.pipe(Schema.maxLength(50)),
  schemaVersion: optional(Schema.String),
  description: StructuredDescription,
  actionType: NonEmpty,
  content: Schema.String,
  contentHash: Schema.String.pipe(Schema.pattern(/^[a-f0-9]{64}$/)),
  status: WorkflowStatus,
  statusReason: optional(Schema.String),
  labels: WorkflowLabels,
  customLabels: optional(Loose),
  detectedLabels: optional(Loose),
  parameters: optional(Schema.Array(WorkflowParameter)),
  executionEngine: optional(Schema.String),
  executionBundle: optional(Schema.String),
  executionBundleDigest: optional(Schema.String),
  serviceAccountName: optional(Schema.String),
  owner: optional(Schema.String),
  maintainer: optional(Schema.String),
  isLatestVersion: optional(Schema.Boolean),
  previousVersion: optional(Schema.String),
  deprecationNotice: optional(Schema.String),
  disabledAt: optional(DateTimeString),
  disabledBy: optional(Schema.String),
  disabledReason: optional(Schema.String),
  expectedSuccessRate: optional(Schema.Number.pipe(Schema.between(0, 1))),
  actualSuccessRate: optional(Schema.Number.pipe(Schema.between(0, 1))),
  expectedDurationSeconds: optional(Int.pipe(Schema.nonNegative())),
  totalExecutions: optional(Int.pipe(Schema.nonNegative())),
  successfulExecutions: optional(Int.pipe(Schema.nonNegative())),
  createdAt: optional(DateTimeString),
  updatedAt: optional(DateTimeString),
  createdBy: optional(Schema.String),
  updatedBy: optional(Schema.String)
})
export interface Workflow extends Schema.Schema.Type<typeof Workflow> {}

/** `PATCH /api/v1/workflows/{id}/disable|enable|deprecate`: the reason is mandatory. */
export const WorkflowLifecycleRequest = Schema.Struct({ reason: NonEmpty, updatedBy: optional(Schema.String) })

/** Discovery step 2 item (no parameter schema, no scores). */
export const WorkflowDiscoveryEntry = Schema.Struct({
  workflowId: UuidString,
  workflowName: Schema.String,
  name: Schema.String,
  description: StructuredDescription,
  version: Schema.String,
  schemaVersion: optional(Schema.String),
  executionBundle: optional(Schema.String),
  executionEngine: optional(ExecutionEngine),
  serviceAccountName: optional(Schema.String)
})

/** A stored action type, keyed by its PascalCase identifier. */
export const ActionType = Schema.Struct({
  actionType: NonEmpty,
  description: StructuredDescription,
  // Action types go through the same statuses as workflows.
  status: WorkflowStatus,
  disabledAt: optional(DateTimeString),
  disabledBy: optional(Schema.String),
  createdAt: optional(DateTimeString),
  updatedAt: optional(DateTimeString),
  registeredBy: optional(Schema.String)
})
export interface ActionType extends Schema.Schema.Type<typeof ActionType> {}

/** `POST /api/v1/action-types` (create or re-enable). */
export const ActionTypeCreateRequest = Schema.Struct({
  /** PascalCase identifier, e.g. `RestartPod`. */
  name: NonEmpty,
  description: StructuredDescription,
  registeredBy: NonEmpty
})

export const ActionTypeCreateResponse = Schema.Struct({
  actionType: Schema.String,
  description: optional(StructuredDescription),
  status: Enum("created", "exists", "reenabled"),
  wasReenabled: Schema.Boolean
})

/** Discovery step 1 item: an action type with the number of active workflows matching the filters. */
export const ActionTypeEntry = Schema.Struct({
  actionType: Schema.String,
  description: StructuredDescription,
  workflowCount: Int.pipe(Schema.nonNegative())
})

export const ActionTypeUpdateRequest = Schema.Struct({
  description: StructuredDescription,
  updatedBy: optional(Schema.String)
})

export const ActionTypeDisableRequest = Schema.Struct({ disabledBy: NonEmpty })
