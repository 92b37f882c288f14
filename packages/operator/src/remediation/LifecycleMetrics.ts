/**
 * The orchestrator's and analysis controller's metrics under the names of spec document 3
 * (`svc_remediationorchestrator_*`, `aianalysis_*`, `signalprocessing_*`). The blocked gauge is kept
 * per namespace from the set of RRs last seen `Blocked`.
 */
import { Metrics } from "@kubemend/core/Metrics"
import { Effect } from "effect"

const buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export class LifecycleMetrics extends Effect.Service<LifecycleMetrics>()("@kubemend/operator/LifecycleMetrics", {
  effect: Effect.gen(function* () {
    const m = yield* Metrics
    const p = "svc_remediationorchestrator_"
    const transitions = m.counter({
      name: `${p}phase_transitions_total`,
      help: "RemediationRequest phase transitions",
      labelNames: ["from_phase", "to_phase", "namespace"]
    })
    const duration = m.histogram({
      name: `${p}reconcile_duration_seconds`,
      help: "Duration of one RemediationRequest reconcile",
      labelNames: ["namespace", "phase"],
      buckets
    })
    const timeouts = m.counter({ name: `${p}timeouts_total`, help: "Phase timeouts", labelNames: ["phase", "namespace"] })
    const blocked = m.counter({ name: `${p}blocked_total`, help: "RRs blocked by routing", labelNames: ["namespace", "reason"] })
    const currentBlocked = m.gauge({ name: `${p}current_blocked`, help: "RRs currently blocked", labelNames: ["namespace"] })
    const children = m.counter({
      name: `${p}child_crd_creations_total`,
      help: "Child resources created by the orchestrator",
      labelNames: ["child_type", "namespace"]
    })
    const noAction = m.counter({
      name: `${p}no_action_needed_total`,
      help: "RRs completed without action",
      labelNames: ["reason", "namespace"]
    })
    const duplicates = m.counter({
      name: `${p}duplicates_skipped_total`,
      help: "Duplicate RRs that inherited another RR's outcome",
      labelNames: ["skip_reason", "namespace"]
    })
    const approvals = m.counter({
      name: `${p}approval_decisions_total`,
      help: "Approval decisions applied",
      labelNames: ["decision", "namespace"]
    })
    const confidence = m.histogram({
      name: "aianalysis_confidence_score_distribution",
      help: "Confidence of completed analyses",
      labelNames: ["signal_type"],
      buckets: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]
    })
    const analysisDecisions = m.counter({
      name: "aianalysis_approval_decisions_total",
      help: "Approval routing of completed analyses",
      labelNames: ["decision", "environment"]
    })
    const analysisFailures = m.counter({
      name: "aianalysis_failures_total",
      help: "Failed analyses",
      labelNames: ["reason", "sub_reason"]
    })
    const regoEvaluations = m.counter({
      name: "aianalysis_rego_evaluations_total",
      help: "approval.rego evaluations; degraded when the engine could not answer (approval is then required)",
      labelNames: ["outcome", "degraded"]
    })
    const spProcessed = m.counter({
      name: "signalprocessing_processing_total",
      help: "SignalProcessing phases finished",
      labelNames: ["phase", "result"]
    })
    const spDuration = m.histogram({
      name: "signalprocessing_processing_duration_seconds",
      help: "Duration of one SignalProcessing phase",
      labelNames: ["phase"],
      buckets
    })
    const enrichmentErrors = m.counter({
      name: "signalprocessing_enrichment_errors_total",
      help: "Cluster reads that failed during enrichment",
      labelNames: ["error_type"]
    })

    const blockedByNamespace = new Map<string, Set<string>>()

    return {
      transition: (namespace: string, from: string, to: string) => Effect.sync(() => transitions.inc({ from_phase: from, to_phase: to, namespace })),
      reconciled: (namespace: string, phase: string, seconds: number) => Effect.sync(() => duration.observe({ namespace, phase }, seconds)),
      timeout: (namespace: string, phase: string) => Effect.sync(() => timeouts.inc({ phase, namespace })),
      blocked: (namespace: string, reason: string) => Effect.sync(() => blocked.inc({ namespace, reason })),
      /** Whether `rr` is blocked now; keeps the gauge equal to the set's size. */
      setBlocked: (namespace: string, rr: string, isBlocked: boolean) =>
        Effect.sync(() => {
          const set = blockedByNamespace.get(namespace) ?? new Set<string>()
          if (isBlocked) set.add(rr)
          else set.delete(rr)
          blockedByNamespace.set(namespace, set)
          currentBlocked.set({ namespace }, set.size)
        }),
      childCreated: (namespace: string, childType: string) => Effect.sync(() => children.inc({ child_type: childType, namespace })),
      noAction: (namespace: string, reason: string) => Effect.sync(() => noAction.inc({ reason, namespace })),
      duplicateSkipped: (namespace: string, reason: string) => Effect.sync(() => duplicates.inc({ skip_reason: reason, namespace })),
      approvalDecision: (namespace: string, decision: string) => Effect.sync(() => approvals.inc({ decision, namespace })),
      analysisCompleted: (signalType: string, score: number, decision: string, environment: string) =>
        Effect.sync(() => {
          confidence.observe({ signal_type: signalType }, score)
          analysisDecisions.inc({ decision, environment })
        }),
      analysisFailed: (reason: string, subReason: string) => Effect.sync(() => analysisFailures.inc({ reason, sub_reason: subReason })),
      regoEvaluation: (outcome: string, degraded: boolean) => Effect.sync(() => regoEvaluations.inc({ outcome, degraded: String(degraded) })),
      signalProcessingPhase: (phase: string, result: string, seconds: number) =>
        Effect.sync(() => {
          spProcessed.inc({ phase, result })
          spDuration.observe({ phase }, seconds)
        }),
      enrichmentError: (errorType: string) => Effect.sync(() => enrichmentErrors.inc({ error_type: errorType }))
    } as const
  })
}) {}
