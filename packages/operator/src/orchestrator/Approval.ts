/**
 * Approval: a RemediationApprovalRequest (`rar-<rr>`) for an analysis below the confidence threshold, with
 * `requiredBy` = now + the approval timeout (15 minutes by default), and what its decision does to the RR. `Approved`
 * moves on (a workflow override replaces the selected workflow; one the catalog cannot run takes the approval back),
 * `Rejected` fails the RR. With no decision past
 * `requiredBy` the RAR gets decision `Expired` (decidedBy `system`) and the RR fails with failure phase `Approval`
 * (reference facts §13); until then `timeRemaining` is refreshed on every check (every 30 s).
 */
import { formatGoDuration } from "@kubemend/core/Config"
import { rarDecision } from "@kubemend/core/domain/ApprovalRequest"
import type { TargetResource } from "@kubemend/core/domain/Meta"
import { notify } from "./Escalation.ts"
import type { WorkflowOverrideRefused } from "@kubemend/core/WorkflowOverride"
import { Duration, Effect, Either, Option } from "effect"
import type { Reconciled } from "../runtime/Workers.ts"
import { mergeConditions } from "../runtime/Conditions.ts"
import {
  type AIAnalysis,
  childMeta,
  ensure,
  iso,
  load,
  millisOf,
  names,
  namespaceOf,
  type RemediationApprovalRequest,
  type RemediationRequest,
  rrRef
} from "../remediation/Objects.ts"
import { approvedWorkflow } from "./Override.ts"
import { type Env, selectionAudit, transition } from "../remediation/Transition.ts"

/**
 * `status.timeRemaining` in whole minutes (whole 10 seconds in the last minute): coarse enough that the refresh,
 * whose write brings the RAR back through the watch, settles instead of writing again at once.
 */
const timeRemaining = (millis: number) => millis >= 60_000 ? `${Math.ceil(millis / 60_000)}m` : `${Math.ceil(millis / 10_000) * 10}s`

const levelOf = (confidence: number) => (confidence >= 0.8 ? "high" : confidence >= 0.5 ? "medium" : "low")

const approvalAudit = (env: Env, rr: RemediationRequest, action: string, data: Record<string, unknown>, actor?: string) =>
  env.audit.emit({
    type: `orchestrator.approval.${action}`,
    category: "approval",
    outcome: action === "requested" ? "pending" : action === "approved" ? "success" : "failure",
    correlationId: rr.metadata.name,
    namespace: namespaceOf(rr, env.k8s.namespace),
    ...(actor === undefined ? {} : { actor: { type: actor === "system" ? "service" : "user", id: actor } }),
    resource: { type: "RemediationApprovalRequest", id: names.approval(rr.metadata.name) },
    data: { rr_name: rr.metadata.name, rar_name: names.approval(rr.metadata.name), ...data }
  })

/** What decided the approval: approval.rego's reasons when the policy decided, else the built-in threshold rule. */
const policyEvaluationOf = (context: unknown, why: string) => {
  const c = (typeof context === "object" && context !== null ? context : {}) as { policyName?: unknown; policyReasons?: unknown; policyDegraded?: unknown }
  if (typeof c.policyName !== "string") return { policyName: "confidence-threshold", matchedRules: ["confidence below threshold"], decision: "RequireApproval" }
  const reasons = Array.isArray(c.policyReasons) ? c.policyReasons.filter((r): r is string => typeof r === "string") : []
  return {
    policyName: c.policyName,
    matchedRules: reasons.length > 0 ? reasons : [why],
    decision: c.policyDegraded === true ? "RequireApproval (policy engine degraded)" : "RequireApproval"
  }
}

