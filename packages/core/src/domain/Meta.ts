/**
 * Kubernetes object pieces shared by the custom resources: metadata subset, conditions, references, and the
 * envelope every resource schema uses. Decoding ignores fields not named here (they are never rejected); pass
 * `{ onExcessProperty: "preserve" }` to keep them.
 */
import { Schema } from "effect"
import { Enum, Int, NonEmpty, optional, StringMap } from "./Common.ts"

/** Default API group of the platform's custom resources (configurable; the original used `kubernaut.ai`). */
export const DefaultApiGroup = "kubemend.io"
/** Version of every custom resource of the platform. */
export const CrVersion = "v1alpha1"
export const apiVersionFor = (group: string = DefaultApiGroup) => `${group}/${CrVersion}`

/** Label that marks a namespace or resource as managed (`UnmanagedResource` blocks without it). */
export const managedLabel = (group: string = DefaultApiGroup) => `${group}/managed`

export const OwnerReference = Schema.Struct({
  apiVersion: Schema.String,
  kind: Schema.String,
  name: Schema.String,
  uid: Schema.String,
  controller: optional(Schema.Boolean),
  blockOwnerDeletion: optional(Schema.Boolean)
})

export const ObjectMeta = Schema.Struct({
  name: NonEmpty,
  namespace: optional(Schema.String),
  uid: optional(Schema.String),
  resourceVersion: optional(Schema.String),
  generation: optional(Int),
  creationTimestamp: optional(Schema.String),
  deletionTimestamp: optional(Schema.String),
  labels: optional(StringMap),
  annotations: optional(StringMap),
  ownerReferences: optional(Schema.Array(OwnerReference)),
  finalizers: optional(Schema.Array(Schema.String))
})
export interface ObjectMeta extends Schema.Schema.Type<typeof ObjectMeta> {}

/** `metav1.Condition`. */
export const Condition = Schema.Struct({
  type: NonEmpty,
  status: Enum("True", "False", "Unknown"),
  reason: optional(Schema.String),
  message: optional(Schema.String),
  lastTransitionTime: optional(Schema.String),
  observedGeneration: optional(Int)
})
export interface Condition extends Schema.Schema.Type<typeof Condition> {}

/** `corev1.ObjectReference` subset used by the CRs to point at each other. */
export const ObjectReference = Schema.Struct({
  apiVersion: optional(Schema.String),
  kind: optional(Schema.String),
  name: optional(Schema.String),
  namespace: optional(Schema.String),
  uid: optional(Schema.String),
  resourceVersion: optional(Schema.String),
  fieldPath: optional(Schema.String)
})
export interface ObjectReference extends Schema.Schema.Type<typeof ObjectReference> {}

/** A reference by name only (`aiAnalysisRef`, secret names …). */
export const LocalRef = Schema.Struct({ name: NonEmpty })

/** The target of a remediation: a namespaced (or cluster-scoped when `namespace` is absent) resource. */
export const TargetResource = Schema.Struct({
  apiVersion: optional(Schema.String),
  kind: NonEmpty,
  name: NonEmpty,
  namespace: optional(Schema.String)
})
export interface TargetResource extends Schema.Schema.Type<typeof TargetResource> {}

/**
 * The envelope of a custom resource: `apiVersion` and `kind` are optional because list items and watch objects
 * sometimes omit them, and the API group is configurable so `apiVersion` is not a literal.
 */
export const resource = <SpecA, SpecI, StatusA, StatusI>(
  kind: string,
  spec: Schema.Schema<SpecA, SpecI, never>,
  status: Schema.Schema<StatusA, StatusI, never>
) =>
  Schema.Struct({
    apiVersion: optional(Schema.String),
    kind: optional(Schema.String),
    metadata: ObjectMeta,
    spec,
    status: optional(status)
  }).annotations({ title: kind })
