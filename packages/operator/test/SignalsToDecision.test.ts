/**
 * From an Alertmanager webhook to the approval decision, every part real and running on its own: the signal service
 * over HTTP (TokenReview + SAR against the dev API server) makes the request; the lifecycle controllers (watches,
 * work queues) process it — the SignalProcessing enriched from the cluster and classified by policy.rego — analyze
 * it with the agent over REST, and let approval.rego decide. The policies come from the ConfigMaps the platform CR
 * names, pushed by the operator to the policy engine's REST API; approval.rego here requires approval in
 * production. Storage's reconstruction then rebuilds the request with `gateway.signal.received` as its genesis.
 */
import { describe, expect, it } from "@effect/vitest"
import { Audit, AuditRecorder } from "@kubemend/core/Audit"
import { AuthConfig } from "@kubemend/core/Auth"
import { DevKube } from "@kubemend/devkit/kube/index"
import { make as makeOpa } from "@kubemend/devkit/Opa"
import type { AuditEvent } from "@kubemend/core/domain/Audit"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { apiPort, ServerConfig } from "@kubemend/core/Servers"
import { ServerLive } from "@kubemend/signals/Service"
import { SignalsConfig } from "@kubemend/signals/SignalsConfig"
import { reconstruct } from "@kubemend/storage/Reconstruct"
import { Context, Duration, Effect, Layer, Logger, LogLevel, Option, Redacted, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import * as Yaml from "yaml"
import { renderCrds } from "../src/Crds.ts"
import { layerInProcess } from "../src/Controllers.ts"
import { RecordedAudit } from "../src/remediation/LifecycleAudit.ts"
import { platformCr } from "@kubemend/local/Platform"
import { defaultPolicies } from "../src/policy/Defaults.ts"
import { fakeAgentToken, startFakeAgent } from "./FakeAgent.ts"
import { alertmanagerSenderGrant } from "../../signals/test/Harness.ts"
import { apiGroup, namespace } from "./LifecycleHarness.ts"

const productionApproval = `package approval
import rego.v1
default require_approval := false
require_approval if input.confidence < input.threshold
require_approval if input.environment == "production"
reasons contains "production changes need a person's approval" if input.environment == "production"
`

const owner = (apiVersion: string, kind: string, name: string) => [{ apiVersion, kind, name, uid: `${name}-uid`, controller: true }]
const workload = (ns: string, environment: string) => [
  { apiVersion: "v1", kind: "Namespace", metadata: { name: ns, labels: { [`${apiGroup}/managed`]: "true", environment } } },
  {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "checkout", namespace: ns, uid: `${ns}-checkout-uid`, labels: { "app.kubernetes.io/managed-by": "Helm" } },
    spec: { replicas: 2, template: { metadata: { labels: { app: "checkout" } } } }
  },
  {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: "checkout-7d9f", namespace: ns, uid: `${ns}-rs-uid`, ownerReferences: owner("apps/v1", "Deployment", "checkout") }
  },
  { apiVersion: "v1", kind: "Pod", metadata: { name: "checkout-7d9f-abcde", namespace: ns, ownerReferences: owner("apps/v1", "ReplicaSet", "checkout-7d9f") } },
  {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: { name: "checkout", namespace: ns },
    spec: { minAvailable: 1, selector: { matchLabels: { app: "checkout" } } }
  }
]

const world = [
  { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
  { apiVersion: "v1", kind: "Namespace", metadata: { name: "monitoring" } },
  ...workload("shop", "production"),
  ...workload("shop-staging", "staging"),
  ...alertmanagerSenderGrant,
  platformCr("https://issuer.example", { provider: "openai", model: "m", endpoint: "http://llm.example", apiKey: "k" }, "http://alerts.example"),
  { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "sp-policy", namespace }, data: { "policy.rego": defaultPolicies["policy.rego"] } },
  { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "approval-policy", namespace }, data: { "approval.rego": productionApproval } }
]

