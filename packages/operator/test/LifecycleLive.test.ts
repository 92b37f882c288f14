/**
 * The lifecycle against the dev API server on the live K8s layer, with the CRDs installed (so every status write is
 * checked against the generated schemas): first driven step by step on TestClock, then the whole thing running
 * (watches, work queues, the workflow execution controller creating Jobs the test completes as a Job controller
 * would) on the real clock with the fake agent over HTTP.
 */
import { describe, expect, it } from "@effect/vitest"
import { DevKube } from "@kubemend/devkit/kube/index"
import type { KubeObject } from "@kubemend/core/K8s"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Metrics } from "@kubemend/core/Metrics"
import { Storage } from "@kubemend/core/Storage"
import { ConfigProvider, Duration, Effect, Layer, Logger, LogLevel, Option, Redacted, Schedule, TestClock } from "effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { renderCrds } from "../src/Crds.ts"
import { layerInProcess } from "../src/Controllers.ts"
import { LifecycleAudit } from "../src/remediation/LifecycleAudit.ts"
import { fakeAgentToken, startFakeAgent } from "./FakeAgent.ts"
import { apiGroup, harness, managedNamespace, namespace, policyEngine, rr, workload } from "./LifecycleHarness.ts"

const startKube = Effect.gen(function* () {
  const kube = yield* DevKube.scoped({ apiGroup })
  // The remediation targets, healthy: the effectiveness monitor reads their pods (no real remediation runs here).
  kube.seed([
    { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
    { apiVersion: "v1", kind: "Namespace", metadata: { name: "kubemend-workflows" } },
    managedNamespace(),
    ...renderCrds(apiGroup),
    ...workload("checkout"),
    ...workload("cart")
  ])
  return kube
})

describe("lifecycle against the dev API server", () => {
  it.scoped("approval, override and cancel cascade on TestClock, with schema-checked writes", () =>
    Effect.gen(function* () {
      const kube = yield* startKube
      const h = yield* harness({
        config: { stabilizationWindow: Duration.minutes(1) },
        backend: {
          k8s: K8sLive.layer({ namespace, apiGroup, kubeconfig: kube.kubeConfig() }).pipe(Layer.orDie),
          writes: Effect.sync(() => Number(kube.resourceVersion())),
          namespaceLabels: (name) =>
            Effect.sync(() => Option.fromNullable(kube.get("v1", "Namespace", name)?.metadata.labels as Record<string, string> | undefined)),
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

  /** The fake agent's workflow as the catalog holds it. */
  const memoryLimitWorkflow = {
    workflowId: "increase-memory-limit",
    workflowName: "increase-memory-limit",
    actionType: "IncreaseMemoryLimit",
    version: "1.0.0",
    schemaVersion: "1.0",
    name: "increase-memory-limit",
    description: { what: "Raise a memory limit", whenToUse: "OOMKilled" },
    content: "",
    contentHash: "0".repeat(64),
    parameters: { parameters: [{ name: "MEMORY_LIMIT", type: "string", required: true, description: "limit" }] },
    executionEngine: "job",
    executionBundle: "registry.example/increase-memory-limit:1.0.0",
    labels: { severity: ["*"], component: ["*"], environment: ["*"], priority: "*" },
    status: "Active" as const,
    isLatestVersion: true,
    createdAt: new Date(0).toISOString(),
    updatedAt: new Date(0).toISOString()
  }

  /** Plays the Job controller: every workflow Job succeeds. */
  const completeJobs = (kube: DevKube) =>
    Effect.sync(() => {
      for (const job of kube.list("batch/v1", "Job", "kubemend-workflows")) {
        if (job.status !== undefined) continue
        kube.put({ ...job, status: { succeeded: 1, conditions: [{ type: "Complete", status: "True", reason: "Completed" }] } })
      }
    }).pipe(Effect.repeat(Schedule.spaced("20 millis")), Effect.forkScoped)

  it.live("the controllers run on their own: watches, work queues, agent and execution controller take an RR to Completed", () =>
    Effect.gen(function* () {
      const kube = yield* startKube
      const agent = yield* startFakeAgent
      agent.script = (req) => ({ polls: 1, result: { confidence: req["remediation_id"] === "rr-approve" ? 0.5 : 0.95 } })
      const opa = yield* policyEngine()
      yield* Logger.withMinimumLogLevel(
        Layer.build(layerInProcess({
          kubeconfig: kube.kubeConfig(),
          namespace,
          apiGroup,
          agentUrl: agent.url,
          agentToken: Option.some(Redacted.make(fakeAgentToken)),
          policy: { url: opa.url },
          pollInterval: Duration.millis(20),
          stabilizationWindow: Duration.millis(50),
          storage: Storage.layerMemory({ workflows: [memoryLimitWorkflow] }),
          execution: { pollInterval: Duration.millis(50) }
        })),
        LogLevel.Warning
      )
      yield* completeJobs(kube)
      const k8s = yield* K8sLive.make({ namespace, apiGroup, kubeconfig: kube.kubeConfig() })
      yield* k8s.createCr("remediationrequests", rr("rr-auto"))
      yield* k8s.createCr("remediationrequests", rr("rr-approve", { fingerprint: "d".repeat(64), target: "cart" }))
      const phase = (name: string) =>
        Effect.map(k8s.getCr("remediationrequests", name), (o) => (o.status as { overallPhase?: string } | undefined)?.overallPhase)
      const until = (name: string, wanted: string) =>
        phase(name).pipe(
          Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (p) => p === wanted }),
          Effect.timeoutFail({ duration: "8 seconds", onTimeout: () => new Error(`${name} never reached ${wanted}`) })
        )
      yield* until("rr-auto", "Completed")
      yield* until("rr-approve", "AwaitingApproval")
      yield* k8s.patchCrStatus("remediationapprovalrequests", "rar-rr-approve", { decision: "Approved", decidedBy: "bob" })
      yield* until("rr-approve", "Completed")
      expect((yield* k8s.getCr("remediationrequests", "rr-auto")).status).toMatchObject({ outcome: "Remediated" })
      const we = yield* k8s.getCr("workflowexecutions", "we-rr-approve")
      expect(we.status).toMatchObject({ phase: "Completed", executionEngine: "job", executionRef: { name: "we-rr-approve" } })
      expect(kube.get("batch/v1", "Job", "we-rr-approve", "kubemend-workflows")).toBeDefined()
    }).pipe(Effect.scoped))

  it.live("cluster mode: with storage.url in the config, audit events are posted to storage with the ServiceAccount token", () =>
    Effect.gen(function* () {
      const received: Array<{ readonly path: string | undefined; readonly auth: string | undefined; readonly events: Array<any> }> = []
      // A loopback stand-in for storage's batch endpoint that records what arrives.
      const server = yield* Effect.acquireRelease(
        Effect.promise(() =>
          new Promise<Http.Server>((resolve) => {
            const s = Http.createServer((req, res) => {
              let body = ""
              req.on("data", (c) => (body += c))
              req.on("end", () => {
                const events = JSON.parse(body) as Array<{ event_id: string }>
                received.push({ path: req.url, auth: req.headers.authorization, events })
                res.writeHead(201, { "content-type": "application/json" })
                res.end(JSON.stringify({ event_ids: events.map((e) => e.event_id), message: "stored" }))
              })
            })
            s.listen(0, "127.0.0.1", () => resolve(s))
          })
        ),
        (s) => Effect.promise(() => new Promise<void>((resolve) => s.close(() => resolve())))
      )
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "kubemend-sa-"))
      const tokenFile = Path.join(dir, "token")
      Fs.writeFileSync(tokenFile, "operator-sa-token\n")
      const config = ConfigProvider.fromJson({ storage: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, tokenFile } })
      const live = LifecycleAudit.layerConfig.pipe(Layer.provide(Metrics.Default), Layer.provide(Layer.setConfigProvider(config)))
      // Closing the layer flushes the buffer: nothing is waited for.
      yield* Effect.flatMap(LifecycleAudit, (audit) =>
        audit.emit({ type: "orchestrator.lifecycle.created", category: "orchestration", correlationId: "rr-cluster", data: { rr_name: "rr-cluster" } })).pipe(
          Effect.provide(live)
        )
      Fs.rmSync(dir, { recursive: true, force: true })
      expect(received).toHaveLength(1)
      expect(received[0]).toMatchObject({ path: "/api/v1/audit/events/batch", auth: "Bearer operator-sa-token" })
      expect(received[0]!.events).toMatchObject([{
        event_type: "orchestrator.lifecycle.created",
        event_category: "orchestration",
        correlation_id: "rr-cluster",
        actor_id: "remediationorchestrator",
        event_data: { rr_name: "rr-cluster" }
      }])
    }).pipe(Effect.scoped))
})