/** Creates the RAR (once) from the completed analysis; true when this call created it. */
const ensureRar = (env: Env, rr: RemediationRequest, ai: AIAnalysis, now: number) =>
  Effect.gen(function* () {
    const s = ai.status!
    const wf = s.selectedWorkflow!
    const confidence = Math.min(1, Math.max(0, Number((s.approvalContext as { confidence?: unknown } | undefined)?.confidence ?? wf.confidence ?? 0)))
    const name = names.approval(rr.metadata.name)
    const timeout = env.config.timeouts.awaitingApproval
    const why = s.approvalReason ?? `confidence ${confidence} is below the auto-approval threshold ${env.config.confidenceThreshold}`
    const created = yield* ensure(env.k8s, "remediationapprovalrequests", {
      metadata: childMeta(rr, name, env.k8s.apiGroup, env.k8s.namespace),
      spec: {
        remediationRequestRef: rrRef(rr, env.k8s.apiGroup, env.k8s.namespace),
        aiAnalysisRef: { name: ai.metadata.name },
        confidence,
        confidenceLevel: levelOf(confidence),
        reason: why,
        whyApprovalRequired: why,
        recommendedWorkflow: {
          workflowId: wf.workflowId,
          version: wf.version ?? "",
          ...(wf.workflowName === undefined ? {} : { workflowName: wf.workflowName }),
          ...(wf.executionBundle === undefined ? {} : { executionBundle: wf.executionBundle }),
          ...(wf.rationale === undefined ? {} : { rationale: wf.rationale })
        },
        recommendedActions: [{ action: `run workflow ${wf.workflowName ?? wf.workflowId}`, rationale: wf.rationale ?? s.rootCause ?? "" }],
        ...(s.rootCause === undefined ? {} : { investigationSummary: s.rootCause }),
        ...(s.rootCauseAnalysis?.contributingFactors === undefined ? {} : { evidenceCollected: s.rootCauseAnalysis.contributingFactors }),
        alternativesConsidered: (s.alternativeWorkflows ?? []).map((a) => ({ approach: a.workflowId, prosCons: a.rationale ?? "" })),
        policyEvaluation: policyEvaluationOf(s.approvalContext, why),
        requiredBy: iso(now + Duration.toMillis(timeout))
      }
    })
    if (created) {
      // Status is a subresource: the create ignored it.
      yield* env.k8s.patchCrStatus("remediationapprovalrequests", name, {
        createdAt: iso(now),
        timeRemaining: formatGoDuration(timeout),
        reason: "AwaitingDecision",
        message: why
      })
      yield* env.metrics.childCreated(namespaceOf(rr, env.k8s.namespace), "RemediationApprovalRequest")
      yield* approvalAudit(env, rr, "requested", { confidence, workflow_id: wf.workflowId, required_by: iso(now + Duration.toMillis(timeout)) })
    }
    return created
  })

export const requestApproval = (env: Env, rr: RemediationRequest, ai: AIAnalysis, now: number, target: TargetResource) =>
  Effect.gen(function* () {
    const created = yield* ensureRar(env, rr, ai, now)
    // People are told an approval waits (once: the notification is idempotent by name).
    const refs = created || !(rr.status?.notificationRequestRefs ?? []).some((r) => r.name === names.notification(rr.metadata.name, "approval"))
      ? yield* notify(env, rr, now, {
        kind: "approval",
        type: "approval",
        reason: "AwaitingApproval",
        subject: `Approval waiting: ${rr.spec.signalName} (${rr.metadata.name})`,
        body: `Approve or reject ${names.approval(rr.metadata.name)} before ${iso(now + Duration.toMillis(env.config.timeouts.awaitingApproval))}: ` +
          `${
            ai.status?.selectedWorkflow?.workflowName ?? ai.status?.selectedWorkflow?.workflowId ?? "the recommended workflow"
          } on ${target.kind}/${target.name}.`
      })
      : undefined
    yield* transition(env, rr, now, "AwaitingApproval", { remediationTarget: target, ...(refs === undefined ? {} : { notificationRequestRefs: refs }) })
    return { requeueAfter: Duration.min(env.config.routing.recheckInterval, env.config.timeouts.awaitingApproval) } satisfies Reconciled
  })

/**
 * An override naming no runnable workflow is refused as the reference's admission webhook refuses the write (a
 * decision written with kubectl reaches no webhook here): the decision is taken back, the RAR is Pending again
 * until `requiredBy` and says why. Written on what was read, so a new decision made meanwhile is not undone.
 */
const refuseOverride = (env: Env, rr: RemediationRequest, rar: RemediationApprovalRequest, e: WorkflowOverrideRefused, now: number) =>
  Effect.gen(function* () {
    const by = rar.status?.decidedBy ?? "unknown"
    const message = `${e.message}; the approval by ${by} was refused, decide again`
    const written = yield* env.k8s.patchCrStatus("remediationapprovalrequests", rar.metadata.name, {
      decision: "",
      decidedBy: null,
      decidedAt: null,
      decidedVia: null,
      decisionMessage: null,
      workflowOverride: null,
      reason: "WorkflowOverrideRefused",
      message,
      conditions: mergeConditions(rar.status?.conditions, [{ type: "WorkflowOverrideValid", status: "False", reason: e.reason, message }], iso(now), undefined)
    }, { resourceVersion: rar.metadata.resourceVersion }).pipe(Effect.as(true), Effect.catchTag("K8sConflict", () => Effect.succeed(false)))
    if (written) {
      yield* Effect.logWarning(`${rar.metadata.name}: ${message}`)
      yield* approvalAudit(env, rr, "override_refused", { decided_by: by, workflow_override: e.value, reason: e.message }, by)
    }
    return { requeueAfter: Duration.zero } satisfies Reconciled
  })

