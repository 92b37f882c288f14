import { describe, expect, it } from "@effect/vitest"
import { providerFor } from "@kubemend/core/Config"
import type { KubeObject } from "@kubemend/core/K8s"
import { ConfigProvider, Duration, Effect, Fiber, Layer, Option, TestClock } from "effect"
import { LifecycleConfig } from "../src/remediation/LifecycleConfig.ts"
import { workflowResult } from "./FakeAgent.ts"
import { signalStream } from "./SignalRequests.ts"
import { apiGroup, harness, managedNamespace, namespace, rr, sample, workload, workloads } from "./LifecycleHarness.ts"

const config = { stabilizationWindow: Duration.minutes(1) }
const at = (ms: number) => new Date(ms).toISOString()

const finished = (name: string, status: Record<string, unknown>) => rr(name, { status: { completedAt: at(0), ...status } })

const execution = (name: string, owner: string, workflowId: string, status: Record<string, unknown>): KubeObject => ({
  apiVersion: `${apiGroup}/v1alpha1`,
  kind: "WorkflowExecution",
  metadata: { name, namespace },
  spec: { remediationRequestRef: { name: owner }, targetResource: `${workloads}/Deployment/checkout`, workflowRef: { workflowId } },
  status
})

const millis = (d: unknown) => Duration.toMillis((d as { requeueAfter: Duration.Duration }).requeueAfter)

