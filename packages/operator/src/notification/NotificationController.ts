/**
 * The notification controller: NotificationRequests in the controller namespace (watch + resync, `requeueAfter`
 * for the next attempt). Storage, when present, receives the delivery records.
 */
import { Effect, Layer } from "effect"
import { LifecycleConfig } from "../remediation/LifecycleConfig.ts"
import { controller, Source } from "../runtime/Builder.ts"
import { Breakers } from "./Breakers.ts"
import { NotificationMetrics } from "./NotificationMetrics.ts"
import { NotificationReconciler } from "./NotificationReconciler.ts"

export const notificationController = Effect.gen(function* () {
  const config = yield* LifecycleConfig
  const reconciler = yield* NotificationReconciler
  return controller("notification", config)
    .for(Source.cr("notificationrequests"))
    .resyncEvery(config.resyncPeriod)
    .announce("lifecycle controller notification started")
    .complete(reconciler.reconcile)
})

/** The reconciler with its breakers and metrics; needs K8s, Metrics and NotificationConfig (Storage optional). */
export const NotificationReconcilerLive = NotificationReconciler.Default.pipe(
  Layer.provideMerge(Breakers.Default),
  Layer.provideMerge(NotificationMetrics.Default)
)
