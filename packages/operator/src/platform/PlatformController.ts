/**
 * The platform controller: the platform CRs (every namespace, or the configured one) through an informer that
 * queues a CR only when its spec or deletion changed, and `PlatformReconciler.reconcile` on the workers.
 * Readiness waits for the leader's first list of the CRs; a standby is ready.
 */
import { CrVersion } from "@kubemend/core/domain/Meta"
import { PlatformKind } from "@kubemend/core/domain/Platform/index"
import { specOrDeletionChanged } from "@kubemend/core/K8s/Informer"
import { Effect, Option } from "effect"
import { OperatorConfig } from "../OperatorConfig.ts"
import { controller, Source } from "../runtime/Builder.ts"
import * as Manager from "../runtime/Manager.ts"
import { PlatformReconciler } from "./Reconcile.ts"

/** `controller` label of the platform controller's logs and metrics (controller-runtime uses the lower-case kind). */
export const controllerName = "kubemend"

export const platformController = Effect.gen(function* () {
  const config = yield* OperatorConfig
  const reconciler = yield* PlatformReconciler
  return controller(controllerName, config)
    .for(Source.collection({
      apiVersion: `${config.apiGroup}/${CrVersion}`,
      kind: PlatformKind,
      ...Option.match(config.watchNamespace, { onNone: () => ({}), onSome: (namespace) => ({ namespace }) })
    }, { watchTimeout: config.watchTimeout, backoffMax: config.watchBackoffMax, relevant: specOrDeletionChanged }))
    .readyWhenListed("informer", "platform CRs not listed yet")
    .announce("platform controller started", { controller: controllerName, workers: config.workers })
    .complete(reconciler.reconcile)
})

/** The platform controller alone under its own manager (in-process platform, tests). */
export const PlatformControllerLive = Manager.layer(Effect.map(platformController, (c) => [c]))
