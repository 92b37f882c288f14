/**
 * ActionType resources into the catalog's action-type taxonomy: registered (or re-enabled) under `spec.name`, the
 * description kept in step with the resource, disabled when the resource is deleted. The catalog refuses to disable
 * an action type that active workflows still use; the resource then stays (finalizer) with `Registered=True,
 * reason DisableDenied` saying why, and deletion is tried again after `retryInvalid`, as the original's admission
 * webhook denied such a delete.
 */
import { CrVersion } from "@kubemend/core/domain/Meta"
import { ActionTypeKind } from "@kubemend/core/domain/CatalogResources"
import type { KubeObject } from "@kubemend/core/K8s"
import { Storage } from "@kubemend/core/Storage"
import type { StructuredDescription } from "@kubemend/core/StorageApi"
import { Clock, Effect, Option } from "effect"
import { Cluster, type ObjectRef } from "../runtime/Cluster.ts"
import { splitKey, type Reconciled } from "../runtime/Workers.ts"
import { CatalogSettings, catalogFinalizer, conditionsWith, type Registration } from "./Shared.ts"

interface ActionTypeSpec {
  readonly name: string
  readonly description: StructuredDescription
}

export class ActionTypeReconciler extends Effect.Service<ActionTypeReconciler>()("@kubemend/operator/ActionTypeReconciler", {
  effect: Effect.gen(function* () {
    const cluster = yield* Cluster
    const storage = yield* Storage
    const settings = yield* CatalogSettings

    const condition = (ref: ObjectRef, o: KubeObject, c: Registration, fields: Record<string, unknown> = {}) =>
      Effect.flatMap(
        Clock.currentTimeMillis,
        (now) => cluster.patchStatus(ref, { ...fields, observedGeneration: o.metadata.generation ?? 1, conditions: conditionsWith(o, c, now) })
      )

    /** Answers whether the action type is registered now (its workflows can then register too). */
    const reconcile = Effect.fn("ActionTypeReconciler.reconcile")(function* (key: string) {
      const { namespace, name } = splitKey(key)
      const ref: ObjectRef = { apiVersion: `${settings.apiGroup}/${CrVersion}`, kind: ActionTypeKind, name, namespace }
      const finalizer = catalogFinalizer(settings.apiGroup)

      // 1. Load the resource.
      const loaded = yield* cluster.get(ref)
      if (Option.isNone(loaded)) return { reconciled: {} satisfies Reconciled, registered: false }
      const o = loaded.value
      const spec = o.spec as ActionTypeSpec
      const status = (o.status ?? {}) as { registeredAt?: string; observedGeneration?: number }
      const finalizers = o.metadata.finalizers ?? []

      // 2. Deleted: disable it in the catalog unless workflows still use it.
      if (o.metadata.deletionTimestamp !== undefined) {
        if (!finalizers.includes(finalizer)) return { reconciled: {}, registered: false }
        const denied = yield* storage.disableActionType(spec.name, settings.actor).pipe(
          Effect.as(Option.none<string>()),
          Effect.catchTags({ NotFound: () => Effect.succeed(Option.none<string>()), Conflict: (e) => Effect.succeed(Option.some(e.detail)) })
        )
        if (Option.isSome(denied)) {
          yield* condition(ref, o, {
            type: "Registered",
            status: "True",
            reason: "DisableDenied",
            message: `not disabled in the catalog: ${denied.value}; disable or delete those workflows first`
          })
          return { reconciled: { requeueAfter: settings.retryInvalid } satisfies Reconciled, registered: true }
        }
        yield* cluster.patch(ref, { metadata: { finalizers: finalizers.filter((f) => f !== finalizer) } })
        return { reconciled: {}, registered: false }
      }
      if (!finalizers.includes(finalizer)) yield* cluster.patch(ref, { metadata: { finalizers: [...finalizers, finalizer] } })

      // 3. Register (idempotent); a changed description is written through.
      const created = yield* storage.registerActionType({ name: spec.name, description: spec.description, registeredBy: settings.actor })
      if (created.status === "exists" && status.observedGeneration !== o.metadata.generation) {
        yield* storage.updateActionType(spec.name, spec.description, settings.actor)
      }
      const now = yield* Clock.currentTimeMillis
      yield* condition(ref, o, {
        type: "Registered",
        status: "True",
        reason: created.status === "created" ? "Registered" : created.wasReenabled ? "Reenabled" : "AlreadyRegistered",
        message: `action type ${spec.name} is in the catalog`
      }, {
        registered: true,
        catalogStatus: "Active",
        registeredAt: status.registeredAt ?? new Date(now).toISOString(),
        registeredBy: settings.actor,
        previouslyExisted: created.wasReenabled
      })
      return { reconciled: { requeueAfter: settings.resyncPeriod } satisfies Reconciled, registered: true }
    })

    return { reconcile } as const
  })
}) {}
