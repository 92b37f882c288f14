/**
 * The cluster API as the services use it. Live on `@kubernetes/client-node` (K8s/Live.ts), in memory for unit tests
 * (K8s/Memory.ts); one contract suite runs against both.
 */
import type { PodLogQuery } from "./K8s/PodLogs.ts"
import type { Duration, Effect, Option, Stream } from "effect"
import { Context, Schema } from "effect"

/** Object metadata subset every service reads. Unknown fields are kept. */
export interface ObjectMeta {
  readonly name: string
  readonly namespace?: string
  readonly uid?: string
  readonly resourceVersion?: string
  readonly generation?: number
  readonly creationTimestamp?: string
  readonly deletionTimestamp?: string
  readonly labels?: Readonly<Record<string, string>>
  readonly annotations?: Readonly<Record<string, string>>
  readonly ownerReferences?: ReadonlyArray<Record<string, unknown>>
  readonly finalizers?: ReadonlyArray<string>
  readonly [key: string]: unknown
}

/** Any Kubernetes object as JSON. Typed views decode `spec`/`status` with the domain schemas. */
export interface KubeObject {
  readonly apiVersion?: string
  readonly kind?: string
  readonly metadata: ObjectMeta
  readonly spec?: unknown
  readonly status?: unknown
  readonly [key: string]: unknown
}

export interface KubeList {
  readonly items: ReadonlyArray<KubeObject>
  readonly resourceVersion: string
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED"

export interface WatchEvent {
  readonly type: WatchEventType
  readonly object: KubeObject
}

/** Plural names of the platform's custom resources (group = configured API group, version v1alpha1). */
export type CrPlural =
  | "remediationrequests"
  | "remediationapprovalrequests"
  | "aianalyses"
  | "signalprocessings"
  | "workflowexecutions"
  | "investigationsessions"
  | "effectivenessassessments"
  | "notificationrequests"
  | "kubemends"

export interface ListOptions {
  readonly labelSelector?: string
  readonly fieldSelector?: string
}

/**
 * A resource addressed by kind; `apiVersion` or `apiGroup` disambiguates kinds served by several groups. For a
 * cluster-scoped kind (Node, PersistentVolume, ClusterIssuer) `namespace` is ignored.
 */
export interface ResourceRef {
  readonly kind: string
  readonly namespace: string
  readonly apiVersion?: string
  readonly apiGroup?: string
}

export interface EventFilter {
  readonly namespace: string
  readonly reason?: string
  readonly involvedObjectKind?: string
  readonly involvedObjectName?: string
}

export interface Lease {
  readonly name: string
  readonly holder: string
  readonly acquiredAt: Date
  readonly renewedAt: Date
  readonly ttl: Duration.Duration
}

export interface AccessReview {
  readonly user: string
  readonly groups: ReadonlyArray<string>
  readonly verb: string
  readonly group: string
  readonly resource: string
  /** Where the resource lives; absent: cluster-wide (allowed only by ClusterRoleBindings). */
  readonly namespace?: string
  readonly name?: string
}

export interface ReviewedUser {
  readonly username: string
  readonly uid?: string
  readonly groups: ReadonlyArray<string>
}

export class K8sNotFound extends Schema.TaggedError<K8sNotFound>()("K8sNotFound", {
  kind: Schema.String,
  name: Schema.String
}) {}

export class K8sConflict extends Schema.TaggedError<K8sConflict>()("K8sConflict", {
  kind: Schema.String,
  name: Schema.String,
  message: Schema.String
}) {}

/** The kind is served by more than one API group and the caller gave none; `groups` lists the candidates. */
export class K8sAmbiguousKind extends Schema.TaggedError<K8sAmbiguousKind>()("K8sAmbiguousKind", {
  kind: Schema.String,
  groups: Schema.Array(Schema.String)
}) {}

/** The kind is not served by the cluster (REST mapping failed). */
export class K8sUnknownKind extends Schema.TaggedError<K8sUnknownKind>()("K8sUnknownKind", {
  kind: Schema.String
}) {}

/** The lease is held by someone else and has not expired. */
export class K8sLeaseHeld extends Schema.TaggedError<K8sLeaseHeld>()("K8sLeaseHeld", {
  name: Schema.String,
  holder: Schema.String
}) {}

/** Anything else: timeouts, 5xx, network, 403 to our own identity, 429 after retries. */
export class K8sUnavailable extends Schema.TaggedError<K8sUnavailable>()("K8sUnavailable", {
  message: Schema.String,
  status: Schema.optional(Schema.Number),
  cause: Schema.optional(Schema.Defect)
}) {}

export type K8sError = K8sNotFound | K8sConflict | K8sUnavailable

export interface K8sService {
  /** The controller namespace the platform CRs live in (injected server-side, never taken from callers). */
  readonly namespace: string
  /** The platform's API group (e.g. `kubemend.io`). */
  readonly apiGroup: string

