/**
 * RemediationWorkflow resources into the storage catalog (the original's admission-webhook registration, as a
 * controller). The resource's `{apiVersion, kind, metadata.name, spec}` is the registered content, so the catalog's
 * content hash and id are the ones a REST registration of the same document would get.
 *
 * - Registered (new, or the same content again): `status.workflowId`, `contentHash`, `catalogStatus`, condition
 *   `Registered=True`.
 * - Changed spec under a version the catalog already holds: refused by the catalog (409); the status keeps the id of
 *   what is registered and says `Registered=False, reason ContentChangedWithoutVersionBump`. Bumping
 *   `spec.version` registers the change. Not requeued: only a new spec can change the answer.
 * - Refused content (unknown or disabled action type, invalid document): `Registered=False, ValidationFailed`,
 *   retried after `retryInvalid` (the action type may be applied a moment later) and when an ActionType registers.
 * - Storage refused the controller (401/403) or is down: `Registered=False, CatalogRefused` / `CatalogUnavailable`,
 *   retried with backoff.
 * - Deleted: a finalizer holds the resource until its catalog entry is disabled.
 * - Up to date: the catalog entry is read back every resync, so a wiped catalog is registered again and a status
 *   change made over the REST API (disabled, deprecated) shows in `catalogStatus`.
 */
import { formatGoDuration } from "@kubemend/core/Config"
import { CrVersion } from "@kubemend/core/domain/Meta"
import { RemediationWorkflowKind } from "@kubemend/core/domain/CatalogResources"
import type { KubeObject } from "@kubemend/core/K8s"
import { Storage } from "@kubemend/core/Storage"
import { Clock, Effect, Option } from "effect"
import * as YAML from "yaml"
import { Cluster, type ObjectRef } from "../runtime/Cluster.ts"
import { splitKey, type Reconciled } from "../runtime/Workers.ts"
import { CatalogSettings, catalogFinalizer, conditionsWith, registered, type StatusBody } from "./Shared.ts"

interface WorkflowStatus {
  readonly workflowId?: string
  readonly contentHash?: string
  readonly catalogStatus?: string
  readonly observedGeneration?: number
  readonly registeredAt?: string
  readonly conditions?: ReadonlyArray<{ readonly type: string; readonly status: string }>
}

const statusOf = (o: KubeObject): WorkflowStatus => (o.status ?? {}) as WorkflowStatus

/** The document registered for a resource: what a user would POST for it. */
export const workflowContent = (o: KubeObject): string =>
  YAML.stringify({ apiVersion: o.apiVersion, kind: o.kind ?? RemediationWorkflowKind, metadata: { name: o.metadata.name }, spec: o.spec })

