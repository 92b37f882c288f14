/** The signal-processing controller: SignalProcessings in the controller namespace, with a periodic resync. */
import { Effect } from "effect"
import { LifecycleConfig } from "../remediation/LifecycleConfig.ts"
import { controller, Source } from "../runtime/Builder.ts"
import { SignalProcessingReconciler } from "./SignalProcessingReconciler.ts"

export const signalProcessingController = Effect.gen(function* () {
  const config = yield* LifecycleConfig
  const reconciler = yield* SignalProcessingReconciler
  return controller("signalprocessing", config)
    .for(Source.cr("signalprocessings"))
    .resyncEvery(config.resyncPeriod)
    .announce("lifecycle controller signalprocessing started")
    .complete(reconciler.reconcile)
})
