/**
 * The lifecycle against the dev API server on the live K8s layer, with the CRDs installed (so every status write is
 * checked against the generated schemas): first driven step by step on TestClock, then the whole thing running
 * (watches, work queues, the execution simulator) on the real clock with the fake agent over HTTP.
 */
import { describe, expect, it } from "@effect/vitest"
import { DevKube } from "@kubemend/core/devkit/kube/index"
import type { KubeObject } from "@kubemend/core/K8s"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Duration, Effect, Layer, Logger, LogLevel, Option, Schedule, TestClock } from "effect"
import { renderCrds } from "../src/Crds.ts"
import { layerInProcess } from "../src/Lifecycle/index.ts"
import { startFakeAgent } from "./lifecycleAgent.ts"
import { apiGroup, harness, managedNamespace, namespace, rr } from "./lifecycleHarness.ts"

const startKube = Effect.gen(function* () {
  const kube = yield* DevKube.scoped({ apiGroup })
  kube.seed([{ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }, managedNamespace(), ...renderCrds(apiGroup)])
  return kube
})

describe("lifecycle against the dev API server", () => {
  it.scoped("approval, override and cancel cascade on TestClock, with schema-checked writes", () =>
    Effect.gen(function* () {
      const kube = yield* startKube
      const h = yield* harness({
        config: { simulator: { enabled: true, completeAfter: Duration.seconds(5) }, stabilizationWindow: Duration.minutes(1) },
        backend: {
          k8s: K8sLive.layer({ namespace, apiGroup, kubeconfig: kube.kubeConfig() }).pipe(Layer.orDie),
          writes: Effect.sync(() => Number(kube.resourceVersion())),
          namespaceLabels: (name) => Effect.sync(() => Option.fromNullable(kube.get("v1", "Namespace", name)?.metadata.labels as Record<string, string> | undefined)),
          seed: (objects) => Effect.sync(() => void kube.seed(objects))
        }
      })
      h.agent.script = (req) => (req["remediation_id"] === "rr-slow" ? { polls: Infinity } : { result: { confidence: 0.55 } })
      yield* h.k8s.createCr("remediationrequests", rr("rr-a"))
      yield* h.k8s.createCr("remediationrequests", rr("rr-slow", { fingerprint: "c".repeat(64), target: "cart" }))
      yield* h.settle
      expect((yield* h.rr("rr-a")).status.overallPhase).toBe("AwaitingApproval")
      expect(kube.get(`${apiGroup}/v1alpha1`, "RemediationApprovalRequest", "rar-rr-a", namespace)).toMatchObject({
        spec: { confidence: 0.55, requiredBy: new Date(15 * 60_000).toISOString() }
      })
      yield* h.k8s.patchCrStatus("remediationapprovalrequests", "rar-rr-a", {
        decision: "Approved",
        decidedBy: "alice",
        workflowOverride: { workflowName: "restart-pod" }
      })
      yield* h.settle
      yield* TestClock.adjust("5 seconds")
      yield* h.settle
      yield* TestClock.adjust("1 minute")
      yield* h.settle
      const done = yield* h.rr("rr-a")
      expect(done.status).toMatchObject({ overallPhase: "Completed", outcome: "Remediated", selectedWorkflowRef: { workflowId: "restart-pod" } })

      expect((yield* h.rr("rr-slow")).status.overallPhase).toBe("Analyzing")
      yield* h.k8s.patchCrStatus("remediationrequests", "rr-slow", { overallPhase: "Cancelled" })
      yield* h.settle
      const ai = kube.get(`${apiGroup}/v1alpha1`, "AIAnalysis", "ai-rr-slow", namespace) as KubeObject
      expect(ai.status).toMatchObject({ phase: "Failed", reason: "ParentCancelled" })
    }))

  it.live("the controllers run on their own: watches, work queues, agent and simulator take an RR to Completed", () =>
    Effect.gen(function* () {
      const kube = yield* startKube
      const agent = yield* startFakeAgent
      agent.script = (req) => ({ polls: 1, result: { confidence: req["remediation_id"] === "rr-approve" ? 0.5 : 0.95 } })
      yield* Logger.withMinimumLogLevel(Layer.build(layerInProcess({
        kubeconfig: kube.kubeConfig(),
        namespace,
        apiGroup,
        agentUrl: agent.url,
        pollInterval: Duration.millis(20),
        stabilizationWindow: Duration.millis(50),
        simulator: { enabled: true, completeAfter: Duration.millis(50) }
      })), LogLevel.Warning)
      const k8s = yield* K8sLive.make({ namespace, apiGroup, kubeconfig: kube.kubeConfig() })
      yield* k8s.createCr("remediationrequests", rr("rr-auto"))
      yield* k8s.createCr("remediationrequests", rr("rr-approve", { fingerprint: "d".repeat(64), target: "cart" }))
      const phase = (name: string) => Effect.map(k8s.getCr("remediationrequests", name), (o) => (o.status as { overallPhase?: string } | undefined)?.overallPhase)
      const until = (name: string, wanted: string) =>
        phase(name).pipe(
          Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (p) => p === wanted }),
          Effect.timeoutFail({ duration: "8 seconds", onTimeout: () => new Error(`${name} never reached ${wanted}`) })
        )
      yield* until("rr-auto", "Completed")
      yield* until("rr-approve", "AwaitingApproval")
      yield* k8s.patchCrStatus("remediationapprovalrequests", "rar-rr-approve", { decision: "Approved", decidedBy: "bob" })
      yield* until("rr-approve", "Completed")
      const we = yield* k8s.getCr("workflowexecutions", "we-rr-approve")
      expect(we.status).toMatchObject({ phase: "Completed", executionEngine: "simulator" })
    }).pipe(Effect.scoped))
})
