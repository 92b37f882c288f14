/** The analysis controller: AIAnalyses in the controller namespace, with a periodic resync (the agent is polled). */
import { Effect } from "effect"
import { LifecycleConfig } from "../remediation/LifecycleConfig.ts"
import { controller, Source } from "../runtime/Builder.ts"
import { AnalysisReconciler } from "./AnalysisReconciler.ts"

export const analysisController = Effect.gen(function* () {
  const config = yield* LifecycleConfig
  const reconciler = yield* AnalysisReconciler
  return controller("aianalysis", config)
    .for(Source.cr("aianalyses"))
    .resyncEvery(config.resyncPeriod)
    .announce("lifecycle controller aianalysis started")
    .complete(reconciler.reconcile)
})
