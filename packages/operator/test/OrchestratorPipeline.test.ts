import { describe, expect, it } from "@effect/vitest"
import type { AuditEvent } from "@kubemend/core/domain/Audit"
import { reconstruct } from "@kubemend/storage/Reconstruct"
import { Duration, Effect, Either, Option, TestClock } from "effect"
import { randomUUID } from "node:crypto"
import { createSignalRr } from "./SignalRequests.ts"
import { workflowResult } from "./FakeAgent.ts"
import { apiGroup, harness, namespace, rr, sample, workload, workloads } from "./LifecycleHarness.ts"

const config = { stabilizationWindow: Duration.minutes(1) }

const phases = (events: ReadonlyArray<{ event_type: string }>) => events.map((e) => e.event_type)

describe("lifecycle: the pipeline", () => {
  it.scoped("happy path: a signal is analyzed, auto-approved, executed, verified and completed; storage rebuilds it", () =>
    Effect.gen(function* () {
      // The target the signal names, healthy once the workflow has run (the harness only marks the execution done).
      const h = yield* harness({ config, seed: workload("recommendations") })
      yield* h.run(createSignalRr(0, { namespace: workloads }))
      const name = (yield* h.k8s.listCr("remediationrequests")).items[0]!.metadata.name
      yield* h.settle
      let r = yield* h.rr(name)
      expect(r.status.overallPhase).toBe("Running")
      expect(r.status.selectedWorkflowRef).toMatchObject({ workflowId: "increase-memory-limit", version: "1.0.0" })
      const ai = Option.getOrThrow(yield* h.get("aianalyses", `ai-${name}`))
      expect(ai.status).toMatchObject({ phase: "Completed", approvalRequired: false, selectedWorkflow: { workflowId: "increase-memory-limit" } })
      expect(ai.status.investigationSession.id).toBe(h.agent.sessionIds()[0])
      expect(h.agent.submitted[0]).toMatchObject({ remediation_id: name, signal_name: "KubePodCrashLooping", severity: "critical" })
      const we = Option.getOrThrow(yield* h.get("workflowexecutions", `we-${name}`))
      expect(we.spec).toMatchObject({
        targetResource: "shop/Deployment/recommendations",
        parameters: { MEMORY_LIMIT: "256Mi", TARGET_NAME: "recommendations" }
      })
      expect(we.status.phase).toBe("Running")

      yield* TestClock.adjust("5 seconds")
      yield* h.settle
      r = yield* h.rr(name)
      expect(r.status.overallPhase).toBe("Verifying")
      yield* TestClock.adjust("1 minute")
      yield* h.settle
      r = yield* h.rr(name)
      expect(r.status).toMatchObject({ overallPhase: "Completed", outcome: "Remediated" })
      expect(r.status.retentionExpiryTime).toBeDefined()
      expect(Option.isNone(yield* h.get("remediationapprovalrequests", `rar-${name}`))).toBe(true)
      expect(Option.getOrThrow(yield* h.get("effectivenessassessments", `ea-${name}`)).status).toMatchObject({
        phase: "Completed",
        assessmentReason: "Partial",
        components: { healthAssessed: true, healthScore: 1, hashComputed: true, alertAssessed: false, metricsAssessed: false },
        conditions: [{ type: "RemediationEffective", status: "True", reason: "Effective" }]
      })

      const metrics = yield* h.metrics
      for (
        const [from, to] of [["Pending", "Processing"], ["Processing", "Analyzing"], ["Analyzing", "Approved"], ["Approved", "Running"], [
          "Running",
          "Verifying"
        ], ["Verifying", "Completed"]]
      ) {
        expect(sample(metrics, "svc_remediationorchestrator_phase_transitions_total", { from_phase: from!, to_phase: to! })).toBe(1)
      }
      for (const child of ["SignalProcessing", "AIAnalysis", "WorkflowExecution", "EffectivenessAssessment"]) {
        expect(sample(metrics, "svc_remediationorchestrator_child_crd_creations_total", { child_type: child })).toBe(1)
      }

      const audit = yield* h.audit
      const moved = (e: { event_type: string; event_data: Record<string, unknown> }) =>
        e.event_type === "orchestrator.lifecycle.transitioned" ? `-> ${String(e.event_data["to_phase"])}` : e.event_type
      expect(audit.filter((e) => e.correlation_id === name).map(moved)).toEqual([
        "gateway.signal.received",
        "orchestrator.lifecycle.created",
        "-> Processing",
        "signalprocessing.processing.completed",
        "-> Analyzing",
        "aianalysis.session.submitted",
        "aianalysis.analysis.completed",
        "workflowexecution.selection.completed",
        "-> Approved",
        "workflowexecution.execution.started",
        "-> Running",
        "-> Verifying",
        "remediation.workflow_created",
        "effectiveness.assessment.scheduled",
        "effectiveness.hash.computed",
        "effectiveness.health.assessed",
        "effectiveness.metrics.assessed",
        "effectiveness.alert.assessed",
        "effectiveness.assessment.completed",
        "orchestrator.lifecycle.completed"
      ])
      expect(audit.find((e) => e.event_type === "orchestrator.lifecycle.created")?.event_data).toMatchObject({
        signal_name: "KubePodCrashLooping",
        target_kind: "Deployment",
        target_name: "recommendations",
        target_namespace: workloads
      })
      const stored = audit.map((e) => ({ ...e, event_id: randomUUID() }) as AuditEvent)
      const rebuilt = reconstruct(name, stored, apiGroup, new Date())
      expect(rebuilt._tag).toBe("Right")
      if (rebuilt._tag === "Right") {
        expect(rebuilt.right.completeness).toBeGreaterThanOrEqual(90)
        expect(rebuilt.right.yaml).toContain("overallPhase: Completed")
        expect(rebuilt.right.yaml).toContain("workflowId: increase-memory-limit")
      }
    }))

  it.scoped("low confidence asks for approval; Approved moves on with the recommended workflow", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config, seed: [rr("rr-a")] })
      h.agent.script = () => ({ result: { confidence: 0.6 } })
      yield* h.settle
      const r = yield* h.rr("rr-a")
      expect(r.status.overallPhase).toBe("AwaitingApproval")
      const rar = Option.getOrThrow(yield* h.get("remediationapprovalrequests", "rar-rr-a"))
      expect(rar.spec).toMatchObject({
        confidence: 0.6,
        confidenceLevel: "medium",
        aiAnalysisRef: { name: "ai-rr-a" },
        recommendedWorkflow: { workflowId: "increase-memory-limit" }
      })
      expect(Date.parse(rar.spec.requiredBy)).toBe(15 * 60_000)
      expect(rar.status).toMatchObject({ timeRemaining: "15m" })
      expect(rar.status.decision).toBeUndefined()
      expect(Option.isNone(yield* h.get("workflowexecutions", "we-rr-a"))).toBe(true)

      yield* TestClock.adjust("1 minute")
      yield* h.settle
      expect(Option.getOrThrow(yield* h.get("remediationapprovalrequests", "rar-rr-a")).status.timeRemaining).toBe("14m")
      yield* h.k8s.patchCrStatus("remediationapprovalrequests", "rar-rr-a", { decision: "Approved", decidedBy: "alice", decisionMessage: "go" })
      yield* h.settle
      const after = yield* h.rr("rr-a")
      expect(after.status.overallPhase).toBe("Running")
      expect(after.status.selectedWorkflowRef.workflowId).toBe("increase-memory-limit")
      expect(sample(yield* h.metrics, "svc_remediationorchestrator_approval_decisions_total", { decision: "Approved" })).toBe(1)
      expect(phases(yield* h.audit)).toContain("orchestrator.approval.approved")
    }))

  it.scoped("a rejection fails the RR in the Approval phase", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config, seed: [rr("rr-a")] })
      h.agent.script = () => ({ result: { confidence: 0.3 } })
      yield* h.settle
      expect(Option.getOrThrow(yield* h.get("remediationapprovalrequests", "rar-rr-a")).spec.confidenceLevel).toBe("low")
      yield* h.k8s.patchCrStatus("remediationapprovalrequests", "rar-rr-a", { decision: "Rejected", decidedBy: "bob", decisionMessage: "too risky" })
      yield* h.settle
      const r = yield* h.rr("rr-a")
      expect(r.status).toMatchObject({ overallPhase: "Failed", failurePhase: "Approval", failureReason: "rejected by bob: too risky" })
      expect(Option.isNone(yield* h.get("workflowexecutions", "we-rr-a"))).toBe(true)
      expect(sample(yield* h.metrics, "svc_remediationorchestrator_approval_decisions_total", { decision: "Rejected" })).toBe(1)
    }))

  it.scoped("with no decision by requiredBy the RAR expires (decidedBy system) and the RR fails in Approval", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config, seed: [rr("rr-a")] })
      h.agent.script = () => ({ result: { confidence: 0.5 } })
      yield* h.settle
      yield* TestClock.adjust("15 minutes")
      yield* h.settle
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("AwaitingApproval")
      yield* TestClock.adjust("1 second")
      yield* h.settle
      const rar = Option.getOrThrow(yield* h.get("remediationapprovalrequests", "rar-rr-a"))
      expect(rar.status).toMatchObject({ decision: "Expired", decidedBy: "system", expired: true })
      expect((yield* h.rr("rr-a")).status).toMatchObject({
        overallPhase: "Failed",
        failurePhase: "Approval",
        failureReason: "approval request expired (timeout)"
      })
      expect(sample(yield* h.metrics, "svc_remediationorchestrator_approval_decisions_total", { decision: "Expired" })).toBe(1)
    }))

  it.scoped("dry run stops after analysis with outcome DryRun and creates no approval, execution or assessment", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config: { ...config, dryRun: true }, seed: [rr("rr-low"), rr("rr-high", { fingerprint: "b".repeat(64), target: "cart" })] })
      h.agent.script = (req) => ({ result: { confidence: req["remediation_id"] === "rr-low" ? 0.4 : 0.95 } })
      yield* h.settle
      for (const name of ["rr-low", "rr-high"]) {
        expect((yield* h.rr(name)).status).toMatchObject({ overallPhase: "Completed", outcome: "DryRun" })
      }
      for (const plural of ["remediationapprovalrequests", "workflowexecutions", "effectivenessassessments"] as const) {
        expect((yield* h.k8s.listCr(plural)).items).toEqual([])
      }
    }))

  it.scoped("an escalated investigation ends ManualReviewRequired with a NotificationRequest to the ops channel", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config, seed: [rr("rr-a")] })
      h.agent.script = () => ({
        result: workflowResult({
          selected_workflow: null,
          actionable: false,
          investigation_outcome: "escalated",
          needs_human_review: true,
          human_review_reason: "operator_escalation",
          root_cause: "needs the database team"
        })
      })
      yield* h.settle
      const r = yield* h.rr("rr-a")
      expect(r.status).toMatchObject({ overallPhase: "Completed", outcome: "ManualReviewRequired", requiresManualReview: true })
      expect(r.status.notificationRequestRefs).toEqual([{ kind: "NotificationRequest", name: "nr-rr-a-escalation", namespace }])
      const nr = Option.getOrThrow(yield* h.get("notificationrequests", "nr-rr-a-escalation"))
      expect(nr.spec).toMatchObject({ channel: "ops-escalation", reason: "operator_escalation", type: "escalation" })
      expect(Option.getOrThrow(yield* h.get("aianalyses", "ai-rr-a")).status).toMatchObject({
        humanReviewReason: "operator_escalation",
        subReason: "OperatorEscalation"
      })
    }))

  it.scoped("an investigation that finds nothing to do completes NoActionRequired", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config, seed: [rr("rr-a")] })
      h.agent.script = () => ({ result: { selected_workflow: null, actionable: false, investigation_outcome: "resolved" } })
      yield* h.settle
      expect((yield* h.rr("rr-a")).status).toMatchObject({ overallPhase: "Completed", outcome: "NoActionRequired" })
      expect(sample(yield* h.metrics, "svc_remediationorchestrator_no_action_needed_total", { reason: "ProblemResolved" })).toBe(1)
    }))

  it.scoped("a phase past its timeout ends TimedOut (analyzing, 10 minutes by default)", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config, seed: [rr("rr-a")] })
      h.agent.script = () => ({ polls: Infinity })
      yield* h.settle
      yield* TestClock.adjust("9 minutes")
      yield* h.settle
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("Analyzing")
      yield* TestClock.adjust("1 minute")
      yield* h.settle
      const r = yield* h.rr("rr-a")
      expect(r.status).toMatchObject({ overallPhase: "TimedOut", timeoutPhase: "Analyzing" })
      expect(sample(yield* h.metrics, "svc_remediationorchestrator_timeouts_total", { phase: "Analyzing" })).toBe(1)
      // The cascade ended the analysis the agent never finished.
      expect(Option.getOrThrow(yield* h.get("aianalyses", "ai-rr-a")).status.phase).toBe("Failed")
      // The trail says TimedOut, and storage rebuilds the RR (no signal event: the first-sight event is the genesis) as such.
      const stored = (yield* h.audit).map((e) => ({ ...e, event_id: randomUUID() }) as AuditEvent)
      const rebuilt = Either.getOrThrow(reconstruct("rr-a", stored.filter((e) => e.correlation_id === "rr-a"), apiGroup, new Date()))
      expect(rebuilt.yaml).toContain("overallPhase: TimedOut")
      expect(rebuilt.yaml).toContain("timeoutPhase: Analyzing")
    }))
})

