/**
 * The effectiveness monitor against the dev API server (CRDs installed, so every EA status write is checked against
 * the generated schema) and the dev metrics backend's alerts API, driven on TestClock through the whole lifecycle:
 * the target's pods and the alert are set explicitly, since no real remediation runs here.
 */
import { describe, expect, it } from "@effect/vitest"
import { type DevAlert, make as makeAlerts } from "@kubemend/devkit/Alerts"
import { DevKube } from "@kubemend/devkit/kube/index"
import type { KubeObject } from "@kubemend/core/K8s"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Duration, Effect, Layer, Option, TestClock } from "effect"
import { renderCrds } from "../src/Crds.ts"
import { apiGroup, harness, type Harness, managedNamespace, namespace, rr, sample, workload, workloads } from "./LifecycleHarness.ts"

const config = {
  stabilizationWindow: Duration.minutes(1),
  routing: { recentlyRemediatedCooldown: Duration.seconds(1) }
}

const firing: DevAlert = {
  labels: { alertname: "KubePodCrashLooping", severity: "critical", namespace: workloads, pod: "checkout-0" },
  state: "firing",
  activeAt: "1970-01-01T00:00:00Z"
}

const setup = (world: ReadonlyArray<KubeObject>, alerts: ReadonlyArray<DevAlert>) =>
  Effect.gen(function* () {
    const kube = yield* DevKube.scoped({ apiGroup })
    kube.seed([{ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }, managedNamespace(), ...renderCrds(apiGroup), ...world])
    const metrics = yield* makeAlerts({ alerts })
    const h = yield* harness({
      config,
      effectiveness: { metricsUrl: Option.some(metrics.url) },
      backend: {
        k8s: K8sLive.layer({ namespace, apiGroup, kubeconfig: kube.kubeConfig() }).pipe(Layer.orDie),
        writes: Effect.sync(() => Number(kube.resourceVersion())),
        namespaceLabels: (name) =>
          Effect.sync(() => Option.fromNullable(kube.get("v1", "Namespace", name)?.metadata.labels as Record<string, string> | undefined)),
        seed: (objects) => Effect.sync(() => void kube.seed(objects))
      }
    })
    return { kube, h, alerts: metrics }
  })

/** Creates the RR and runs it to `Verifying` (analysis, auto-approval, the 5 s execution the harness plays). */
const toVerifying = (h: Harness, name: string) =>
  Effect.gen(function* () {
    yield* h.k8s.createCr("remediationrequests", rr(name))
    yield* h.settle
    yield* TestClock.adjust("5 seconds")
    yield* h.settle
    expect((yield* h.rr(name)).status.overallPhase).toBe("Verifying")
  })

const ea = (h: Harness, name: string) => Effect.map(h.get("effectivenessassessments", `ea-${name}`), (o) => Option.getOrThrow(o))