const webhook = (ns: string) => ({
  version: "4",
  groupKey: "{}:{alertname=\"KubePodCrashLooping\"}",
  truncatedAlerts: 0,
  status: "firing",
  receiver: "kubemend",
  groupLabels: { alertname: "KubePodCrashLooping" },
  commonLabels: { alertname: "KubePodCrashLooping", severity: "critical" },
  commonAnnotations: {},
  externalURL: "http://alertmanager.monitoring:9093",
  alerts: [{
    status: "firing",
    labels: { alertname: "KubePodCrashLooping", severity: "critical", namespace: ns, pod: "checkout-7d9f-abcde" },
    annotations: { summary: "Pod is crash looping", description: "checkout restarts repeatedly (OOMKilled)" },
    startsAt: "2026-11-26T01:00:00Z",
    endsAt: "0001-01-01T00:00:00Z",
    generatorURL: "http://prometheus.monitoring:9090/graph?g0.expr=...",
    fingerprint: `fp-${ns}`
  }]
})

describe("an alert to the approval decision", () => {
  it.live(
    "over HTTP into the signal service, through processing, analysis and approval.rego; storage rebuilds it from its genesis",
    () =>
      Effect.gen(function* () {
        const kube = yield* DevKube.scoped({ apiGroup })
        kube.seed([...renderCrds(apiGroup), ...world])
        const sender = kube.registerServiceAccountToken("monitoring", "alertmanager")
        const opa = yield* makeOpa()
        const agent = yield* startFakeAgent
        agent.script = () => ({ polls: 1, result: { confidence: 0.95 } })

        // The signal service on loopback, recording its audit events.
        const signals = yield* Layer.build(ServerLive.pipe(
          Layer.provideMerge(Audit.layerRecording),
          Layer.provideMerge(K8sLive.layer({ namespace, apiGroup, kubeconfig: kube.kubeConfig(), requestTimeout: "10 seconds" })),
          Layer.provideMerge(Layer.mergeAll(AuthConfig.layer(), SignalsConfig.layer(), ServerConfig.layer()))
        ))
        const signalsUrl = `http://127.0.0.1:${yield* Effect.provide(apiPort, signals)}`

        // The lifecycle controllers, with the policy engine and a recording audit.
        const lifecycleAudit = yield* Layer.build(RecordedAudit.layer)
        yield* Logger.withMinimumLogLevel(
          Layer.build(layerInProcess({
            kubeconfig: kube.kubeConfig(),
            namespace,
            apiGroup,
            agentUrl: agent.url,
            agentToken: Option.some(Redacted.make(fakeAgentToken)),
            policy: { url: opa.url, syncInterval: Duration.millis(100) },
            pollInterval: Duration.millis(20),
            audit: Layer.succeedContext(lifecycleAudit)
          })),
          LogLevel.Warning
        )

        const post = (ns: string) =>
          Effect.promise(async () => {
            const res = await fetch(`${signalsUrl}/api/v1/signals/prometheus`, {
              method: "POST",
              headers: { "content-type": "application/json", authorization: `Bearer ${sender}` },
              body: JSON.stringify(webhook(ns))
            })
            return { status: res.status, body: (await res.json()) as { remediationRequestRef: { name: string } } }
          })
        // The policies reach the engine before the first request needs them.
        yield* Effect.sync(() => opa.policies.ids().length).pipe(
          Effect.repeat({ schedule: Schedule.spaced("50 millis"), until: (n) => n === 2 }),
          Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error("policies were never loaded") })
        )
        const prod = yield* post("shop")
        const staging = yield* post("shop-staging")
        expect([prod.status, staging.status]).toEqual([201, 201])
        const prodRr = prod.body.remediationRequestRef.name
        const stagingRr = staging.body.remediationRequestRef.name

        const k8s = yield* K8sLive.make({ namespace, apiGroup, kubeconfig: kube.kubeConfig() })
        const phase = (name: string) =>
          Effect.map(k8s.getCr("remediationrequests", name), (o) => (o.status as { overallPhase?: string } | undefined)?.overallPhase)
        const until = (name: string, wanted: ReadonlyArray<string>) =>
          phase(name).pipe(
            Effect.repeat({ schedule: Schedule.spaced("25 millis"), until: (p) => p !== undefined && wanted.includes(p) }),
            Effect.timeoutFail({ duration: "15 seconds", onTimeout: () => new Error(`${name} never reached ${wanted.join("/")}`) })
          )
        yield* until(prodRr, ["AwaitingApproval"])
        yield* until(stagingRr, ["Approved", "Running"])

        // Processing: enrichment and classification in the SignalProcessing's status, handed to the analysis.
        const sp = yield* k8s.getCr("signalprocessings", `sp-${prodRr}`)
        expect(sp.status).toMatchObject({
          phase: "Completed",
          environment: "production",
          priority: "P0",
          criticality: "Critical",
          policyDegraded: false,
          enrichmentResults: {
            kubernetesContext: {
              namespace: { name: "shop", labels: { environment: "production" } },
              workload: { kind: "Deployment", name: "checkout" },
              ownerChain: [{ kind: "ReplicaSet", name: "checkout-7d9f" }, { kind: "Deployment", name: "checkout" }]
            },
            detectedLabels: { helmManaged: true, pdbProtected: true, hpaEnabled: false }
          }
        })
        const ai = yield* k8s.getCr("aianalyses", `ai-${prodRr}`)
        expect(ai.spec).toMatchObject({
          analysisRequest: {
            signalContext: { environment: "production", businessPriority: "P0", enrichmentResults: { detectedLabels: { pdbProtected: true } } }
          }
        })
        expect(ai.status).toMatchObject({ approvalRequired: true, approvalReason: "production changes need a person's approval" })
        const rar = yield* k8s.getCr("remediationapprovalrequests", `rar-${prodRr}`)
        expect(rar.spec).toMatchObject({ policyEvaluation: { policyName: "approval.rego", decision: "RequireApproval" } })
        expect((yield* k8s.getCr("signalprocessings", `sp-${stagingRr}`)).status).toMatchObject({ environment: "staging" })
        expect((yield* k8s.getCr("aianalyses", `ai-${stagingRr}`)).status).toMatchObject({ approvalRequired: false })

        // Storage's reconstruction from the two services' audit trails: the signal service's event is the genesis.
        const gatewayEvents = yield* Effect.provide(Effect.flatMap(AuditRecorder, (r) => r.events), signals)
        const lifecycleEvents = yield* Context.get(lifecycleAudit, RecordedAudit).events
        const stored = [...gatewayEvents, ...lifecycleEvents]
          .filter((e) => e.correlation_id === prodRr)
          .map((e) => ({ event_id: randomUUID(), ...e }) as AuditEvent)
        expect(stored[0]?.event_type).toBe("gateway.signal.received")
        expect(stored.map((e) => e.event_type)).toContain("signalprocessing.processing.completed")
        const rebuilt = reconstruct(prodRr, stored, apiGroup, new Date())
        expect(rebuilt._tag).toBe("Right")
        if (rebuilt._tag === "Right") {
          expect(rebuilt.right.errors).toEqual([])
          const rr = Yaml.parse(rebuilt.right.yaml)
          expect(rr).toMatchObject({
            metadata: { name: prodRr, namespace },
            spec: {
              signalName: "KubePodCrashLooping",
              signalFingerprint: expect.stringMatching(/^[a-f0-9]{64}$/),
              targetResource: { kind: "Deployment", name: "checkout", namespace: "shop" }
            },
            status: { overallPhase: "AwaitingApproval" }
          })
        }
      }).pipe(Effect.scoped),
    { timeout: 60_000 }
  )
})
