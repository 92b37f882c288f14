/**
 * What `get_remediation` adds about an RR's children, for a person reading one remediation: the analysis's root
 * cause and selected workflow (AIAnalysis), the execution (WorkflowExecution) and the effectiveness component
 * scores (EffectivenessAssessment), each read through the ref in the RR's status. A child that is not there yet,
 * or cannot be read, is left out: the RR itself is the answer, its story is extra.
 */
import { Effect } from "effect"
import type { CrPlural, K8sService, KubeObject } from "@kubemend/core/K8s"
import { compact, num, record, specOf, statusOf, str } from "./Common.ts"

const strings = (u: unknown) => (Array.isArray(u) ? u.filter((s): s is string => typeof s === "string") : undefined)

const analysisView = (ai: KubeObject) => {
  const s = statusOf(ai)
  const rca = record(s.rootCauseAnalysis)
  const wf = record(s.selectedWorkflow)
  const rootCause = str(rca.summary) ?? str(s.rootCause)
  return {
    root_cause: rootCause === undefined ? undefined : compact({
      summary: rootCause,
      severity: str(rca.severity),
      contributing_factors: strings(rca.contributingFactors),
      analysis: ai.metadata.name,
      analysis_phase: str(s.phase)
    }),
    selected_workflow: str(wf.workflowId) === undefined ? undefined : compact({
      workflow_id: str(wf.workflowId),
      name: str(wf.workflowName),
      version: str(wf.version),
      action_type: str(wf.actionType),
      confidence: num(wf.confidence),
      rationale: str(wf.rationale),
      approval_required: typeof s.approvalRequired === "boolean" ? s.approvalRequired : undefined,
      approval_reason: str(s.approvalReason)
    })
  }
}

const executionView = (we: KubeObject) => {
  const s = statusOf(we)
  const run = record(s.executionStatus)
  const wf = record(specOf(we).workflowRef)
  return compact({
    name: we.metadata.name,
    workflow: str(wf.workflowName) ?? str(wf.workflowId),
    phase: str(s.phase),
    started_at: str(s.startTime),
    completed_at: str(s.completionTime),
    duration: str(s.duration),
    engine: str(s.executionEngine),
    run: str(record(s.executionRef).name),
    result: str(run.status),
    result_reason: str(run.reason) ?? str(run.message),
    failure_reason: str(s.failureReason)
  })
}

const effectivenessView = (ea: KubeObject) => {
  const s = statusOf(ea)
  const c = record(s.components)
  const component = (assessed: unknown, score: unknown) => compact({ assessed: assessed === true, score: num(score) })
  return compact({
    name: ea.metadata.name,
    phase: str(s.phase),
    reason: str(s.assessmentReason),
    completed_at: str(s.completedAt),
    message: str(s.message),
    components: {
      health: component(c.healthAssessed, c.healthScore),
      alert: component(c.alertAssessed, c.alertScore),
      metrics: component(c.metricsAssessed, c.metricsScore),
      spec_hash: compact({
        assessed: c.hashComputed === true,
        changed_since: c.currentSpecHash === undefined || c.postRemediationSpecHash === undefined
          ? undefined
          : c.currentSpecHash !== c.postRemediationSpecHash
      })
    }
  })
}

/** The children of `rr` its status names, as the fields `get_remediation` adds. */
export const storyOf = (k8s: K8sService, rr: KubeObject) => {
  const status = statusOf(rr)
  const child = (plural: CrPlural, ref: unknown) => {
    const name = str(record(ref).name)
    return name === undefined || name === "" ? Effect.succeed(undefined) : k8s.getCr(plural, name).pipe(Effect.orElseSucceed(() => undefined))
  }
  return Effect.all([
    child("aianalyses", status.aiAnalysisRef),
    child("workflowexecutions", status.workflowExecutionRef),
    child("effectivenessassessments", status.effectivenessAssessmentRef)
  ], { concurrency: "unbounded" }).pipe(
    Effect.map(([ai, we, ea]) =>
      compact({
        ...(ai === undefined ? {} : analysisView(ai)),
        execution: we === undefined ? undefined : executionView(we),
        effectiveness: ea === undefined ? undefined : effectivenessView(ea)
      })
    )
  )
}
