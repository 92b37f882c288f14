/**
 * The front of the pipeline: `Pending` (first sight: start time, timeout config, routing before analysis),
 * `Processing` (the SignalProcessing child, which the signal-processing controller enriches and classifies), and
 * `Analyzing` (the AIAnalysis child, driven by the analysis controller, and what its result means for the RR).
 */
import { formatGoDuration } from "@kubemend/core/Config"
import { backoffDelay } from "@kubemend/core/domain/Phases"
import { Duration, Effect, Option } from "effect"
import type { Reconciled } from "../runtime/Workers.ts"
import { requestApproval } from "./Approval.ts"
import { block } from "./Blocking.ts"
import { manualReview } from "./Escalation.ts"
import type { KubeObject } from "@kubemend/core/K8s"
import {
  type AIAnalysis,
  childMeta,
  ensure,
  getRaw,
  iso,
  load,
  loadAll,
  names,
  namespaceOf,
  type RemediationRequest,
  rrLabel,
  rrRef,
  statusField
} from "../remediation/Objects.ts"
import { preAnalysis } from "../remediation/Routing.ts"
import { createdAudit, type Env, patchStatus, selectionAudit, transition } from "../remediation/Transition.ts"

const now0: Reconciled = { requeueAfter: Duration.zero }
const priorityBySeverity: Readonly<Record<string, string>> = { critical: "P0", high: "P1", warning: "P2", info: "P3" }

export const onPending = (env: Env, rr: RemediationRequest, now: number) =>
  Effect.gen(function* () {
    const first = rr.status?.startTime === undefined
    const t = env.config.timeouts
    const start = first
      ? {
        startTime: iso(now),
        timeoutConfig: {
          global: formatGoDuration(t.global),
          processing: formatGoDuration(t.processing),
          analyzing: formatGoDuration(t.analyzing),
          executing: formatGoDuration(t.executing),
          awaitingApproval: formatGoDuration(t.awaitingApproval),
          verifying: formatGoDuration(t.verifying)
        }
      }
      : {}
    if (first) yield* createdAudit(env, rr, start.timeoutConfig)
    const blocked = yield* preAnalysis(env, rr, now)
    if (Option.isSome(blocked)) return yield* block(env, rr, now, blocked.value, start)
    yield* transition(env, rr, now, "Processing", { ...start, processingStartTime: iso(now) })
    return now0
  })

export const onProcessing = (env: Env, rr: RemediationRequest, now: number) =>
  Effect.gen(function* () {
    const name = names.signalProcessing(rr.metadata.name)
    const namespace = namespaceOf(rr, env.k8s.namespace)
    const existing = yield* getRaw(env.k8s, "signalprocessings", name)
    if (Option.isNone(existing)) {
      yield* ensure(env.k8s, "signalprocessings", {
        metadata: childMeta(rr, name, env.k8s.apiGroup, env.k8s.namespace),
        spec: {
          remediationRequestRef: rrRef(rr, env.k8s.apiGroup, env.k8s.namespace),
          signal: {
            name: rr.spec.signalName,
            fingerprint: rr.spec.signalFingerprint,
            severity: rr.spec.severity ?? "unknown",
            targetResource: rr.spec.targetResource,
            ...(rr.spec.signalLabels === undefined ? {} : { labels: rr.spec.signalLabels }),
            ...(rr.spec.signalAnnotations === undefined ? {} : { annotations: rr.spec.signalAnnotations })
          }
        }
      })
      yield* env.metrics.childCreated(namespace, "SignalProcessing")
      yield* patchStatus(env, rr, { signalProcessingRef: { kind: "SignalProcessing", name, namespace } })
      // The signal-processing controller enriches and classifies it; its change brings the RR back here.
      return { requeueAfter: env.config.pollInterval } satisfies Reconciled
    }
    const sp = existing.value
    switch (statusField(sp, "phase")) {
      case "Completed":
        break
      case "Failed": {
        const message = statusField(sp, "message")
        yield* transition(env, rr, now, "Failed", {
          failurePhase: "SignalProcessing",
          failureReason: typeof message === "string" ? message : "signal processing failed"
        })
        return {}
      }
      default:
        return { requeueAfter: env.config.pollInterval } satisfies Reconciled
    }
    if (statusField(sp, "actionable") === false) {
      const moved = yield* transition(env, rr, now, "Completed", {
        outcome: "NoActionRequired",
        signalProcessingRef: { kind: "SignalProcessing", name, namespace },
        message: "policy.rego classified the signal as not actionable"
      })
      if (moved) yield* env.metrics.noAction(namespace, "NotActionable")
      return {}
    }
    const ai = yield* ensureAnalysis(env, rr)
    yield* transition(env, rr, now, "Analyzing", {
      signalProcessingRef: { kind: "SignalProcessing", name, namespace },
      aiAnalysisRef: { kind: "AIAnalysis", name: ai, namespace },
      analyzingStartTime: iso(now)
    })
    return now0
  })

