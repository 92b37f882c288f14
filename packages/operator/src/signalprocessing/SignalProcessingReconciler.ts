/**
 * The signal-processing controller: takes a SignalProcessing (`sp-<rr>`, created by the orchestrator) through
 * enrichment (`Enrichment.ts`: namespace, workload, owner chain, detected labels) and classification (policy.rego
 * through `PolicyEngine`), and writes the result to its status in one write: `Completed` with environment,
 * priority, criticality, actionable and `enrichmentResults`. Failed reads and an unreachable engine degrade the
 * result (`kubernetesContext.degradedMode`, `policyDegraded`) instead of stopping the remediation; the approval
 * decision later treats an unreachable engine as "approval required".
 */
import { isTerminalPhase } from "@kubemend/core/domain/Phases"
import { SignalProcessingSpec } from "@kubemend/core/domain/SignalProcessing"
import { K8s, type K8sConflict, type K8sNotFound, type K8sUnavailable } from "@kubemend/core/K8s"
import { Duration, Effect, Option, Schema } from "effect"
import { splitKey, type Reconciled } from "../runtime/Workers.ts"
import { PolicyEngine } from "../remediation/PolicyEngine.ts"
import { enrich } from "./Enrichment.ts"
import { LifecycleAudit } from "../remediation/LifecycleAudit.ts"
import { LifecycleMetrics } from "../remediation/LifecycleMetrics.ts"
import { getRaw, iso, load, nowMillis, phaseOf, statusField } from "../remediation/Objects.ts"

export type SignalProcessingError = K8sNotFound | K8sConflict | K8sUnavailable

const decodeSpec = Schema.decodeUnknownOption(SignalProcessingSpec)

export class SignalProcessingReconciler extends Effect.Service<SignalProcessingReconciler>()("@kubemend/operator/SignalProcessingReconciler", {
  effect: Effect.gen(function* () {
    const k8s = yield* K8s
    const policy = yield* PolicyEngine
    const metrics = yield* LifecycleMetrics
    const audit = yield* LifecycleAudit
    const seconds = (from: number, to: number) => Math.max(0, to - from) / 1000

    const reconcile = (key: string): Effect.Effect<Reconciled, SignalProcessingError> =>
      Effect.gen(function* () {
        // 1. Load it; finished ones are left alone.
        const found = yield* getRaw(k8s, "signalprocessings", splitKey(key).name)
        if (Option.isNone(found)) return {}
        const sp = found.value
        const guard = { resourceVersion: sp.metadata.resourceVersion }
        const phase = statusField(sp, "phase")
        if (phase === "Completed" || phase === "Failed") return {}
        const spec = decodeSpec(sp.spec)
        if (Option.isNone(spec)) {
          yield* k8s.patchCrStatus("signalprocessings", sp.metadata.name, { phase: "Failed", message: "spec does not match the schema" }, guard)
          return {}
        }
        const signal = spec.value.signal
        // 2. A finished RR's cascade ends it, not us.
        const rrName = spec.value.remediationRequestRef.name
        const rr = rrName === undefined ? Option.none() : yield* load(k8s, "remediationrequests", rrName)
        if (Option.isSome(rr) && isTerminalPhase(phaseOf(rr.value))) return {}
        const started = yield* nowMillis

        // 3. Enrichment from the cluster.
        const enrichment = yield* enrich(k8s, signal.targetResource, signal.labels?.["pod"])
        for (const e of enrichment.errors) yield* metrics.enrichmentError(e)
        const enriched = yield* nowMillis
        yield* metrics.signalProcessingPhase("Enriching", enrichment.kubernetesContext.degradedMode ? "degraded" : "success", seconds(started, enriched))

        // 4. Classification by policy.rego.
        const c = yield* policy.classify({
          signal: {
            name: signal.name,
            severity: signal.severity,
            labels: signal.labels ?? {},
            annotations: signal.annotations ?? {},
            ...(Option.isSome(rr) ? { type: rr.value.spec.signalType, source: rr.value.spec.signalSource } : {})
          },
          target: signal.targetResource,
          kubernetesContext: enrichment.kubernetesContext,
          detectedLabels: enrichment.detectedLabels
        })
        const classified = yield* nowMillis
        yield* metrics.signalProcessingPhase("Classifying", c.degraded ? "degraded" : "success", seconds(enriched, classified))

        // 5. The result, in one status write; a conflict (the cascade failed it meanwhile) reads it again.
        const written = yield* k8s.patchCrStatus("signalprocessings", sp.metadata.name, {
          phase: "Completed",
          environment: c.environment,
          priority: c.priority,
          severity: signal.severity,
          criticality: c.criticality,
          actionable: c.actionable,
          signalMode: "reactive",
          enrichmentResults: {
            kubernetesContext: enrichment.kubernetesContext,
            detectedLabels: enrichment.detectedLabels,
            businessClassification: { criticality: c.criticality }
          },
          policyDegraded: c.degraded,
          ...(c.degradedReason === undefined ? {} : { message: c.degradedReason }),
          startTime: iso(started),
          completedAt: iso(classified)
        }, guard).pipe(Effect.as(true), Effect.catchTag("K8sConflict", () => Effect.succeed(false)))
        if (!written) return { requeueAfter: Duration.zero }
        yield* metrics.signalProcessingPhase(
          "Completed",
          c.degraded || enrichment.kubernetesContext.degradedMode ? "degraded" : "success",
          seconds(started, classified)
        )
        yield* audit.emit({
          type: "signalprocessing.processing.completed",
          category: "signalprocessing",
          correlationId: rrName ?? sp.metadata.name,
          namespace: sp.metadata.namespace ?? k8s.namespace,
          actor: { type: "service", id: "signalprocessing-controller" },
          resource: { type: "SignalProcessing", id: sp.metadata.name },
          data: {
            environment: c.environment,
            priority: c.priority,
            criticality: c.criticality,
            actionable: c.actionable,
            policy_degraded: c.degraded,
            degraded_mode: enrichment.kubernetesContext.degradedMode,
            detected_labels: enrichment.detectedLabels
          }
        })
        return {}
      })

    return { reconcile } as const
  })
}) {}
