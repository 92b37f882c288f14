/**
 * What the lifecycle controllers share about the resources they handle: child names, the label and owner
 * reference tying a child to its RR, typed reads (domain schemas, lenient: an object that does not decode is
 * skipped with a warning rather than failing every reconcile), and time as RFC 3339 strings from Effect's Clock.
 */
import { AIAnalysis } from "@kubemend/core/domain/AIAnalysis"
import { RemediationApprovalRequest, rarNameFor } from "@kubemend/core/domain/ApprovalRequest"
import type { RRPhase } from "@kubemend/core/domain/Phases"
import { RemediationRequest } from "@kubemend/core/domain/RemediationRequest"
import { WorkflowExecution } from "@kubemend/core/domain/WorkflowExecution"
import type { CrPlural, K8sService, K8sUnavailable, KubeObject } from "@kubemend/core/K8s"
import { Clock, Effect, Option, Schema } from "effect"

export type { AIAnalysis, RemediationApprovalRequest, RemediationRequest, WorkflowExecution }

/** Child names: one of each per RR (analysis attempts after the first get a suffix). */
export const names = {
  signalProcessing: (rr: string) => `sp-${rr}`,
  aiAnalysis: (rr: string, attempt = 1) => (attempt <= 1 ? `ai-${rr}` : `ai-${rr}-r${attempt}`),
  approval: rarNameFor,
  execution: (rr: string) => `we-${rr}`,
  assessment: (rr: string) => `ea-${rr}`,
  notification: (rr: string, kind: string) => `nr-${rr}-${kind}`
} as const

/** Label on every child, so the cascade and GC find them with one selector. */
export const rrLabel = (apiGroup: string) => `${apiGroup}/remediation-request`

/** Label the agent puts on an RR it created from an interactive session: the session's id. */
export const interactiveSessionLabel = (apiGroup: string) => `${apiGroup}/interactive-session`

/** RRs of an interactive investigation: created by the gateway (`source=interactive`) or by the agent. */
export const isInteractive = (rr: RemediationRequest, apiGroup: string): boolean =>
  rr.metadata.labels?.[`${apiGroup}/source`] === "interactive" || rr.spec.signalType === "interactive" ||
  rr.metadata.labels?.[interactiveSessionLabel(apiGroup)] !== undefined

export const phaseOf = (rr: RemediationRequest): RRPhase => rr.status?.overallPhase ?? "Pending"

/** The RR's namespace (the controller namespace), the `namespace` label of the metrics. */
export const namespaceOf = (o: { readonly metadata: { readonly namespace?: string | undefined } }, fallback: string) => o.metadata.namespace ?? fallback

export const iso = (millis: number) => new Date(millis).toISOString()
export const nowMillis = Clock.currentTimeMillis
/** Milliseconds of an RFC 3339 string; None when absent or unparsable. */
export const millisOf = (s: string | undefined): Option.Option<number> => {
  if (s === undefined) return Option.none()
  const n = Date.parse(s)
  return Number.isNaN(n) ? Option.none() : Option.some(n)
}

/** `ownerReferences` of a child: the RR controls it, so a real cluster deletes it with the RR. */
export const ownedBy = (rr: RemediationRequest, apiGroup: string) =>
  rr.metadata.uid === undefined
    ? {}
    : {
      ownerReferences: [{
        apiVersion: `${apiGroup}/v1alpha1`,
        kind: "RemediationRequest",
        name: rr.metadata.name,
        uid: rr.metadata.uid,
        controller: true,
        blockOwnerDeletion: false
      }]
    }

export const rrRef = (rr: RemediationRequest, apiGroup: string, namespace: string) => ({
  apiVersion: `${apiGroup}/v1alpha1`,
  kind: "RemediationRequest",
  name: rr.metadata.name,
  namespace: rr.metadata.namespace ?? namespace,
  ...(rr.metadata.uid === undefined ? {} : { uid: rr.metadata.uid })
})

/** Metadata of a child of `rr` named `name`. */
export const childMeta = (rr: RemediationRequest, name: string, apiGroup: string, namespace: string) => ({
  name,
  namespace: rr.metadata.namespace ?? namespace,
  labels: { [rrLabel(apiGroup)]: rr.metadata.name.slice(0, 63) },
  ...ownedBy(rr, apiGroup)
})

const decoders = {
  remediationrequests: Schema.decodeUnknownOption(RemediationRequest),
  remediationapprovalrequests: Schema.decodeUnknownOption(RemediationApprovalRequest),
  aianalyses: Schema.decodeUnknownOption(AIAnalysis),
  workflowexecutions: Schema.decodeUnknownOption(WorkflowExecution)
} as const

interface Typed {
  readonly remediationrequests: RemediationRequest
  readonly remediationapprovalrequests: RemediationApprovalRequest
  readonly aianalyses: AIAnalysis
  readonly workflowexecutions: WorkflowExecution
}

export type TypedPlural = keyof Typed

/** Decodes one object; None (with a warning) when it does not fit the schema. */
export const decode = <P extends TypedPlural>(plural: P, o: KubeObject): Effect.Effect<Option.Option<Typed[P]>> => {
  const decoded = decoders[plural](o) as Option.Option<Typed[P]>
  return Option.isSome(decoded)
    ? Effect.succeed(decoded)
    : Effect.as(Effect.logWarning(`skipping ${plural}/${o.metadata.name}: it does not match the schema`), decoded)
}

/** Reads one typed object; None when it does not exist (or does not decode). */
export const load = <P extends TypedPlural>(
  k8s: K8sService,
  plural: P,
  name: string
): Effect.Effect<Option.Option<Typed[P]>, K8sUnavailable> =>
  k8s.getCr(plural, name).pipe(
    Effect.flatMap((o) => decode(plural, o)),
    Effect.catchTag("K8sNotFound", () => Effect.succeed(Option.none()))
  )

/** Every decodable object of a plural (optionally by label selector). */
export const loadAll = <P extends TypedPlural>(
  k8s: K8sService,
  plural: P,
  labelSelector?: string
): Effect.Effect<ReadonlyArray<Typed[P]>, K8sUnavailable> =>
  k8s.listCr(plural, labelSelector === undefined ? undefined : { labelSelector }).pipe(
    Effect.map((list) => list.items.flatMap((o) => Option.toArray(decoders[plural](o) as Option.Option<Typed[P]>)))
  )

/** Raw get of an untyped child (SignalProcessing, assessment, notification); None when absent. */
export const getRaw = (k8s: K8sService, plural: CrPlural, name: string) =>
  k8s.getCr(plural, name).pipe(
    Effect.map(Option.some),
    Effect.catchTag("K8sNotFound", () => Effect.succeed(Option.none<KubeObject>()))
  )

/** Creates `body` unless it exists (AlreadyExists is success: a retried reconcile finds its own earlier create). */
export const ensure = (k8s: K8sService, plural: CrPlural, body: KubeObject) =>
  k8s.createCr(plural, body).pipe(
    Effect.as(true),
    Effect.catchTag("K8sConflict", () => Effect.succeed(false))
  )

/** A field of an untyped object's status. */
export const statusField = (o: KubeObject, key: string): unknown =>
  typeof o.status === "object" && o.status !== null ? (o.status as Record<string, unknown>)[key] : undefined

/** A target as `namespace/Kind/name` for messages. */
export const describeTarget = (t: { readonly kind: string; readonly name: string; readonly namespace?: string | undefined }) =>
  t.namespace === undefined || t.namespace === "" ? `${t.kind}/${t.name}` : `${t.namespace}/${t.kind}/${t.name}`