/** What the SignalProcessing found, as the analysis request's signal context takes it. */
const signalContextOf = (rr: RemediationRequest, sp: Option.Option<KubeObject>) => {
  const field = (key: string) => Option.getOrUndefined(Option.map(sp, (o) => statusField(o, key)))
  const text = (key: string, fallback: string) => {
    const v = field(key)
    return typeof v === "string" && v !== "" ? v : fallback
  }
  const severity = rr.spec.severity ?? "unknown"
  const enrichment = field("enrichmentResults")
  return {
    environment: text("environment", rr.spec.signalLabels?.["environment"] ?? "unknown"),
    businessPriority: text("priority", rr.spec.signalLabels?.["priority"] ?? priorityBySeverity[severity] ?? "P2"),
    enrichmentResults: typeof enrichment === "object" && enrichment !== null
      ? (enrichment as Record<string, unknown>)
      : { kubernetesContext: { degradedMode: true } }
  }
}

/**
 * The RR's current analysis: an unfinished one is adopted (a retried reconcile finds its own create), otherwise a
 * new attempt is created (`ai-<rr>`, then `ai-<rr>-r2` … after inconclusive strikes).
 */
const ensureAnalysis = (env: Env, rr: RemediationRequest) =>
  Effect.gen(function* () {
    const mine = yield* loadAll(env.k8s, "aianalyses", `${rrLabel(env.k8s.apiGroup)}=${rr.metadata.name.slice(0, 63)}`)
    const open = mine.find((a) => a.spec.remediationRequestRef.name === rr.metadata.name && a.status?.phase !== "Completed" && a.status?.phase !== "Failed")
    if (open !== undefined) return open.metadata.name
    let attempt = mine.length + 1
    while (mine.some((a) => a.metadata.name === names.aiAnalysis(rr.metadata.name, attempt))) attempt++
    const name = names.aiAnalysis(rr.metadata.name, attempt)
    const target = rr.spec.targetResource
    const context = signalContextOf(rr, yield* getRaw(env.k8s, "signalprocessings", names.signalProcessing(rr.metadata.name)))
    const created = yield* ensure(env.k8s, "aianalyses", {
      metadata: childMeta(rr, name, env.k8s.apiGroup, env.k8s.namespace),
      spec: {
        remediationRequestRef: rrRef(rr, env.k8s.apiGroup, env.k8s.namespace),
        remediationId: rr.metadata.name,
        analysisRequest: {
          signalContext: {
            fingerprint: rr.spec.signalFingerprint,
            severity: rr.spec.severity ?? "unknown",
            signalName: rr.spec.signalName,
            signalMode: "reactive",
            ...context,
            targetResource: target,
            ...(rr.spec.signalAnnotations === undefined ? {} : { signalAnnotations: rr.spec.signalAnnotations })
          },
          analysisTypes: ["investigation", "workflow-selection"]
        },
        timeoutConfig: { analyzingTimeout: formatGoDuration(env.config.timeouts.analyzing) }
      }
    })
    if (created) yield* env.metrics.childCreated(namespaceOf(rr, env.k8s.namespace), "AIAnalysis")
    return name
  })