export class WorkflowReconciler extends Effect.Service<WorkflowReconciler>()("@kubemend/operator/WorkflowReconciler", {
  effect: Effect.gen(function* () {
    const cluster = yield* Cluster
    const storage = yield* Storage
    const settings = yield* CatalogSettings

    const writeStatus = (ref: ObjectRef, o: KubeObject, body: StatusBody) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        cluster.patchStatus(ref, {
          ...body.fields,
          observedGeneration: o.metadata.generation ?? 1,
          conditions: conditionsWith(o, body.condition, now)
        }))

    const reconcile = Effect.fn("WorkflowReconciler.reconcile")(function* (key: string) {
      const { namespace, name } = splitKey(key)
      const ref: ObjectRef = { apiVersion: `${settings.apiGroup}/${CrVersion}`, kind: RemediationWorkflowKind, name, namespace }
      const finalizer = catalogFinalizer(settings.apiGroup)

      // 1. Load the resource.
      const loaded = yield* cluster.get(ref)
      if (Option.isNone(loaded)) return {} satisfies Reconciled
      const o = loaded.value
      const status = statusOf(o)
      const finalizers = o.metadata.finalizers ?? []

      // 2. Deleted: disable its catalog entry, then let it go.
      if (o.metadata.deletionTimestamp !== undefined) {
        if (!finalizers.includes(finalizer)) return {} satisfies Reconciled
        if (status.workflowId !== undefined) {
          yield* storage.disableWorkflow(status.workflowId, `RemediationWorkflow ${namespace}/${name} was deleted`, settings.actor).pipe(
            Effect.catchTag("NotFound", () => Effect.void)
          )
        }
        yield* cluster.patch(ref, { metadata: { finalizers: finalizers.filter((f) => f !== finalizer) } })
        yield* Effect.logInfo("catalog entry disabled for a deleted RemediationWorkflow").pipe(
          Effect.annotateLogs({ workflowId: status.workflowId ?? "none" })
        )
        return {} satisfies Reconciled
      }
      if (!finalizers.includes(finalizer)) yield* cluster.patch(ref, { metadata: { finalizers: [...finalizers, finalizer] } })

      // 3. Up to date: read the entry back instead of registering again (a re-registration re-enables).
      const current = status.observedGeneration === o.metadata.generation && registered(o) && status.workflowId !== undefined
      if (current) {
        const entry = yield* storage.getWorkflow(status.workflowId!).pipe(Effect.option)
        if (Option.isSome(entry)) {
          if (entry.value.status !== status.catalogStatus) {
            yield* cluster.patchStatus(ref, { catalogStatus: entry.value.status })
          }
          return { requeueAfter: settings.resyncPeriod } satisfies Reconciled
        }
      }

      // 4. Register the content and report the catalog's answer.
      const outcome = yield* storage.registerWorkflow({ content: workflowContent(o), source: "crd", registeredBy: settings.actor }).pipe(
        Effect.map((r) => ({ _tag: "Registered" as const, ...r })),
        Effect.catchTags({
          ContentIntegrityViolation: () => Effect.succeed({ _tag: "ContentChanged" as const }),
          ValidationError: (e) => Effect.succeed({ _tag: "Invalid" as const, detail: e.detail }),
          // Say so in status (a user who applied the file sees why nothing registers), then retry with backoff.
          Unauthenticated: (e) => Effect.succeed({ _tag: "Unreachable" as const, reason: "CatalogRefused", detail: e.detail, cause: e }),
          DependencyUnavailable: (e) => Effect.succeed({ _tag: "Unreachable" as const, reason: "CatalogUnavailable", detail: e.detail, cause: e })
        })
      )
      const now = yield* Clock.currentTimeMillis
      const version = String((o.spec as { version?: unknown } | undefined)?.version ?? "")
      switch (outcome._tag) {
        case "Registered": {
          const w = outcome.workflow
          yield* writeStatus(ref, o, {
            fields: {
              workflowId: w.workflowId,
              contentHash: w.contentHash,
              catalogStatus: w.status,
              registeredAt: status.registeredAt ?? new Date(now).toISOString(),
              registeredBy: settings.actor,
              previouslyExisted: !outcome.created
            },
            condition: {
              type: "Registered",
              status: "True",
              reason: outcome.created ? "Registered" : "AlreadyRegistered",
              message: `registered in the catalog as ${w.workflowName} ${w.version} (${w.workflowId})`
            }
          })
          yield* Effect.logInfo("RemediationWorkflow registered").pipe(Effect.annotateLogs({ workflowId: w.workflowId, created: outcome.created }))
          return { requeueAfter: settings.resyncPeriod } satisfies Reconciled
        }
        case "ContentChanged":
          yield* writeStatus(ref, o, {
            fields: {},
            condition: {
              type: "Registered",
              status: "False",
              reason: "ContentChangedWithoutVersionBump",
              message: `the spec changed but version ${version} is already registered with other content` +
                (status.workflowId === undefined ? "" : ` (${status.workflowId} stays in use)`) +
                "; set a new spec.version to register the change"
            }
          })
          return {} satisfies Reconciled
        case "Invalid":
          yield* writeStatus(ref, o, {
            fields: status.workflowId === undefined ? { catalogStatus: "Invalid" } : {},
            condition: { type: "Registered", status: "False", reason: "ValidationFailed", message: outcome.detail.slice(0, 4000) }
          })
          yield* Effect.logWarning("RemediationWorkflow refused by the catalog").pipe(
            Effect.annotateLogs({ detail: outcome.detail, retryAfter: formatGoDuration(settings.retryInvalid) })
          )
          return { requeueAfter: settings.retryInvalid } satisfies Reconciled
        case "Unreachable":
          yield* writeStatus(ref, o, {
            fields: {},
            condition: { type: "Registered", status: "False", reason: outcome.reason, message: `storage's catalog: ${outcome.detail}`.slice(0, 4000) }
          })
          return yield* Effect.fail(outcome.cause)
      }
    })

    return { reconcile } as const
  })
}) {}