  readonly getCr: (plural: CrPlural, name: string) => Effect.Effect<KubeObject, K8sNotFound | K8sUnavailable>
  readonly listCr: (plural: CrPlural, options?: ListOptions) => Effect.Effect<KubeList, K8sUnavailable>
  readonly createCr: (plural: CrPlural, body: KubeObject) => Effect.Effect<KubeObject, K8sConflict | K8sUnavailable>
  /** JSON merge-patch of the object (status is ignored by the server); retries 409 with client-go's backoff. */
  readonly patchCr: (
    plural: CrPlural,
    name: string,
    patch: Record<string, unknown>
  ) => Effect.Effect<KubeObject, K8sNotFound | K8sConflict | K8sUnavailable>
  /**
   * JSON merge-patch of the status subresource. With `resourceVersion` the write happens only if the object is still
   * at that version (a decision made on what was read); a lost race is K8sConflict, never retried. Without it,
   * conflicts are retried with client-go's backoff.
   */
  readonly patchCrStatus: (
    plural: CrPlural,
    name: string,
    status: Record<string, unknown>,
    options?: { readonly resourceVersion?: string | undefined }
  ) => Effect.Effect<KubeObject, K8sNotFound | K8sConflict | K8sUnavailable>
  readonly deleteCr: (plural: CrPlural, name: string) => Effect.Effect<void, K8sNotFound | K8sUnavailable>
  /**
   * Changes to CRs of one plural (optionally one name). Starts with a list (ADDED for each current object), then
   * watches from its resourceVersion; reconnects from the last seen resourceVersion when the server closes the
   * stream; relists on 410 Gone with capped backoff. Never ends by itself.
   */
  readonly watchCr: (
    plural: CrPlural,
    options?: ListOptions & { readonly name?: string }
  ) => Stream.Stream<WatchEvent, K8sUnavailable>

  /**
   * Core v1 Events of one namespace, or of all namespaces when `namespace` is undefined, as an informer like
   * `watchCr` (list, then watch; reconnect; relist on 410). `fieldSelector` narrows them (e.g. `type=Warning`).
   */
  readonly watchEvents: (
    options?: { readonly namespace?: string; readonly fieldSelector?: string }
  ) => Stream.Stream<WatchEvent, K8sUnavailable>

  /** Generic read of any served kind (namespaced or cluster-scoped) through the REST mapper. Secret `.data`/`.stringData` values are redacted. */
  readonly getResource: (
    ref: ResourceRef & { readonly name: string }
  ) => Effect.Effect<KubeObject, K8sNotFound | K8sAmbiguousKind | K8sUnknownKind | K8sUnavailable>
  readonly listResources: (
    ref: ResourceRef & ListOptions
  ) => Effect.Effect<KubeList, K8sAmbiguousKind | K8sUnknownKind | K8sUnavailable>
  readonly listEvents: (filter: EventFilter) => Effect.Effect<ReadonlyArray<KubeObject>, K8sUnavailable>
  /**
   * A container's log (`pods/<name>/log`): `previous` reads the last terminated container. The server's 400s (no such
   * container, no previous container) come back as K8sUnavailable with `status: 400` and its message.
   */
  readonly podLog: (
    ref: { readonly namespace: string; readonly name: string } & PodLogQuery
  ) => Effect.Effect<string, K8sNotFound | K8sUnavailable>

  /** Acquire (or take over an expired) coordination.k8s.io Lease in the controller namespace. */
  readonly acquireLease: (
    name: string,
    holder: string,
    ttl: Duration.Duration
  ) => Effect.Effect<Lease, K8sLeaseHeld | K8sUnavailable>
  /** Forcefully move a lease to a new holder (takeover). */
  readonly takeoverLease: (name: string, holder: string, ttl: Duration.Duration) => Effect.Effect<Lease, K8sUnavailable>
  readonly renewLease: (name: string, holder: string) => Effect.Effect<Lease, K8sLeaseHeld | K8sNotFound | K8sUnavailable>
  readonly releaseLease: (name: string, holder: string) => Effect.Effect<void, K8sUnavailable>
  readonly listLeases: (prefix: string) => Effect.Effect<ReadonlyArray<Lease>, K8sUnavailable>

  /** SubjectAccessReview: true when allowed. */
  readonly subjectAccessReview: (review: AccessReview) => Effect.Effect<boolean, K8sUnavailable>
  /** TokenReview: the authenticated user, or None when the token is not valid. */
  readonly tokenReview: (token: string) => Effect.Effect<Option.Option<ReviewedUser>, K8sUnavailable>
}

export class K8s extends Context.Tag("@kubemend/core/K8s")<K8s, K8sService>() {}
