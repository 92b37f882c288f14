/**
 * The analysis controller: drives one AIAnalysis through the agent's submit-poll-result contract. It submits the
 * RR's incident and records the session id at once (what `svc_await_session` waits for), polls the session every
 * `pollInterval`, and on completion writes workflow, root cause, human review and approval routing (approval.rego
 * through `PolicyEngine`: an unreachable engine means approval required). A 404 on poll
 * means the agent restarted and forgot the session: a new session is submitted, at most `maxSessionRegenerations`
 * times, then the analysis fails (`SessionRegenerationExceeded`). The orchestrator enforces the phase timeout.
 */
import type { IncidentResponse, SessionStatus } from "@kubemend/core/AgentApi"
import { isTerminalPhase } from "@kubemend/core/domain/Phases"
import type { DependencyUnavailable } from "@kubemend/core/Errors"
import { K8s, type K8sConflict, type K8sNotFound, type K8sUnavailable } from "@kubemend/core/K8s"
import { Duration, Effect, Option } from "effect"
import { splitKey, type Reconciled } from "../runtime/Workers.ts"
import { PolicyEngine } from "../remediation/PolicyEngine.ts"
import { AgentRestClient } from "../clients/AgentRestClient.ts"
import { classify, incidentRequest } from "./AnalysisMapping.ts"
import { LifecycleAudit } from "../remediation/LifecycleAudit.ts"
import { LifecycleConfig } from "../remediation/LifecycleConfig.ts"
import { LifecycleMetrics } from "../remediation/LifecycleMetrics.ts"
import { PlatformSettings } from "../remediation/PlatformSettings.ts"
import { type AIAnalysis, getRaw, interactiveSessionLabel, iso, load, names, nowMillis, phaseOf, type RemediationRequest } from "../remediation/Objects.ts"

export type AnalysisError = K8sNotFound | K8sConflict | K8sUnavailable | DependencyUnavailable

