/**
 * The catalog as custom resources, `{api_group}/v1alpha1`: a `RemediationWorkflow` (a workflow a platform user
 * applies with kubectl) and an `ActionType` (an entry of the action-type taxonomy). The catalog controller registers
 * each in the storage service's catalog and reports the outcome in `status`. The spec follows the reference CRDs
 * field for field (`customLabels` values are strings there), so a document written for the original applies here.
 */
import { Schema } from "effect"
import { DateTimeString, Enum, Int, Loose, minItems, NonEmpty, optional, StringMap } from "./Common.ts"
import { Condition, resource } from "./Meta.ts"
import { StructuredDescription } from "./Workflow.ts"

export const RemediationWorkflowKind = "RemediationWorkflow"
export const RemediationWorkflowPlural = "remediationworkflows"
export const ActionTypeKind = "ActionType"
export const ActionTypePlural = "actiontypes"

/** Any JSON value kept as it is (`default` of a parameter): a structural schema needs the preserve marker. */
const AnyValue = Schema.Unknown.annotations({ jsonSchema: { "x-kubernetes-preserve-unknown-fields": true } })

const Parameter = Schema.Struct({
  name: Schema.String,
  type: Enum("string", "integer", "boolean", "array", "float"),
  description: Schema.String,
  required: Schema.Boolean,
  default: optional(AnyValue),
  dependsOn: optional(Schema.Array(Schema.String)),
  enum: optional(Schema.Array(Schema.String)),
  minimum: optional(Schema.Number),
  maximum: optional(Schema.Number),
  pattern: optional(Schema.String)
})

const nonEmpty = Schema.Array(Schema.String).pipe(minItems(1))
const ByName = Schema.Struct({ name: Schema.String })

export const RemediationWorkflowResourceSpec = Schema.Struct({
  version: Schema.String.pipe(Schema.maxLength(50)),
  actionType: Schema.String,
  description: StructuredDescription,
  labels: Schema.Struct({ severity: nonEmpty, component: nonEmpty, environment: nonEmpty, priority: Schema.String }),
  customLabels: optional(StringMap),
  detectedLabels: optional(Loose),
  execution: Schema.Struct({
    engine: optional(Enum("tekton", "job", "ansible")),
    bundle: optional(Schema.String),
    bundleDigest: optional(Schema.String),
    engineConfig: optional(Loose),
    serviceAccountName: optional(Schema.String)
  }),
  parameters: Schema.Array(Parameter).pipe(minItems(1)),
  rollbackParameters: optional(Schema.Array(Parameter)),
  dependencies: optional(Schema.Struct({ configMaps: optional(Schema.Array(ByName)), secrets: optional(Schema.Array(ByName)) })),
  maintainers: optional(Schema.Array(Schema.Struct({ name: Schema.String, email: Schema.String })))
})

/** The catalog lifecycle state a resource reflects (reference CRD values). */
export const CatalogStatus = Enum("Active", "Invalid", "Pending", "Deprecated", "Archived", "Disabled", "Superseded")
export type CatalogStatus = typeof CatalogStatus.Type

export const RemediationWorkflowResourceStatus = Schema.Struct({
  /** The catalog id (UUIDv5 of the content hash) of the registered content. */
  workflowId: optional(Schema.String),
  /** SHA-256 of the registered content, as the catalog computed it. */
  contentHash: optional(Schema.String),
  catalogStatus: optional(CatalogStatus),
  /** The `metadata.generation` the status describes. */
  observedGeneration: optional(Int),
  registeredAt: optional(DateTimeString),
  registeredBy: optional(Schema.String),
  previouslyExisted: optional(Schema.Boolean),
  conditions: optional(Schema.Array(Condition))
})

export const RemediationWorkflowResource = resource(RemediationWorkflowKind, RemediationWorkflowResourceSpec, RemediationWorkflowResourceStatus)
export interface RemediationWorkflowResource extends Schema.Schema.Type<typeof RemediationWorkflowResource> {}

export const ActionTypeResourceSpec = Schema.Struct({
  /** PascalCase identifier (`RestartPod`); the catalog key. */
  name: NonEmpty.pipe(Schema.maxLength(255)),
  description: StructuredDescription
})

export const ActionTypeResourceStatus = Schema.Struct({
  registered: optional(Schema.Boolean),
  catalogStatus: optional(CatalogStatus),
  activeWorkflowCount: optional(Int),
  observedGeneration: optional(Int),
  registeredAt: optional(DateTimeString),
  registeredBy: optional(Schema.String),
  previouslyExisted: optional(Schema.Boolean),
  conditions: optional(Schema.Array(Condition))
})

export const ActionTypeResource = resource(ActionTypeKind, ActionTypeResourceSpec, ActionTypeResourceStatus)
export interface ActionTypeResource extends Schema.Schema.Type<typeof ActionTypeResource> {}
