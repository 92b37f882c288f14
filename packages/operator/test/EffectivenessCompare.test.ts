/**
 * The metrics component: the target's restarts, memory over its limit and CPU throttling on the dev metrics
 * backend's `/api/v1/query`, the minute after the remediation against the minute before, on TestClock through the
 * whole lifecycle (dev API server with the CRDs installed, so each EA status write is schema-checked).
 */
import { describe, expect, it } from "@effect/vitest"
import { make as makeAlerts } from "@kubemend/devkit/Alerts"
import { DevKube } from "@kubemend/devkit/kube/index"
import type { DevSeries } from "@kubemend/devkit/PromQl"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Duration, Effect, Layer, Option, TestClock } from "effect"
import { compareValues } from "../src/effectiveness/MetricsCheck.ts"
import { renderCrds } from "../src/Crds.ts"
import { apiGroup, harness, type Harness, managedNamespace, namespace, rr, sample, workload, workloads } from "./LifecycleHarness.ts"

/** Thirteen samples 10 s apart ending at the backend's now: index 1-6 is the minute before, 7-12 the minute after (the dev
 * backend's `increase` is last minus first sample in the window, without Prometheus' extrapolation). */
const series = (name: string, values: ReadonlyArray<number>, labels: Record<string, string> = {}, pod = "checkout-0"): DevSeries => ({
  labels: { __name__: name, namespace: workloads, pod, container: "app", ...labels },
  values,
  stepSeconds: 10
})
const before = (a: number, b: number) => [a, ...Array<number>(6).fill(a), ...Array<number>(6).fill(b)]
const counter = (perStepBefore: number, perStepAfter: number) =>
  Array.from({ length: 13 }, (_, k) => Math.min(k, 6) * perStepBefore + Math.max(0, k - 6) * perStepAfter)

const run = (name: string, seeded: ReadonlyArray<DevSeries>) =>
  Effect.gen(function* () {
    const kube = yield* DevKube.scoped({ apiGroup })
    kube.seed([{ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }, managedNamespace(), ...renderCrds(apiGroup), ...workload("checkout")])
    const backend = yield* makeAlerts({ alerts: [], series: seeded })
    const h = yield* harness({
      config: { stabilizationWindow: Duration.minutes(1), routing: { recentlyRemediatedCooldown: Duration.seconds(1) } },
      effectiveness: { metricsUrl: Option.some(backend.url) },
      backend: {
        k8s: K8sLive.layer({ namespace, apiGroup, kubeconfig: kube.kubeConfig() }).pipe(Layer.orDie),
        writes: Effect.sync(() => Number(kube.resourceVersion())),
        namespaceLabels: (n) => Effect.sync(() => Option.fromNullable(kube.get("v1", "Namespace", n)?.metadata.labels as Record<string, string> | undefined)),
        seed: (objects) => Effect.sync(() => void kube.seed(objects))
      }
    })
    yield* h.k8s.createCr("remediationrequests", rr(name))
    yield* h.settle
    yield* TestClock.adjust("5 seconds")
    yield* h.settle
    return { h, backend }
  })

const finish = (h: Harness, name: string) =>
  Effect.gen(function* () {
    yield* TestClock.adjust("1 minute")
    yield* h.settle
    const ea = Option.getOrThrow(yield* h.get("effectivenessassessments", `ea-${name}`))
    const event = (yield* h.audit).find((e) => e.event_type === "effectiveness.metrics.assessed")
    return { status: ea.status as { components: Record<string, unknown> }, event: event?.event_data, rr: (yield* h.rr(name)).status }
  })

describe("effectiveness monitor: metrics component", () => {
  it("scores each query: improved 1, within 10% 0.5, worse 0", () => {
    expect([compareValues(5, 0), compareValues(0, 0), compareValues(0.5, 0.52), compareValues(0, 2), compareValues(0.3, 0.9)]).toEqual([1, 0.5, 0.5, 0, 0])
  })

  it.scoped("restarts stopped and memory fell below its limit: metrics score 1, deltas in the audit event, Remediated", () =>
    Effect.gen(function* () {
      const { h } = yield* run("rr-up", [
        series("kube_pod_container_status_restarts_total", counter(1, 0)),
        series("container_memory_working_set_bytes", before(950, 300)),
        series("kube_pod_container_resource_limits", before(1000, 1000), { resource: "memory" })
      ])
      const { event, rr, status } = yield* finish(h, "rr-up")
      expect(status).toMatchObject({
        phase: "Completed",
        assessmentReason: "Full",
        components: { healthScore: 1, alertAssessed: true, metricsAssessed: true, metricsScore: 1 },
        conditions: [{ type: "RemediationEffective", status: "True" }]
      })
      expect(event).toMatchObject({
        assessed: true,
        score: 1,
        details: "compared restarts, memory over 60s before and after the remediation",
        metric_deltas: { restarts_before: 5, restarts_after: 0, memory_before: 0.95, memory_after: 0.3 }
      })
      expect(rr).toMatchObject({ outcome: "Remediated" })
      expect(sample(yield* h.metrics, "svc_effectivenessmonitor_component_assessments_total", { component: "metrics", result: "success" })).toBe(1)
    }))

  it.scoped("restarts and throttling rose after the remediation: metrics score 0, ineffective", () =>
    Effect.gen(function* () {
      const { h } = yield* run("rr-down", [
        series("kube_pod_container_status_restarts_total", counter(0, 2)),
        series("container_cpu_cfs_throttled_periods_total", counter(1, 8)),
        series("container_cpu_cfs_periods_total", counter(10, 10))
      ])
      const { event, rr, status } = yield* finish(h, "rr-down")
      expect(status).toMatchObject({
        phase: "Completed",
        components: { healthScore: 1, alertScore: 1, metricsAssessed: true, metricsScore: 0 },
        conditions: [{ status: "False", reason: "Ineffective", message: "not passed: metrics" }]
      })
      expect(event).toMatchObject({ score: 0, metric_deltas: { restarts_before: 0, restarts_after: 10, cpu_before: 0.1, cpu_after: 0.8 } })
      expect(rr).toMatchObject({ outcome: "Inconclusive" })
    }))

  it.scoped("no samples for the target: not assessed with the reason, and the verdict stands on health and alert", () =>
    Effect.gen(function* () {
      const { h } = yield* run("rr-none", [series("kube_pod_container_status_restarts_total", counter(1, 0), {}, "cart-0")])
      const { event, rr, status } = yield* finish(h, "rr-none")
      expect(status).toMatchObject({ assessmentReason: "Partial", components: { metricsAssessed: false } })
      expect(status.components.metricsScore).toBeUndefined()
      expect(event).toMatchObject({
        assessed: false,
        score: null,
        details: expect.stringContaining("no restart, memory or CPU throttling samples for Deployment checkout")
      })
      expect(rr).toMatchObject({ outcome: "Remediated" })
    }))

  it.scoped("the backend is down: metrics not assessed with the backend's answer as the reason", () =>
    Effect.gen(function* () {
      const { backend, h } = yield* run("rr-down503", [series("kube_pod_container_status_restarts_total", counter(1, 0))])
      yield* backend.setFault("unavailable")
      const { event, status } = yield* finish(h, "rr-down503")
      expect(status.components).toMatchObject({ metricsAssessed: false })
      expect(event).toMatchObject({ assessed: false, details: "metrics backend: status 503: backend unavailable" })
      expect(sample(yield* h.metrics, "svc_effectivenessmonitor_external_call_errors_total", { service: "metrics-backend", operation: "query" }))
        .toBeGreaterThan(0)
    }))
})