describe("lifecycle: routing", () => {
  it.scoped("UnmanagedResource blocks until the namespace is labeled, rechecking every 30 s", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config, seed: [rr("rr-a", { targetNamespace: "legacy" }), managedNamespace("legacy", false)] })
      yield* h.settle
      const r = yield* h.rr("rr-a")
      expect(r.status).toMatchObject({ overallPhase: "Blocked", blockReason: "UnmanagedResource" })
      expect(r.status.blockMessage).toContain(`${apiGroup}/managed=true`)
      expect(r.status.blockedUntil).toBeUndefined()
      expect(millis(yield* h.reconcileRr("rr-a"))).toBe(30_000)
      expect(h.agent.submitted).toEqual([])
      yield* h.seed([managedNamespace("legacy")])
      yield* h.settle
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("Running")
      expect((yield* h.rr("rr-a")).status.blockReason).toBeUndefined()
      expect(sample(yield* h.metrics, "svc_remediationorchestrator_blocked_total", { reason: "UnmanagedResource" })).toBe(1)
    }))

  it.scoped("a resource labeled managed is remediated in an unlabeled namespace", () =>
    Effect.gen(function* () {
      const deployment: KubeObject = {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "checkout", namespace: "legacy", labels: { [`${apiGroup}/managed`]: "true" } }
      }
      const h = yield* harness({ config, seed: [rr("rr-a", { targetNamespace: "legacy" }), deployment] })
      yield* h.settle
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("Running")
    }))

  it.scoped("DuplicateInProgress waits for the active RR (30 s rechecks) and inherits its outcome", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config, seed: [rr("rr-a"), rr("rr-b"), ...workload("checkout")] })
      yield* h.settle
      const dup = yield* h.rr("rr-b")
      expect(dup.status).toMatchObject({ overallPhase: "Blocked", blockReason: "DuplicateInProgress", duplicateOf: "rr-a" })
      expect((yield* h.rr("rr-a")).status.deduplication).toMatchObject({ occurrenceCount: 2 })
      expect(millis(yield* h.reconcileRr("rr-b"))).toBe(30_000)
      yield* TestClock.adjust("5 seconds")
      yield* h.settle
      yield* TestClock.adjust("1 minute")
      yield* h.settle
      expect((yield* h.rr("rr-a")).status).toMatchObject({ overallPhase: "Completed", outcome: "Remediated" })
      expect((yield* h.rr("rr-b")).status).toMatchObject({ overallPhase: "Completed", outcome: "Remediated", message: "inherited the outcome of rr-a" })
      expect(h.agent.submitted.length).toBe(1)
      expect(sample(yield* h.metrics, "svc_remediationorchestrator_duplicates_skipped_total", { skip_reason: "DuplicateInProgress" })).toBe(1)
    }))

  it.scoped("ResourceBusy holds an approved RR while another execution runs on the target", () =>
    Effect.gen(function* () {
      const h = yield* harness({
        config,
        completeExecutions: false,
        seed: [rr("rr-a"), execution("we-other", "rr-other", "restart-pod", { phase: "Running" })]
      })
      yield* h.settle
      expect((yield* h.rr("rr-a")).status).toMatchObject({ overallPhase: "Blocked", blockReason: "ResourceBusy" })
      expect(millis(yield* h.reconcileRr("rr-a"))).toBe(30_000)
      yield* h.k8s.patchCrStatus("workflowexecutions", "we-other", { phase: "Failed" })
      yield* h.settle
      const r = yield* h.rr("rr-a")
      expect(r.status.overallPhase).toBe("Running")
      expect(r.status.workflowExecutionRef.name).toBe("we-rr-a")
    }))

  it.scoped("RecentlyRemediated: the same workflow on the same target within 5 minutes waits out the cooldown", () =>
    Effect.gen(function* () {
      const h = yield* harness({
        config,
        completeExecutions: false,
        seed: [rr("rr-a"), execution("we-old", "rr-old", "increase-memory-limit", { phase: "Completed", completionTime: at(0) })]
      })
      yield* h.settle
      const r = yield* h.rr("rr-a")
      expect(r.status).toMatchObject({ overallPhase: "Blocked", blockReason: "RecentlyRemediated", blockedUntil: at(5 * 60_000) })
      yield* TestClock.adjust("4 minutes")
      yield* h.settle
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("Blocked")
      yield* TestClock.adjust("1 minute")
      yield* h.settle
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("Running")
    }))

  it.scoped("ExponentialBackoff after workflow failures: 1 minute, then 2 for two failures", () =>
    Effect.gen(function* () {
      const failed = (name: string) => finished(name, { overallPhase: "Failed", failurePhase: "WorkflowExecution" })
      const h = yield* harness({ config, seed: [failed("rr-old1"), rr("rr-a")] })
      yield* h.settle
      expect((yield* h.rr("rr-a")).status).toMatchObject({ overallPhase: "Blocked", blockReason: "ExponentialBackoff", blockedUntil: at(60_000) })
      yield* TestClock.adjust("1 minute")
      yield* h.settle
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("Running")

      yield* h.seed([failed("rr-old2"), rr("rr-b", { fingerprint: "a".repeat(64) })])
      yield* h.k8s.patchCrStatus("remediationrequests", "rr-a", { overallPhase: "Cancelled" })
      yield* h.settle
      expect((yield* h.rr("rr-b")).status).toMatchObject({ blockReason: "ExponentialBackoff", blockedUntil: at(2 * 60_000) })
    }))

  it.scoped("ConsecutiveFailures: 3 failures on one fingerprint block for an hour, then the RR is retried", () =>
    Effect.gen(function* () {
      const failed = (name: string) => finished(name, { overallPhase: "Failed", failurePhase: "AIAnalysis" })
      const h = yield* harness({ config, seed: [failed("rr-f1"), failed("rr-f2"), failed("rr-f3"), rr("rr-a")] })
      yield* h.settle
      expect((yield* h.rr("rr-a")).status).toMatchObject({ overallPhase: "Blocked", blockReason: "ConsecutiveFailures", blockedUntil: at(3_600_000) })
      expect(millis(yield* h.reconcileRr("rr-a"))).toBe(3_600_000)
      yield* TestClock.adjust("1 hour")
      yield* h.settle
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("Running")
    }))

  it.scoped("IneffectiveChain: remediations that keep coming back escalate to manual review and stay blocked", () =>
    Effect.gen(function* () {
      const done = (name: string) => finished(name, { overallPhase: "Completed", outcome: "Remediated" })
      const h = yield* harness({ config, seed: [done("rr-d1"), done("rr-d2"), done("rr-d3"), rr("rr-a")] })
      yield* h.settle
      const r = yield* h.rr("rr-a")
      expect(r.status).toMatchObject({ overallPhase: "Blocked", blockReason: "IneffectiveChain", requiresManualReview: true })
      expect(r.status.blockedUntil).toBeUndefined()
      expect(Option.getOrThrow(yield* h.get("notificationrequests", "nr-rr-a-ineffective-chain")).spec.reason).toBe("IneffectiveChain")
      yield* TestClock.adjust("2 hours")
      yield* h.settle
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("Blocked")
      expect(h.agent.submitted).toEqual([])
    }))

  it.scoped("an inconclusive investigation backs off 1 then 2 minutes and blocks for an hour on the third strike", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config, seed: [rr("rr-a")] })
      h.agent.script = () => ({
        result: workflowResult({
          selected_workflow: null,
          investigation_outcome: "inconclusive",
          needs_human_review: true,
          human_review_reason: "investigation_inconclusive"
        })
      })
      yield* h.settle
      let r = yield* h.rr("rr-a")
      expect(r.status).toMatchObject({ overallPhase: "Blocked", blockReason: "ExponentialBackoff", consecutiveFailureCount: 1, blockedUntil: at(60_000) })
      expect(r.status.aiAnalysisRef).toBeUndefined()
      yield* TestClock.adjust("1 minute")
      yield* h.settle
      r = yield* h.rr("rr-a")
      expect(r.status).toMatchObject({ blockReason: "ExponentialBackoff", consecutiveFailureCount: 2, blockedUntil: at(3 * 60_000) })
      yield* TestClock.adjust("2 minutes")
      yield* h.settle
      r = yield* h.rr("rr-a")
      expect(r.status).toMatchObject({ blockReason: "ConsecutiveFailures", consecutiveFailureCount: 3, blockedUntil: at(3 * 60_000 + 3_600_000) })
      expect((yield* h.k8s.listCr("aianalyses")).items.map((a) => a.metadata.name).sort()).toEqual(["ai-rr-a", "ai-rr-a-r2", "ai-rr-a-r3"])
      expect(h.agent.submitted.length).toBe(3)
    }))
})

