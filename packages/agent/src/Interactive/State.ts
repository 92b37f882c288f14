/**
 * One interactive investigation as this agent holds it: the agent session behind it, the conversation of the
 * current holder, the lease holder, what discovery returned and what was selected. Keyed by RR name.
 */
import { Effect, Option, Ref, Schema, type SubscriptionRef } from "effect"
import type { K8sService, KubeObject } from "@kubemend/core/K8s"
import type { IncidentRequest, IncidentResponse } from "@kubemend/core/domain/Incident"
import { RemediationRequestSpec } from "@kubemend/core/domain/RemediationRequest"
import type { RunState, TargetRef } from "../Investigation/Run.ts"
import type { Session } from "../Sessions/Session.ts"

export interface DiscoveredWorkflow {
  readonly workflow_id: string
  readonly name: string
  readonly description: string
  readonly kind: string
  readonly action_type: string
  readonly version: string
  readonly parameters: ReadonlyArray<{
    readonly name: string
    readonly type: string
    readonly description: string
    readonly required: boolean
    readonly default?: unknown
  }>
}

export interface Selection {
  readonly workflow: Record<string, unknown>
  readonly target: TargetRef
}

export interface InteractiveSession {
  readonly rr: string
  readonly session: Session
  /** Bumped on takeover: results of an abandoned holder's turn are dropped. */
  generation: number
  holder: string
  groups: ReadonlyArray<string>
  run: RunState
  readonly lastActivity: Ref.Ref<number>
  /** The lease is being renewed for `holder`. */
  connected: boolean
  readonly lock: Effect.Semaphore
  rrExists: boolean
  readonly discovered: Map<string, DiscoveredWorkflow>
  selection: Selection | undefined
  lastReply: string | undefined
  /**
   * Where the holder's conversation stands: a turn `running` (the opening analysis from the start on), its answer
   * in (`answered`, the summary is `lastReply`), it `failed`, or it was `stopped` (takeover, cancel, complete). An interactive session stays `active` after an
   * answer (the user goes on talking or completes it), so this, not the status, says the RCA is there.
   */
  readonly analysis: SubscriptionRef.SubscriptionRef<Analysis>
}

export type Analysis = "running" | "answered" | "failed" | "stopped"

const decodeSpec = Schema.decodeUnknownOption(RemediationRequestSpec)

/** What an interactive session investigates, from its RR (or the bare RR name when there is none yet). */
export const requestFor = (rr: string, object: Option.Option<KubeObject>): IncidentRequest => {
  const spec = Option.flatMap(object, (o) => decodeSpec(o.spec))
  const t = Option.map(spec, (s) => s.targetResource)
  return {
    incident_id: rr,
    remediation_id: rr,
    signal_name: Option.match(spec, { onNone: () => "InteractiveInvestigation", onSome: (s) => s.signalName }),
    severity: Option.flatMap(spec, (s) => Option.fromNullable(s.severity)).pipe(Option.getOrElse(() => "unknown" as const)),
    signal_source: Option.flatMap(spec, (s) => Option.fromNullable(s.signalSource)).pipe(Option.getOrElse(() => "interactive")),
    resource_namespace: Option.flatMap(t, (x) => Option.fromNullable(x.namespace)).pipe(Option.getOrElse(() => "")),
    resource_kind: Option.match(t, { onNone: () => "", onSome: (x) => x.kind }),
    resource_name: Option.match(t, { onNone: () => "", onSome: (x) => x.name }),
    resource_api_version: Option.flatMap(t, (x) => Option.fromNullable(x.apiVersion)).pipe(Option.getOrElse(() => "")),
    error_message: Option.flatMap(spec, (s) => Option.fromNullable(s.description)).pipe(Option.getOrElse(() => "")),
    environment: Option.flatMap(spec, (s) => Option.fromNullable(s.signalLabels?.["environment"])).pipe(Option.getOrElse(() => "unknown")),
    priority: Option.flatMap(spec, (s) => Option.fromNullable(s.signalLabels?.["priority"])).pipe(Option.getOrElse(() => "P2")),
    risk_tolerance: "medium",
    business_category: "unknown",
    cluster_name: "unknown",
    interactive: true
  }
}

