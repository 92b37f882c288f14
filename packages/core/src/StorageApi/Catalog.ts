/**
 * Wire schemas of the workflow catalog and the action-type taxonomy (camelCase, as in the original storage API).
 * Catalog statuses are PascalCase: `Active`, `Disabled`, `Deprecated`.
 */
import { Schema } from "effect"
import { Int, optional } from "../domain/Common.ts"

const NonEmpty = Schema.String.pipe(Schema.minLength(1))
const IntFromString = Schema.NumberFromString.pipe(Schema.int())
const Json = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export const WorkflowStatus = Schema.Literal("Active", "Disabled", "Deprecated")
export type WorkflowStatus = typeof WorkflowStatus.Type

export const StructuredDescription = Schema.Struct({
  what: Schema.String,
  whenToUse: Schema.String,
  whenNotToUse: optional(Schema.String),
  preconditions: optional(Schema.String)
})
export interface StructuredDescription extends Schema.Schema.Type<typeof StructuredDescription> {}

/** The four mandatory labels a workflow declares; `*` matches anything. */
export const MandatoryLabels = Schema.Struct({
  severity: Schema.Array(Schema.String),
  component: Schema.Array(Schema.String),
  environment: Schema.Array(Schema.String),
  priority: Schema.String
})
export interface MandatoryLabels extends Schema.Schema.Type<typeof MandatoryLabels> {}

export const RemediationWorkflow = Schema.Struct({
  workflowId: Schema.String,
  workflowName: Schema.String,
  actionType: Schema.String,
  version: Schema.String,
  schemaVersion: Schema.String,
  name: Schema.String,
  description: StructuredDescription,
  owner: optional(Schema.String),
  maintainer: optional(Schema.String),
  content: Schema.String,
  contentHash: Schema.String,
  parameters: optional(Json),
  executionEngine: Schema.String,
  executionBundle: optional(Schema.String),
  executionBundleDigest: optional(Schema.String),
  engineConfig: optional(Json),
  serviceAccountName: optional(Schema.String),
  labels: MandatoryLabels,
  customLabels: optional(Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) })),
  detectedLabels: optional(Json),
  status: WorkflowStatus,
  statusReason: optional(Schema.String),
  disabledAt: optional(Schema.String),
  disabledBy: optional(Schema.String),
  disabledReason: optional(Schema.String),
  deprecationNotice: optional(Schema.String),
  isLatestVersion: Schema.Boolean,
  previousVersion: optional(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String,
  createdBy: optional(Schema.String),
  updatedBy: optional(Schema.String)
})
export interface RemediationWorkflow extends Schema.Schema.Type<typeof RemediationWorkflow> {}

/** `content` is the RemediationWorkflow custom resource as YAML (or JSON); the catalog fields come from it. */
export const CreateWorkflowRequest = Schema.Struct({
  content: NonEmpty,
  source: optional(Schema.Literal("crd", "api")),
  registeredBy: optional(Schema.String)
})
export interface CreateWorkflowRequest extends Schema.Schema.Type<typeof CreateWorkflowRequest> {}

/** 201 for a new `(name, version)`; 200 when the same content was already registered (or re-enabled). */
export class WorkflowCreated extends Schema.Class<WorkflowCreated>("WorkflowCreated")({
  ...RemediationWorkflow.fields
}) {}
export class WorkflowUnchanged extends Schema.Class<WorkflowUnchanged>("WorkflowUnchanged")({
  ...RemediationWorkflow.fields
}) {}

export const WorkflowListQuery = Schema.Struct({
  status: optional(WorkflowStatus),
  environment: optional(Schema.String),
  priority: optional(Schema.String),
  component: optional(Schema.String),
  workflow_name: optional(Schema.String),
  limit: optional(IntFromString.pipe(Schema.between(1, 1000))),
  offset: optional(IntFromString.pipe(Schema.nonNegative()))
})
export interface WorkflowListQuery extends Schema.Schema.Type<typeof WorkflowListQuery> {}

export const WorkflowListResponse = Schema.Struct({
  workflows: Schema.Array(RemediationWorkflow),
  limit: Int,
  offset: Int,
  total: Int
})