describe("lifecycle: terminal cascade and garbage collection", () => {
  it.scoped("a cancel (as svc_cancel_remediation writes it) fails the running analysis with ParentCancelled, once", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config, seed: [rr("rr-a")] })
      h.agent.script = () => ({ polls: Infinity })
      yield* h.settle
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("Analyzing")
      yield* h.k8s.patchCrStatus("remediationrequests", "rr-a", { overallPhase: "Cancelled", message: "cancelled by alice" })
      yield* h.settle
      const ai = Option.getOrThrow(yield* h.get("aianalyses", "ai-rr-a"))
      expect(ai.status).toMatchObject({ phase: "Failed", reason: "ParentCancelled", message: "parent remediation Cancelled" })
      // Every child of a cancelled RR fails, the SignalProcessing that had completed too.
      expect(Option.getOrThrow(yield* h.get("signalprocessings", "sp-rr-a")).status).toMatchObject({ phase: "Failed", message: "parent remediation Cancelled" })
      const r = yield* h.rr("rr-a")
      expect(r.status.overallPhase).toBe("Cancelled")
      expect(Date.parse(r.status.retentionExpiryTime)).toBe(24 * 3_600_000)
      expect(sample(yield* h.metrics, "svc_remediationorchestrator_phase_transitions_total", { from_phase: "Analyzing", to_phase: "Cancelled" })).toBe(1)
      expect((yield* h.audit).filter((e) => e.event_type === "orchestrator.lifecycle.cancelled").length).toBe(1)
      // Idempotent: reconciling again writes nothing more and the analysis is not polled again.
      const polls = h.agent.submitted.length
      yield* h.reconcileRr("rr-a")
      yield* h.reconcileAnalysis("ai-rr-a")
      yield* h.settle
      expect(h.agent.submitted.length).toBe(polls)
      expect((yield* h.audit).filter((e) => e.event_type === "orchestrator.lifecycle.cancelled").length).toBe(1)
    }))

  it.scoped("a cancel after the analysis completed (awaiting approval) fails that analysis with ParentCancelled; a completed RR keeps its completed children", () =>
    Effect.gen(function* () {
      const platform: KubeObject = {
        apiVersion: `${apiGroup}/v1alpha1`,
        kind: "Kubemend",
        metadata: { name: "kubemend", namespace },
        spec: { aiAnalysis: { confidenceThreshold: "0.95" } }
      }
      const h = yield* harness({ config, seed: [rr("rr-a"), platform] })
      yield* h.settle
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("AwaitingApproval")
      expect(Option.getOrThrow(yield* h.get("aianalyses", "ai-rr-a")).status.phase).toBe("Completed")
      yield* h.k8s.patchCrStatus("remediationrequests", "rr-a", { overallPhase: "Cancelled", message: "cancelled by alice" })
      yield* h.settle
      expect(Option.getOrThrow(yield* h.get("aianalyses", "ai-rr-a")).status).toMatchObject({ phase: "Failed", reason: "ParentCancelled" })
      expect(Option.getOrThrow(yield* h.get("signalprocessings", "sp-rr-a")).status.phase).toBe("Failed")

      // A remediation that completed keeps the record of what succeeded.
      const done = yield* harness({ config, seed: [rr("rr-b")] })
      yield* done.settle
      yield* TestClock.adjust("5 seconds")
      yield* done.settle
      yield* TestClock.adjust("1 minute")
      yield* done.settle
      expect((yield* done.rr("rr-b")).status.overallPhase).toBe("Completed")
      for (const [plural, name] of [["aianalyses", "ai-rr-b"], ["signalprocessings", "sp-rr-b"], ["workflowexecutions", "we-rr-b"]] as const) {
        expect(Option.getOrThrow(yield* done.get(plural, name)).status.phase, plural).toBe("Completed")
      }
    }))

  it.scoped("a failed or timed-out RR fails its running WorkflowExecution; a child patch error is retried, not fatal", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config: { ...config, timeouts: { executing: Duration.minutes(1) } }, completeExecutions: false, seed: [rr("rr-a")] })
      yield* h.settle
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("Running")
      yield* TestClock.adjust("1 minute")
      yield* h.memory!.failNext(1, { verb: "patch", plural: "workflowexecutions/status", status: 500 })
      yield* h.reconcileRr("rr-a")
      expect((yield* h.rr("rr-a")).status).toMatchObject({ overallPhase: "TimedOut", timeoutPhase: "Running" })
      const retry = (yield* h.reconcileRr("rr-a")) as { requeueAfter: Duration.Duration }
      expect(Duration.toMillis(retry.requeueAfter)).toBe(5000)
      expect((yield* h.rr("rr-a")).status.retentionExpiryTime).toBeUndefined()
      yield* h.settle
      const r = yield* h.rr("rr-a")
      expect(r.status.retentionExpiryTime).toBeDefined()
      expect(Option.getOrThrow(yield* h.get("workflowexecutions", "we-rr-a")).status).toMatchObject({
        phase: "Failed",
        failureReason: "parent remediation TimedOut"
      })
      expect(sample(yield* h.metrics, "svc_remediationorchestrator_timeouts_total", { phase: "Executing" })).toBe(1)
    }))

  it.scoped("terminal RRs and their children are garbage-collected after the 24 h retention", () =>
    Effect.gen(function* () {
      const h = yield* harness({ config, seed: [rr("rr-a")] })
      yield* h.settle
      yield* TestClock.adjust("5 seconds")
      yield* h.settle
      yield* TestClock.adjust("1 minute")
      yield* h.settle
      const done = yield* h.rr("rr-a")
      expect(done.status.overallPhase).toBe("Completed")
      const expiry = Date.parse(done.status.retentionExpiryTime)
      expect(expiry).toBe(Date.parse(done.status.completedAt) + 24 * 3_600_000)
      yield* TestClock.adjust("23 hours")
      yield* h.settle
      expect(Option.isSome(yield* h.get("remediationrequests", "rr-a"))).toBe(true)
      yield* TestClock.adjust("1 hour")
      yield* h.settle
      expect(Option.isNone(yield* h.get("remediationrequests", "rr-a"))).toBe(true)
      for (const plural of ["aianalyses", "signalprocessings", "workflowexecutions", "effectivenessassessments"] as const) {
        expect((yield* h.k8s.listCr(plural)).items).toEqual([])
      }
      expect((yield* h.audit).map((e) => e.event_type)).toContain("orchestrator.lifecycle.deleted")
    }))
})

