/**
 * The catalog controllers: RemediationWorkflows and ActionTypes in the controller namespace, each through an
 * informer into its own queue. A registered ActionType wakes the workflows of that namespace that are not
 * registered yet, so a file that declares the workflow before its action type settles without waiting for a retry.
 */
import { ActionTypeKind, RemediationWorkflowKind } from "@kubemend/core/domain/CatalogResources"
import { CrVersion } from "@kubemend/core/domain/Meta"
import { specOrDeletionChanged } from "@kubemend/core/K8s/Informer"
import { Duration, Effect, Layer, PubSub, Stream } from "effect"
import { LifecycleConfig } from "../remediation/LifecycleConfig.ts"
import { controller, Source } from "../runtime/Builder.ts"
import { Cluster } from "../runtime/Cluster.ts"
import * as Manager from "../runtime/Manager.ts"
import { keyOf } from "../runtime/Workers.ts"
import { ActionTypeReconciler } from "./ActionTypeReconciler.ts"
import { CatalogSettings, registered } from "./Shared.ts"
import { WorkflowReconciler } from "./WorkflowReconciler.ts"

/** Server-side timeout of one watch request; the informer then continues from the last resourceVersion. */
const watchTimeout = Duration.minutes(5)

export const catalogControllers = Effect.gen(function* () {
  const cluster = yield* Cluster
  const settings = yield* CatalogSettings
  const config = yield* LifecycleConfig
  const workflows = yield* WorkflowReconciler
  const actionTypes = yield* ActionTypeReconciler
  const apiVersion = `${settings.apiGroup}/${CrVersion}`
  const collection = (kind: string) =>
    Source.collection({ apiVersion, kind, namespace: settings.namespace }, {
      watchTimeout,
      backoffMax: config.backoffMax,
      relevant: specOrDeletionChanged,
      logAs: `catalog-${kind.toLowerCase()}`
    })
  // Bounded: registrations only say "look again"; a dropped one is covered by the next.
  const actionTypeRegistered = yield* PubSub.sliding<void>(16)

  const pendingWorkflows = cluster.list({ apiVersion, kind: RemediationWorkflowKind, namespace: settings.namespace }).pipe(
    Effect.map((list) => list.items.filter((o) => !registered(o)).map((o) => keyOf(o.metadata.namespace, o.metadata.name))),
    Effect.catchAll((e) => Effect.as(Effect.logWarning("catalog: listing workflows after an action type registered failed", e), []))
  )

  const workflowController = controller("remediationworkflow", config)
    .for(collection(RemediationWorkflowKind))
    .watches(Source.keys(Stream.fromPubSub(actionTypeRegistered).pipe(Stream.mapEffect(() => pendingWorkflows), Stream.flattenIterables)))
    .announce("catalog controller started", { namespace: settings.namespace })
    .complete(workflows.reconcile)
  const actionTypeController = controller("actiontype", config)
    .for(collection(ActionTypeKind))
    .announce("controller actiontype started", { namespace: settings.namespace })
    .complete((key) =>
      Effect.flatMap(
        actionTypes.reconcile(key),
        ({ reconciled, registered }) => registered ? Effect.as(PubSub.publish(actionTypeRegistered, undefined), reconciled) : Effect.succeed(reconciled)
      )
    )
  return [workflowController, actionTypeController]
})

/** The reconcilers, in the lifecycle controllers' namespace; need Cluster, K8s, Storage and LifecycleConfig. */
export const CatalogReconcilersLive = Layer.mergeAll(WorkflowReconciler.Default, ActionTypeReconciler.Default).pipe(
  Layer.provideMerge(CatalogSettings.fromLifecycle)
)

/** The catalog controllers alone under a manager of their own (tests). */
export const CatalogControllerLive = Manager.layer(catalogControllers).pipe(Layer.provide(CatalogReconcilersLive))
