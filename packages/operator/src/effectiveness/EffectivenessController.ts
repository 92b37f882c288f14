/** The effectiveness monitor: EffectivenessAssessments in the controller namespace, with a periodic resync. */
import { Effect } from "effect"
import { LifecycleConfig } from "../remediation/LifecycleConfig.ts"
import { controller, Source } from "../runtime/Builder.ts"
import { EffectivenessReconciler } from "./Reconciler.ts"

export const effectivenessController = Effect.gen(function* () {
  const config = yield* LifecycleConfig
  const reconciler = yield* EffectivenessReconciler
  return controller("effectivenessmonitor", config)
    .for(Source.cr("effectivenessassessments"))
    .resyncEvery(config.resyncPeriod)
    .announce("lifecycle controller effectivenessmonitor started")
    .complete(reconciler.reconcile)
})