export class AnalysisReconciler extends Effect.Service<AnalysisReconciler>()("@kubemend/operator/AnalysisReconciler", {
  effect: Effect.gen(function* () {
    const k8s = yield* K8s
    const config = yield* LifecycleConfig
    const platform = yield* PlatformSettings
    const agent = yield* AgentRestClient
    const metrics = yield* LifecycleMetrics
    const audit = yield* LifecycleAudit
    const policy = yield* PolicyEngine
    const poll: Reconciled = { requeueAfter: config.pollInterval }

    // Every write carries the resourceVersion read: a cascade's ParentCancelled written meanwhile is not overwritten;
    // false (a conflict) ends the reconcile, which reads the analysis again at once and decides again.
    const patch = (ai: AIAnalysis, status: Record<string, unknown>) =>
      k8s.patchCrStatus("aianalyses", ai.metadata.name, status, { resourceVersion: ai.metadata.resourceVersion }).pipe(
        Effect.as(true),
        Effect.catchTag("K8sConflict", () => Effect.succeed(false))
      )
    const again: Reconciled = { requeueAfter: Duration.zero }

    const emit = (rr: RemediationRequest, ai: AIAnalysis, type: string, data: Record<string, unknown>, failed = false) =>
      audit.emit({
        type,
        category: "analysis",
        outcome: failed ? "failure" : "success",
        correlationId: rr.metadata.name,
        namespace: rr.metadata.namespace ?? k8s.namespace,
        actor: { type: "service", id: "aianalysis-controller" },
        resource: { type: "AIAnalysis", id: ai.metadata.name },
        data: { analysis_name: ai.metadata.name, namespace: ai.metadata.namespace ?? k8s.namespace, ...data }
      })

    const fail = (rr: RemediationRequest, ai: AIAnalysis, now: number, reason: string, subReason: string, message: string) =>
      Effect.gen(function* () {
        if (!(yield* patch(ai, { phase: "Failed", reason, subReason, message, completedAt: iso(now) }))) return again
        yield* metrics.analysisFailed(reason, subReason)
        yield* emit(rr, ai, "aianalysis.analysis.failed", { reason, sub_reason: subReason, message }, true)
        yield* Effect.logWarning(`analysis ${ai.metadata.name} failed: ${message}`)
        return {} satisfies Reconciled
      })

    /** Submits the RR's incident as a new session (generation `generation`) and records it. */
    const submit = (rr: RemediationRequest, ai: AIAnalysis, now: number, generation: number) =>
      Effect.gen(function* () {
        const sp = yield* getRaw(k8s, "signalprocessings", names.signalProcessing(rr.metadata.name))
        const request = incidentRequest(rr, Option.getOrUndefined(sp), k8s.apiGroup)
        // An RR the agent created from an interactive session already has its session: adopt it, once.
        const existing = rr.metadata.labels?.[interactiveSessionLabel(k8s.apiGroup)]
        const adopted = generation === 1 && existing !== undefined && existing !== ""
        const id = adopted ? existing : yield* agent.submit(request)
        const written = yield* patch(ai, {
          phase: "Investigating",
          ...(ai.status?.startedAt === undefined ? { startedAt: iso(now) } : {}),
          investigationSession: {
            id,
            generation,
            interactive: request.interactive === true,
            createdAt: iso(now)
          }
        })
        if (!written) return again
        yield* emit(rr, ai, generation === 1 ? "aianalysis.session.submitted" : "aianalysis.session.regenerated", {
          session_id: id,
          generation,
          adopted
        })
        return poll
      })

    /** The agent forgot the session: a new one, unless the regenerations are used up. */
    const regenerate = (rr: RemediationRequest, ai: AIAnalysis, now: number, generation: number) =>
      generation - 1 >= config.maxSessionRegenerations
        ? fail(rr, ai, now, "APIError", "SessionRegenerationExceeded", `the agent lost the investigation session ${config.maxSessionRegenerations} times`)
        : Effect.logWarning(`agent session of ${ai.metadata.name} is gone (agent restarted?); regenerating`).pipe(
          Effect.zipRight(submit(rr, ai, now, generation + 1))
        )

    /** approval.rego's decision on a selected workflow, from the analysis and the signal's classification. */
    const decideApproval = (rr: RemediationRequest, ai: AIAnalysis, result: IncidentResponse, threshold: number) =>
      Effect.gen(function* () {
        const context = ai.spec.analysisRequest?.signalContext
        const enrichment = (context?.enrichmentResults ?? {}) as Record<string, unknown>
        const selected = result.selected_workflow ?? undefined
        return yield* policy.approval({
          confidence: result.confidence,
          threshold,
          needsHumanReview: result.needs_human_review || result.human_review_reason != null,
          ...(result.human_review_reason == null ? {} : { humanReviewReason: result.human_review_reason }),
          environment: context?.environment ?? rr.spec.signalLabels?.["environment"] ?? "unknown",
          businessPriority: context?.businessPriority ?? "P2",
          criticality: (enrichment["businessClassification"] as { criticality?: string } | undefined)?.criticality ?? "Medium",
          severity: rr.spec.severity ?? "unknown",
          signalName: rr.spec.signalName,
          targetResource: rr.spec.targetResource,
          workflow: { id: selected?.workflow_id ?? selected?.name ?? "", actionType: selected?.action_type ?? "" },
          detectedLabels: enrichment["detectedLabels"] ?? {}
        })
      })

    const complete = (rr: RemediationRequest, ai: AIAnalysis, now: number, sessionId: string, generation: number) =>
      agent.result(sessionId).pipe(
        Effect.flatMap((result) =>
          Effect.gen(function* () {
            const threshold = (yield* platform.current).confidenceThreshold
            const hasWorkflow = classify(result, threshold, now).workflowId !== undefined
            const approval = hasWorkflow ? yield* decideApproval(rr, ai, result, threshold) : undefined
            const c = classify(result, threshold, now, approval)
            if (!(yield* patch(ai, c.status))) return again
            const environment = ai.spec.analysisRequest?.signalContext?.environment ?? rr.spec.signalLabels?.["environment"] ?? "unknown"
            yield* metrics.analysisCompleted(
              rr.spec.signalType ?? "unknown",
              result.confidence,
              c.workflowId === undefined ? "no_workflow" : c.approvalRequired ? "requires_approval" : "auto_approved",
              environment
            )
            yield* emit(rr, ai, "aianalysis.analysis.completed", {
              session_id: sessionId,
              workflow_id: c.workflowId,
              confidence: result.confidence,
              investigation_outcome: result.investigation_outcome,
              approval_required: c.approvalRequired,
              human_review_reason: result.human_review_reason ?? undefined
            })
            return {} satisfies Reconciled
          })
        ),
        Effect.catchTags({
          ResultNotReady: () => Effect.succeed(poll),
          SessionNotFound: () => regenerate(rr, ai, now, generation)
        })
      )

    const onStatus = (rr: RemediationRequest, ai: AIAnalysis, now: number, s: SessionStatus, id: string, generation: number) => {
      switch (s.status) {
        case "pending":
        case "investigating":
          return Effect.succeed(poll)
        case "completed":
          return complete(rr, ai, now, id, generation)
        case "failed":
          return fail(rr, ai, now, "APIError", "InvestigationFailed", s.error ?? s.progress ?? "the investigation failed")
        case "cancelled":
          return fail(
            rr,
            ai,
            now,
            ai.status?.investigationSession?.interactive === true ? "InteractiveCancelled" : "APIError",
            "InvestigationFailed",
            s.error ?? "the investigation session was cancelled"
          )
      }
    }

    const reconcile = (key: string): Effect.Effect<Reconciled, AnalysisError> =>
      Effect.gen(function* () {
        // 1. Load the analysis; finished ones are left alone.
        const found = yield* load(k8s, "aianalyses", splitKey(key).name)
        if (Option.isNone(found)) return {}
        const ai = found.value
        const phase = ai.status?.phase
        if (phase === "Completed" || phase === "Failed") return {}
        // 2. Its RR gives the incident; a finished RR's cascade ends the analysis, not us.
        const rrName = ai.spec.remediationRequestRef.name
        const rr = rrName === undefined ? Option.none() : yield* load(k8s, "remediationrequests", rrName)
        if (Option.isNone(rr) || isTerminalPhase(phaseOf(rr.value))) return {}
        const now = yield* nowMillis
        // 3. Submit, or poll the session we have.
        const session = ai.status?.investigationSession
        const id = session?.id
        const generation = session?.generation ?? 1
        if (id === undefined || id === "") return yield* submit(rr.value, ai, now, (session?.generation ?? 0) + 1)
        return yield* agent.status(id).pipe(
          Effect.flatMap((s) => onStatus(rr.value, ai, now, s, id, generation)),
          Effect.catchTag("SessionNotFound", () => regenerate(rr.value, ai, now, generation))
        )
      })

    return { reconcile } as const
  })
}) {}