const spec = (o: { spec?: unknown }) => o.spec as { signalFingerprint: string; targetResource: { namespace: string; name: string } }

describe("lifecycle: a stream of demo alerts", () => {
  it.scoped("creates an RR every interval with a duplicate and an unmanaged target, and the lifecycle routes them", () =>
    Effect.gen(function* () {
      const h = yield* harness({
        seed: [managedNamespace("demo-shop")]
      })
      h.agent.script = () => ({ polls: Infinity })
      const stream = yield* Effect.fork(h.run(signalStream(6, Duration.seconds(45), { namespace: "demo-shop" })))
      for (let i = 0; i < 5; i++) yield* TestClock.adjust("45 seconds")
      yield* Fiber.join(stream)
      const rrs = (yield* h.k8s.listCr("remediationrequests")).items
      expect(rrs.length).toBe(6)
      const byName = (fragment: string) => rrs.filter((o) => o.metadata.name.includes(fragment))
      const cart = byName("cart-latency")
      expect(cart.length).toBe(2)
      expect(spec(cart[0]!).signalFingerprint).toBe(spec(cart[1]!).signalFingerprint)
      expect(spec(byName("reports-failing")[0]!).targetResource.namespace).toBe("legacy-batch")
      expect((yield* h.audit).filter((e) => e.event_type === "gateway.signal.received").length).toBe(6)

      yield* h.settle
      const phases = (yield* h.k8s.listCr("remediationrequests")).items.map((o) => {
        const s = o.status as { overallPhase?: string; blockReason?: string }
        return `${o.metadata.name.split("-").slice(1, 3).join("-")}:${s.overallPhase}${s.blockReason === undefined ? "" : `/${s.blockReason}`}`
      })
      expect(phases.sort()).toEqual([
        "cart-latency:Analyzing",
        "cart-latency:Blocked/DuplicateInProgress",
        "payments-disk:Analyzing",
        "recommendations-crashloop:Analyzing",
        "reports-failing:Blocked/UnmanagedResource",
        "search-replicas:Analyzing"
      ])
    }))
})