describe("effectiveness monitor", () => {
  it.scoped("the target recovered and the alert resolved: Remediated, with the timeline and component scores in the EA", () =>
    Effect.gen(function* () {
      const { h } = yield* setup(workload("checkout"), [])
      yield* toVerifying(h, "rr-ok")
      const scheduled = yield* ea(h, "rr-ok")
      expect(scheduled.spec).toMatchObject({
        correlationID: "rr-ok",
        remediationRequestPhase: "Verifying",
        signalTarget: { kind: "Deployment", name: "checkout", namespace: workloads },
        config: { stabilizationWindow: "1m" }
      })
      expect(scheduled.status).toMatchObject({
        phase: "Stabilizing",
        prometheusCheckAfter: new Date(65_000).toISOString(),
        alertManagerCheckAfter: new Date(65_000).toISOString(),
        validityDeadline: new Date(5_000 + 300_000).toISOString(),
        components: { hashComputed: true }
      })
      expect((yield* h.rr("rr-ok")).status.verificationDeadline).toBe(new Date(335_000).toISOString())
      yield* TestClock.adjust("1 minute")
      yield* h.settle
      const done = yield* ea(h, "rr-ok")
      expect(done.status).toMatchObject({
        phase: "Completed",
        assessmentReason: "Partial",
        components: { healthAssessed: true, healthScore: 1, alertAssessed: true, alertScore: 1, metricsAssessed: false },
        conditions: [{ type: "RemediationEffective", status: "True", reason: "Effective" }]
      })
      expect((yield* h.rr("rr-ok")).status).toMatchObject({
        overallPhase: "Completed",
        outcome: "Remediated",
        effectivenessAssessmentRef: { name: "ea-rr-ok" }
      })
      const events = (yield* h.audit).filter((e) => e.event_category === "effectiveness")
      expect(events.find((e) => e.event_type === "effectiveness.health.assessed")?.event_data).toMatchObject({
        score: 1,
        health_checks: { pod_running: true, readiness_pass: true, ready_replicas: 1, crash_loops: false }
      })
      expect(events.find((e) => e.event_type === "effectiveness.alert.assessed")?.event_data).toMatchObject({
        score: 1,
        alert_resolution: { alert_resolved: true }
      })
      const metrics = yield* h.metrics
      expect(sample(metrics, "svc_effectivenessmonitor_component_assessments_total", { component: "health", result: "success" })).toBe(1)
      expect(sample(metrics, "svc_effectivenessmonitor_assessments_completed_total", { reason: "Partial" })).toBe(1)
    }))

  it.scoped("the target stays broken: ineffective and notified; the third in a row escalates and the next RR is blocked IneffectiveChain", () =>
    Effect.gen(function* () {
      const { h } = yield* setup(workload("checkout", { ready: 0 }), [firing])
      for (const [i, name] of ["rr-b1", "rr-b2", "rr-b3"].entries()) {
        yield* toVerifying(h, name)
        yield* TestClock.adjust("1 minute")
        yield* h.settle
        expect((yield* ea(h, name)).status).toMatchObject({
          components: { healthScore: 0, alertScore: 0 },
          conditions: [{ status: "False", reason: "Ineffective", message: "not passed: health, alert" }]
        })
        const status = (yield* h.rr(name)).status
        if (i < 2) {
          expect(status).toMatchObject({ overallPhase: "Completed", outcome: "Inconclusive" })
          const nr = Option.getOrThrow(yield* h.get("notificationrequests", `nr-${name}-ineffective`))
          expect(nr.spec).toMatchObject({ type: "ineffective", reason: "IneffectiveRemediation" })
        } else {
          expect(status).toMatchObject({ overallPhase: "Completed", outcome: "ManualReviewRequired", requiresManualReview: true })
          expect(Option.getOrThrow(yield* h.get("notificationrequests", `nr-${name}-ineffective-chain`)).spec.reason).toBe("IneffectiveChain")
        }
        yield* TestClock.adjust("2 seconds")
      }
      yield* h.k8s.createCr("remediationrequests", rr("rr-b4"))
      yield* h.settle
      expect((yield* h.rr("rr-b4")).status).toMatchObject({ overallPhase: "Blocked", blockReason: "IneffectiveChain" })
      expect(h.agent.submitted.length).toBe(3)
      expect(sample(yield* h.metrics, "svc_effectivenessmonitor_component_assessments_total", { component: "health", result: "failure" })).toBe(3)
    }))

  it.scoped("someone else changes the target during the assessment: SpecDrift, Inconclusive", () =>
    Effect.gen(function* () {
      const { h, kube } = yield* setup(workload("checkout"), [])
      yield* toVerifying(h, "rr-drift")
      const post = (yield* ea(h, "rr-drift")).status.components.postRemediationSpecHash as string
      expect(post).toMatch(/^sha256:[0-9a-f]{64}$/)
      const [deployment] = workload("checkout", { image: "shop/app:2-hotfix" })
      kube.put(deployment)
      yield* TestClock.adjust("30 seconds")
      yield* h.settle
      const done = yield* ea(h, "rr-drift")
      expect(done.status).toMatchObject({ phase: "Completed", assessmentReason: "SpecDrift", conditions: [{ status: "Unknown", reason: "Undetermined" }] })
      expect(done.status.components.currentSpecHash).not.toBe(post)
      expect((yield* h.rr("rr-drift")).status).toMatchObject({ overallPhase: "Completed", outcome: "Inconclusive" })
    }))

  it.scoped("an alert that decays late is rechecked while the target is healthy, then counts as resolved", () =>
    Effect.gen(function* () {
      const { h, alerts } = yield* setup(workload("checkout"), [firing])
      yield* toVerifying(h, "rr-decay")
      yield* TestClock.adjust("1 minute")
      yield* h.settle
      expect((yield* ea(h, "rr-decay")).status).toMatchObject({ phase: "Assessing", components: { healthScore: 1, alertDecayRetries: 1 } })
      yield* TestClock.adjust("15 seconds")
      yield* h.settle
      expect((yield* ea(h, "rr-decay")).status.components.alertDecayRetries).toBe(2)
      yield* alerts.set([])
      yield* TestClock.adjust("15 seconds")
      yield* h.settle
      expect((yield* ea(h, "rr-decay")).status).toMatchObject({ phase: "Completed", components: { alertScore: 1, alertDecayRetries: 2 } })
      expect((yield* h.rr("rr-decay")).status.outcome).toBe("Remediated")
      expect((yield* h.audit).filter((e) => e.event_type === "effectiveness.alert_decay.detected")).toHaveLength(1)
    }))

  it.scoped("an alert still firing at the validity deadline ends AlertDecayTimeout (ineffective)", () =>
    Effect.gen(function* () {
      const { h } = yield* setup(workload("checkout"), [firing])
      yield* toVerifying(h, "rr-late")
      for (let i = 0; i < 20; i++) {
        yield* TestClock.adjust("15 seconds")
        yield* h.settle
      }
      expect((yield* ea(h, "rr-late")).status).toMatchObject({ phase: "Completed", assessmentReason: "AlertDecayTimeout", components: { alertScore: 0 } })
      expect((yield* h.rr("rr-late")).status.outcome).toBe("Inconclusive")
    }))

  it.scoped("a metrics backend that never answers: the assessment expires at its validity deadline, VerificationTimedOut", () =>
    Effect.gen(function* () {
      const { h, alerts } = yield* setup(workload("checkout"), [])
      yield* alerts.setFault("unavailable")
      yield* toVerifying(h, "rr-dark")
      yield* TestClock.adjust("1 minute")
      yield* h.settle
      expect((yield* ea(h, "rr-dark")).status).toMatchObject({ phase: "Assessing", components: { healthScore: 1 } })
      yield* TestClock.adjust("4 minutes")
      yield* h.settle
      expect((yield* ea(h, "rr-dark")).status).toMatchObject({ phase: "Completed", assessmentReason: "Expired", conditions: [{ reason: "Expired" }] })
      expect((yield* h.rr("rr-dark")).status).toMatchObject({ overallPhase: "Completed", outcome: "VerificationTimedOut" })
      const metrics = yield* h.metrics
      expect(metrics).toMatch(/^svc_effectivenessmonitor_validity_expirations_total 1$/m)
      expect(sample(metrics, "svc_effectivenessmonitor_external_call_errors_total", { service: "metrics-backend", operation: "list_alerts" })).toBeGreaterThan(
        0
      )
    }))

  it.scoped("a GitOps-managed target waits for propagation before its hash is taken", () =>
    Effect.gen(function* () {
      const [deployment, ...pods] = workload("checkout")
      const gitOps = { ...deployment!, metadata: { ...deployment!.metadata, labels: { app: "checkout", "argocd.argoproj.io/instance": "shop" } } }
      const { h } = yield* setup([gitOps, ...pods], [])
      yield* toVerifying(h, "rr-git")
      expect((yield* ea(h, "rr-git")).spec.config).toMatchObject({ hashComputeDelay: "3m" })
      yield* TestClock.adjust("1 minute")
      yield* h.settle
      expect((yield* ea(h, "rr-git")).status).toMatchObject({ phase: "WaitingForPropagation", hashComputeAfter: new Date(185_000).toISOString() })
      yield* TestClock.adjust("2 minutes")
      yield* h.settle
      expect((yield* ea(h, "rr-git")).status).toMatchObject({ phase: "Completed", components: { hashComputed: true, healthScore: 1 } })
      expect((yield* h.rr("rr-git")).status.outcome).toBe("Remediated")
    }))
})