const expire = (env: Env, rr: RemediationRequest, rar: RemediationApprovalRequest, now: number) =>
  Effect.gen(function* () {
    if (rar.status?.decision !== "Expired") {
      // Guarded: a decision written after our read must not become Expired; a conflict decides again.
      const written = yield* env.k8s.patchCrStatus("remediationapprovalrequests", rar.metadata.name, {
        decision: "Expired",
        decidedBy: "system",
        decidedAt: iso(now),
        expired: true,
        timeRemaining: "0s",
        reason: "ApprovalExpired",
        message: "approval request expired (timeout)",
        conditions: [
          { type: "ApprovalExpired", status: "True", reason: "Timeout", lastTransitionTime: iso(now) },
          { type: "ApprovalPending", status: "False", reason: "Expired", lastTransitionTime: iso(now) },
          { type: "Ready", status: "False", reason: "Expired", lastTransitionTime: iso(now) }
        ]
      }, { resourceVersion: rar.metadata.resourceVersion }).pipe(Effect.as(true), Effect.catchTag("K8sConflict", () => Effect.succeed(false)))
      if (!written) return { requeueAfter: Duration.zero } satisfies Reconciled
    }
    const moved = yield* transition(env, rr, now, "Failed", {
      failurePhase: "Approval",
      failureReason: "approval request expired (timeout)"
    })
    if (moved) {
      yield* env.metrics.approvalDecision(namespaceOf(rr, env.k8s.namespace), "Expired")
      yield* approvalAudit(env, rr, "expired", { decided_by: "system" }, "system")
    }
    return {}
  })

export const onAwaitingApproval = (env: Env, rr: RemediationRequest, now: number) =>
  Effect.gen(function* () {
    const namespace = namespaceOf(rr, env.k8s.namespace)
    const found = yield* load(env.k8s, "remediationapprovalrequests", names.approval(rr.metadata.name))
    if (Option.isNone(found)) {
      // Lost its RAR (deleted by hand): ask again from the analysis, or give up when that is gone too.
      const ai = rr.status?.aiAnalysisRef?.name === undefined ? Option.none() : yield* load(env.k8s, "aianalyses", rr.status.aiAnalysisRef.name)
      if (Option.isSome(ai) && ai.value.status?.selectedWorkflow !== undefined) {
        yield* ensureRar(env, rr, ai.value, now)
        return { requeueAfter: env.config.routing.recheckInterval } satisfies Reconciled
      }
      yield* transition(env, rr, now, "Failed", { failurePhase: "Approval", failureReason: "approval request missing" })
      return {}
    }
    const rar = found.value
    const decidedBy = rar.status?.decidedBy ?? "unknown"
    switch (rarDecision(rar.status)) {
      case "Approved": {
        const chosen = yield* Effect.either(approvedWorkflow(env, rar))
        if (Either.isLeft(chosen)) {
          if (chosen.left._tag === "WorkflowOverrideRefused") return yield* refuseOverride(env, rr, rar, chosen.left, now)
          // The catalog cannot be asked: the decision waits for it (the RAR's deadline no longer applies).
          yield* Effect.logWarning(`${rar.metadata.name}: the workflow override cannot be checked, storage answered ${chosen.left._tag}`)
          return { requeueAfter: env.config.routing.recheckInterval } satisfies Reconciled
        }
        const wf = chosen.right
        const moved = yield* transition(env, rr, now, "Approved", { selectedWorkflowRef: wf })
        if (moved) {
          yield* env.metrics.approvalDecision(namespace, "Approved")
          yield* approvalAudit(env, rr, "approved", {
            decided_by: decidedBy,
            workflow_id: wf.workflowId,
            workflow_override: rar.status?.workflowOverride?.workflowName
          }, decidedBy)
          yield* selectionAudit(env, rr, wf)
        }
        return { requeueAfter: Duration.zero } satisfies Reconciled
      }
      case "Rejected": {
        const message = rar.status?.decisionMessage
        const moved = yield* transition(env, rr, now, "Failed", {
          failurePhase: "Approval",
          failureReason: `rejected by ${decidedBy}${message === undefined ? "" : `: ${message}`}`
        })
        if (moved) {
          yield* env.metrics.approvalDecision(namespace, "Rejected")
          yield* approvalAudit(env, rr, "rejected", { decided_by: decidedBy, reason: message }, decidedBy)
        }
        return {}
      }
      case "Expired":
        return yield* expire(env, rr, rar, now)
      case "Pending": {
        const deadline = Option.getOrElse(millisOf(rar.spec.requiredBy), () => now)
        if (now > deadline) return yield* expire(env, rr, rar, now)
        const remaining = timeRemaining(deadline - now)
        if (rar.status?.timeRemaining !== remaining) {
          const written = yield* env.k8s.patchCrStatus("remediationapprovalrequests", rar.metadata.name, { timeRemaining: remaining }, {
            resourceVersion: rar.metadata.resourceVersion
          }).pipe(Effect.as(true), Effect.catchTag("K8sConflict", () => Effect.succeed(false)))
          // Someone wrote the RAR meanwhile (a decision?): look at it again at once.
          if (!written) return { requeueAfter: Duration.zero } satisfies Reconciled
        }
        return {
          requeueAfter: Duration.min(env.config.routing.recheckInterval, Duration.millis(deadline - now + 1))
        } satisfies Reconciled
      }
    }
  })