/** The session's result when the operator closes it. */
export const closingResponse = (
  st: InteractiveSession,
  at: Date,
  outcome:
    | { readonly _tag: "workflow"; readonly selection: Selection; readonly user: string }
    | { readonly _tag: "no_action"; readonly reason?: string }
    | { readonly _tag: "escalated"; readonly reason: string }
): IncidentResponse => {
  const summary = st.lastReply ?? "interactive investigation"
  const target = outcome._tag === "workflow" ? outcome.selection.target : st.run.remediationTarget
  return {
    incident_id: st.session.request.incident_id,
    analysis: summary,
    root_cause_analysis: {
      summary,
      contributing_factors: [],
      ...(target === undefined ? {} : { remediation_target: target })
    },
    root_cause: summary,
    // A human chose the outcome; the operator's decision is not a model guess.
    confidence: 1,
    timestamp: at.toISOString(),
    investigation_outcome: outcome._tag === "workflow" ? "workflow_selected" : outcome._tag === "no_action" ? "completed_no_action" : "escalated",
    actionable: outcome._tag === "workflow",
    is_actionable: outcome._tag === "workflow" ? true : outcome._tag === "no_action" ? false : null,
    selected_workflow: outcome._tag === "workflow"
      ? { ...outcome.selection.workflow, rationale: `selected by ${outcome.user} in an interactive session` }
      : null,
    needs_human_review: outcome._tag === "escalated",
    human_review_reason: outcome._tag === "escalated" ? "operator_escalation" : null,
    warnings: [
      ...st.run.warnings,
      ...(outcome._tag === "escalated" ? [`escalated by the operator: ${outcome.reason}`] : []),
      ...(outcome._tag === "no_action" && outcome.reason !== undefined ? [`no action: ${outcome.reason}`] : [])
    ],
    alternative_workflows: [],
    validation_attempts_history: [...st.run.validations],
    detected_labels: null,
    alignment_verdict: null
  }
}

/** What the tools answer about a session. */
export const view = (st: InteractiveSession, status: string, extra: Record<string, unknown> = {}) =>
  Effect.map(Ref.get(st.analysis), (analysis) => ({
    session_id: st.session.id,
    rr_id: st.rr,
    status,
    holder: st.holder,
    analysis,
    ...(st.lastReply === undefined ? {} : { summary: st.lastReply }),
    ...extra
  }))

/**
 * Tells the session's event stream where the interactive session stands (`interactive_state`): who holds it, whether
 * it is connected, where the analysis is. Published when it changes hands, when a turn answers or fails, and when
 * it lapses, so a subscriber of the stream learns of these between calls.
 */
export const announce = (st: InteractiveSession, extra: Record<string, unknown> = {}) =>
  Effect.flatMap(Ref.get(st.analysis), (analysis) =>
    st.session.log.publish("interactive_state", {
      rr_id: st.rr,
      holder: st.holder,
      status: st.connected ? "active" : "disconnected",
      analysis,
      ...(analysis === "answered" && st.lastReply !== undefined ? { summary: st.lastReply } : {}),
      ...extra
    }))

/** Another user drives the session: a structured answer, not an error. */
export const sessionActive = (rr: string, holder: string) => ({
  rr_id: rr,
  status: "session_active",
  holder,
  message: `${holder} is driving this investigation; use action takeover to take it over`
})

/** The AIAnalysis of the RR (its `aiAnalysisRef`, else the one pointing at the RR) marked `InteractiveCancelled`. */
export const markAnalysisCancelled = (k8s: K8sService, rr: string, user: string, at: Date) =>
  Effect.gen(function* () {
    const rrObject = yield* Effect.option(k8s.getCr("remediationrequests", rr))
    const ref = rrObject._tag === "Some"
      ? (rrObject.value.status as { aiAnalysisRef?: { name?: string } } | undefined)?.aiAnalysisRef?.name
      : undefined
    const name = ref ?? (yield* k8s.listCr("aianalyses")).items.find((a) =>
      (a.spec as { remediationRequestRef?: { name?: string } } | undefined)?.remediationRequestRef?.name === rr
    )?.metadata.name
    if (name === undefined) return
    yield* k8s.patchCrStatus("aianalyses", name, {
      phase: "Failed",
      reason: "InteractiveCancelled",
      message: `interactive investigation cancelled by ${user}`,
      completedAt: at.toISOString()
    })
  }).pipe(Effect.catchAll((e) => Effect.logWarning("could not mark the AIAnalysis cancelled", e)))