describe("lifecycle: the analysis controller and the agent", () => {
  it.scoped("records the session id at once, then a 404 on poll (agent restarted) regenerates the session", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config, seed: [rr("rr-a")] })
      let sessions = 0
      h.agent.script = () => (sessions++ === 0 ? { polls: Infinity } : { polls: 1 })
      yield* h.settle
      const first = Option.getOrThrow(yield* h.get("aianalyses", "ai-rr-a")).status
      expect(first).toMatchObject({ phase: "Investigating", investigationSession: { generation: 1, interactive: false } })
      expect(first.investigationSession.id).toBe(h.agent.sessionIds()[0])

      h.agent.restart()
      yield* h.settle
      const second = Option.getOrThrow(yield* h.get("aianalyses", "ai-rr-a")).status
      expect(second.investigationSession.generation).toBe(2)
      expect(second.investigationSession.id).not.toBe(first.investigationSession.id)
      expect(second.investigationSession.id).toBe(h.agent.sessionIds()[0])
      yield* h.settle
      expect(Option.getOrThrow(yield* h.get("aianalyses", "ai-rr-a")).status.phase).toBe("Completed")
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("Running")
      expect(h.agent.submitted.map((r) => r["remediation_id"])).toEqual(["rr-a", "rr-a"])
      expect((yield* h.audit).map((e) => e.event_type)).toContain("aianalysis.session.regenerated")
    }))

  it.scoped("after 5 regenerations the analysis fails (SessionRegenerationExceeded) and so does the RR", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config, seed: [rr("rr-a")] })
      h.agent.script = () => ({ polls: Infinity })
      yield* h.settle
      for (let i = 0; i < 6; i++) {
        h.agent.restart()
        yield* h.settle
      }
      expect(h.agent.submitted.length).toBe(6)
      expect(Option.getOrThrow(yield* h.get("aianalyses", "ai-rr-a")).status).toMatchObject({
        phase: "Failed",
        subReason: "SessionRegenerationExceeded"
      })
      expect((yield* h.rr("rr-a")).status).toMatchObject({ overallPhase: "Failed", failurePhase: "AIAnalysis" })
      expect(sample(yield* h.metrics, "aianalysis_failures_total", { sub_reason: "SessionRegenerationExceeded" })).toBe(1)
    }))

  it.scoped("a failed investigation fails the analysis and the RR", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config, seed: [rr("rr-a")] })
      h.agent.script = () => ({ outcome: "failed" })
      yield* h.settle
      expect(Option.getOrThrow(yield* h.get("aianalyses", "ai-rr-a")).status).toMatchObject({ phase: "Failed", subReason: "InvestigationFailed" })
      expect((yield* h.rr("rr-a")).status).toMatchObject({ overallPhase: "Failed", failurePhase: "AIAnalysis" })
    }))

  it.scoped("an unreachable agent fails the reconcile as DependencyUnavailable (the work queue retries it)", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config: { ...config, agentUrl: "http://127.0.0.1:1" }, seed: [rr("rr-a")] })
      yield* h.reconcileRr("rr-a")
      yield* h.reconcileRr("rr-a")
      yield* h.reconcileSignalProcessing("sp-rr-a")
      yield* h.reconcileRr("rr-a")
      const error = yield* Effect.flip(h.reconcileAnalysis("ai-rr-a"))
      expect(error).toMatchObject({ _tag: "DependencyUnavailable", dependency: "agent" })
      expect(Option.getOrThrow(yield* h.get("aianalyses", "ai-rr-a")).status).toBeUndefined()
    }))

  it.scoped("an RR the agent created from an interactive session adopts that session instead of submitting", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config })
      const id = h.agent.open({ incident_id: "rr-x", remediation_id: "rr-x" }, {})
      yield* h.seed([rr("rr-x", { labels: { [`${apiGroup}/interactive-session`]: id } })])
      yield* h.settle
      expect(h.agent.submitted).toEqual([])
      const ai = Option.getOrThrow(yield* h.get("aianalyses", "ai-rr-x"))
      expect(ai.status).toMatchObject({ phase: "Completed", investigationSession: { id, generation: 1, interactive: true } })
      expect((yield* h.rr("rr-x")).status.overallPhase).toBe("Running")
    }))

  it.scoped("an interactive RR is submitted as interactive and only the global timeout applies while a person drives it", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config, seed: [rr("rr-i", { labels: { [`${apiGroup}/source`]: "interactive" } })] })
      h.agent.script = () => ({ polls: Infinity })
      yield* h.settle
      expect(h.agent.submitted[0]).toMatchObject({ interactive: true })
      yield* TestClock.adjust("30 minutes")
      yield* h.settle
      expect((yield* h.rr("rr-i")).status.overallPhase).toBe("Analyzing")
      yield* TestClock.adjust("30 minutes")
      yield* h.settle
      expect((yield* h.rr("rr-i")).status).toMatchObject({ overallPhase: "TimedOut", timeoutPhase: "Analyzing" })
      expect(sample(yield* h.metrics, "svc_remediationorchestrator_timeouts_total", { phase: "Global" })).toBe(1)
    }))
})