export const onAnalyzing = (env: Env, rr: RemediationRequest, now: number) =>
  Effect.gen(function* () {
    const ref = rr.status?.aiAnalysisRef?.name
    const ai = ref === undefined ? Option.none<AIAnalysis>() : yield* load(env.k8s, "aianalyses", ref)
    if (Option.isNone(ai)) {
      // Entered Analyzing without (or lost) its analysis: create one and start its clock now.
      const name = yield* ensureAnalysis(env, rr)
      yield* patchStatus(env, rr, {
        aiAnalysisRef: { kind: "AIAnalysis", name, namespace: namespaceOf(rr, env.k8s.namespace) },
        ...(rr.status?.analyzingStartTime === undefined ? { analyzingStartTime: iso(now) } : {})
      })
      return {}
    }
    const status = ai.value.status
    if (status?.phase === "Failed") {
      yield* transition(env, rr, now, "Failed", {
        failurePhase: "AIAnalysis",
        failureReason: status.message ?? status.subReason ?? "analysis failed"
      })
      return {}
    }
    if (status?.phase !== "Completed") return {}
    return yield* decide(env, rr, ai.value, now)
  })

/** What a completed analysis means for the RR. */
const decide = (env: Env, rr: RemediationRequest, ai: AIAnalysis, now: number) =>
  Effect.gen(function* () {
    const s = ai.status!
    const namespace = namespaceOf(rr, env.k8s.namespace)
    if (s.subReason === "InvestigationInconclusive") return yield* strike(env, rr, now)
    const wf = s.selectedWorkflow
    if (wf === undefined) {
      if (s.needsHumanReview === true) {
        return yield* manualReview(env, rr, now, s.humanReviewReason ?? "unspecified", s.rootCause ?? s.message ?? "no workflow selected")
      }
      const moved = yield* transition(env, rr, now, "Completed", {
        outcome: "NoActionRequired",
        message: s.rootCause ?? s.message ?? "no action needed"
      })
      if (moved) yield* env.metrics.noAction(namespace, s.subReason ?? "NotActionable")
      return {}
    }
    const selected = {
      workflowId: wf.workflowId,
      ...(wf.version === undefined ? {} : { version: wf.version }),
      ...(wf.workflowName === undefined ? {} : { workflowName: wf.workflowName }),
      ...(wf.executionBundle === undefined ? {} : { executionBundle: wf.executionBundle })
    }
    const analysisTarget = s.rootCauseAnalysis?.remediationTarget
    const namespaceDefault = analysisTarget?.namespace ?? rr.spec.targetResource.namespace
    const remediationTarget = analysisTarget === undefined
      ? rr.spec.targetResource
      : { ...analysisTarget, ...(namespaceDefault === undefined ? {} : { namespace: namespaceDefault }) }
    if (env.config.dryRun) {
      yield* transition(env, rr, now, "Completed", {
        outcome: "DryRun",
        selectedWorkflowRef: selected,
        remediationTarget,
        message: `dry run: stopped after analysis (workflow ${wf.workflowId} not executed)`
      })
      return {}
    }
    if (s.approvalRequired === true) return yield* requestApproval(env, rr, ai, now, remediationTarget)
    yield* selectionAudit(env, rr, selected)
    yield* transition(env, rr, now, "Approved", { selectedWorkflowRef: selected, remediationTarget })
    return now0
  })

/**
 * An inconclusive investigation: back off (1 minute doubling up to 10) and analyze again with a new attempt; from
 * the configured strike on (3) the RR blocks for the consecutive-failure cooldown instead.
 */
const strike = (env: Env, rr: RemediationRequest, now: number) => {
  const r = env.config.routing
  const strikes = (rr.status?.consecutiveFailureCount ?? 0) + 1
  const fields = { consecutiveFailureCount: strikes, aiAnalysisRef: null, analyzingStartTime: null }
  return strikes >= r.inconclusiveStrikes
    ? block(env, rr, now, {
      reason: "ConsecutiveFailures",
      message: `investigation inconclusive ${strikes} times; retrying after the cooldown`,
      until: now + Duration.toMillis(r.consecutiveFailureCooldown)
    }, fields)
    : block(env, rr, now, {
      reason: "ExponentialBackoff",
      message: `investigation inconclusive (strike ${strikes} of ${r.inconclusiveStrikes}); analyzing again after a backoff`,
      until: now + Duration.toMillis(backoffDelay(strikes, r.exponentialBackoffBase, r.exponentialBackoffMax))
    }, fields)
}
