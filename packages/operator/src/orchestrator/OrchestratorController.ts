/**
 * The orchestrator controller: RemediationRequests, woken by every child it creates (SignalProcessing, AIAnalysis,
 * approval request, WorkflowExecution: `spec.remediationRequestRef`) and by the EffectivenessAssessment of its RR
 * (`spec.correlationID`), with a periodic resync for the deadlines no event announces.
 */
import type { KubeObject } from "@kubemend/core/K8s"
import { Effect, Option } from "effect"
import { LifecycleConfig } from "../remediation/LifecycleConfig.ts"
import { controller, Source } from "../runtime/Builder.ts"
import { keyOf } from "../runtime/Workers.ts"
import { OrchestratorReconciler } from "./OrchestratorReconciler.ts"

/** The RR an EffectivenessAssessment assesses (`spec.correlationID`). */
const assessed = (o: KubeObject, namespace: string) =>
  Option.map(
    Option.fromNullable((o.spec as { correlationID?: unknown } | undefined)?.correlationID),
    (name) => keyOf(o.metadata.namespace ?? namespace, String(name))
  )

export const orchestratorController = Effect.gen(function* () {
  const config = yield* LifecycleConfig
  const reconciler = yield* OrchestratorReconciler
  return controller("remediationorchestrator", config)
    .for(Source.cr("remediationrequests"))
    .owns("signalprocessings")
    .owns("aianalyses")
    .owns("remediationapprovalrequests")
    .owns("workflowexecutions")
    .watches(Source.cr("effectivenessassessments", assessed))
    .resyncEvery(config.resyncPeriod)
    .announce("lifecycle controller remediationorchestrator started")
    .complete(reconciler.reconcile)
})