describe("lifecycle: config", () => {
  it.scoped("the platform CR's remediationOrchestrator and aiAnalysis fields override the operator config", () =>
    Effect.gen(function* () {
      const platform: KubeObject = {
        apiVersion: `${apiGroup}/v1alpha1`,
        kind: "Kubemend",
        metadata: { name: "kubemend", namespace },
        spec: { aiAnalysis: { confidenceThreshold: "0.95" }, remediationOrchestrator: { timeouts: { awaitingApproval: "5m" } } }
      }
      const h = yield* harness({ config, seed: [rr("rr-a"), platform] })
      yield* h.settle
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("AwaitingApproval")
      const rar = Option.getOrThrow(yield* h.get("remediationapprovalrequests", "rar-rr-a"))
      expect(rar.spec.requiredBy).toBe(at(5 * 60_000))
      expect(rar.spec.whyApprovalRequired).toBe("confidence 0.9 is below the auto-approval threshold 0.95")

      yield* h.seed([{ ...platform, spec: { remediationOrchestrator: { dryRun: true } } }, rr("rr-b", { fingerprint: "b".repeat(64), target: "cart" })])
      yield* TestClock.adjust("10 seconds")
      yield* h.settle
      expect((yield* h.rr("rr-b")).status).toMatchObject({ overallPhase: "Completed", outcome: "DryRun" })
    }))

  const read = (provider: ConfigProvider.ConfigProvider) =>
    Effect.provide(LifecycleConfig, LifecycleConfig.layerConfig.pipe(Layer.provide(Layer.setConfigProvider(provider))))

  it.effect("reads the platform CR's keys from the file and `OPERATOR_*` environment overrides", () =>
    Effect.gen(function* () {
      const file = {
        aiAnalysis: { confidenceThreshold: "0.65" },
        remediationOrchestrator: {
          timeouts: { analyzing: "2m", awaitingApproval: "5m" },
          routing: { consecutiveFailureThreshold: 4, recentlyRemediatedCooldown: "10m" },
          dryRun: true,
          retention: { period: "1h" },
          effectivenessAssessment: { stabilizationWindow: "30s" }
        },
        lifecycle: { agentUrl: "http://agent:8080" }
      }
      const env = ConfigProvider.fromMap(new Map([["OPERATOR_REMEDIATION_ORCHESTRATOR_TIMEOUTS_ANALYZING", "3m"]]), { pathDelim: "_" })
      const c = yield* read(providerFor("operator", file, env))
      expect(c.confidenceThreshold).toBe(0.65)
      expect(Duration.toMinutes(c.timeouts.analyzing)).toBe(3)
      expect(Duration.toMinutes(c.timeouts.awaitingApproval)).toBe(5)
      expect(Duration.toHours(c.timeouts.global)).toBe(1)
      expect(c.routing.consecutiveFailureThreshold).toBe(4)
      expect(Duration.toMinutes(c.routing.recentlyRemediatedCooldown)).toBe(10)
      expect(c.dryRun).toBe(true)
      expect(Duration.toHours(c.retention)).toBe(1)
      expect(Duration.toSeconds(c.stabilizationWindow)).toBe(30)
      expect(c.agentUrl).toBe("http://agent:8080")
    }))

  it.effect("defaults: 15 minute approvals, 24 h retention, threshold 0.8; a threshold outside 0..1 is refused", () =>
    Effect.gen(function* () {
      const c = yield* read(ConfigProvider.fromJson({}))
      expect(Duration.toMinutes(c.timeouts.awaitingApproval)).toBe(15)
      expect(Duration.toHours(c.retention)).toBe(24)
      expect(c.confidenceThreshold).toBe(0.8)
      expect(c.maxSessionRegenerations).toBe(5)
      const error = yield* Effect.flip(read(ConfigProvider.fromJson({ aiAnalysis: { confidenceThreshold: "1.5" } })))
      expect(String(error)).toContain("between 0 and 1")
    }))
})