/** Signal context of discovery and of the get security gate; every given filter must match the labels. */
export const SignalContext = Schema.Struct({
  severity: optional(Schema.String),
  component: optional(Schema.String),
  environment: optional(Schema.String),
  priority: optional(Schema.String),
  custom_labels: optional(Schema.String),
  detected_labels: optional(Schema.String),
  remediation_id: optional(Schema.String)
})
export interface SignalContext extends Schema.Schema.Type<typeof SignalContext> {}

export const DiscoveryQuery = Schema.Struct({
  ...SignalContext.fields,
  offset: optional(IntFromString.pipe(Schema.nonNegative())),
  limit: optional(IntFromString.pipe(Schema.between(1, 100)))
})
export interface DiscoveryQuery extends Schema.Schema.Type<typeof DiscoveryQuery> {}

export const WorkflowUpdateRequest = Schema.Struct({
  status: optional(WorkflowStatus),
  disabledBy: optional(Schema.String),
  disabledReason: optional(Schema.String)
})
export interface WorkflowUpdateRequest extends Schema.Schema.Type<typeof WorkflowUpdateRequest> {}

export const WorkflowLifecycleRequest = Schema.Struct({ reason: NonEmpty, updatedBy: optional(Schema.String) })
export interface WorkflowLifecycleRequest extends Schema.Schema.Type<typeof WorkflowLifecycleRequest> {}

export const DiscoveryPagination = Schema.Struct({
  totalCount: Int,
  offset: Int,
  limit: Int,
  hasMore: Schema.Boolean
})

export const ActionTypeEntry = Schema.Struct({
  actionType: Schema.String,
  description: StructuredDescription,
  workflowCount: Int
})

export const ActionTypeListResponse = Schema.Struct({
  actionTypes: Schema.Array(ActionTypeEntry),
  pagination: DiscoveryPagination
})
export interface ActionTypeListResponse extends Schema.Schema.Type<typeof ActionTypeListResponse> {}

export const WorkflowDiscoveryEntry = Schema.Struct({
  workflowId: Schema.String,
  workflowName: Schema.String,
  name: Schema.String,
  description: StructuredDescription,
  version: Schema.String,
  schemaVersion: optional(Schema.String),
  executionBundle: optional(Schema.String),
  executionEngine: optional(Schema.String),
  serviceAccountName: optional(Schema.String)
})

export const WorkflowDiscoveryResponse = Schema.Struct({
  actionType: Schema.String,
  workflows: Schema.Array(WorkflowDiscoveryEntry),
  pagination: DiscoveryPagination
})
export interface WorkflowDiscoveryResponse extends Schema.Schema.Type<typeof WorkflowDiscoveryResponse> {}

export const ActionTypeCreateRequest = Schema.Struct({
  name: Schema.String.pipe(Schema.pattern(/^[A-Za-z][A-Za-z0-9]*$/)),
  description: StructuredDescription,
  registeredBy: Schema.String
})
export interface ActionTypeCreateRequest extends Schema.Schema.Type<typeof ActionTypeCreateRequest> {}

export const ActionTypeCreateResponse = Schema.Struct({
  actionType: Schema.String,
  status: Schema.Literal("created", "exists", "reenabled"),
  wasReenabled: Schema.Boolean
})
export interface ActionTypeCreateResponse extends Schema.Schema.Type<typeof ActionTypeCreateResponse> {}
export class ActionTypeCreated extends Schema.Class<ActionTypeCreated>("ActionTypeCreated")(
  ActionTypeCreateResponse.fields
) {}
export class ActionTypeExisting extends Schema.Class<ActionTypeExisting>("ActionTypeExisting")(
  ActionTypeCreateResponse.fields
) {}

export const ActionTypeUpdateRequest = Schema.Struct({
  description: StructuredDescription,
  updatedBy: optional(Schema.String)
})

export const ActionTypeUpdateResponse = Schema.Struct({
  actionType: Schema.String,
  oldDescription: StructuredDescription,
  newDescription: StructuredDescription,
  updatedFields: Schema.Array(Schema.String)
})

export const ActionTypeDisableRequest = Schema.Struct({ disabledBy: NonEmpty })

export const ActionTypeDisableResponse = Schema.Struct({
  actionType: Schema.String,
  status: Schema.Literal("Disabled")
})

export const ActionTypeWorkflowCountResponse = Schema.Struct({ count: Int })
