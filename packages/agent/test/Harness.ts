/**
 * The agent on its real HTTP server with fakes behind real protocols where it matters: the scripted LLM server
 * (OpenAI wire, through the real adapter), the in-memory cluster (or the devkit's dev API server over HTTP), a
 * fixed workflow catalog, a recording audit sink.
 */
import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeContext, NodeHttpClient } from "@effect/platform-node"
import { Duration, Effect, Layer } from "effect"
import { AgentApi } from "@kubemend/core/AgentApi"
import type { KubeObject } from "@kubemend/core/K8s"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { K8sMemory } from "@kubemend/core/K8s/Memory"
import { DevKube } from "@kubemend/devkit/kube/DevKube"
import * as ScriptedLlm from "@kubemend/devkit/ScriptedLlm"
import type { IncidentRequestEncoded } from "@kubemend/core/domain/Incident"
import type { RemediationWorkflow } from "@kubemend/core/StorageApi"
import { apiPort, ServerConfig } from "@kubemend/core/Servers"
import { AgentConfig, type AgentSettings } from "../src/AgentConfig.ts"
import { MetricsLive, ServerLive } from "../src/Service.ts"
import { AlignmentLlm } from "../src/Investigation/Alignment.ts"
import { Audit, AuditRecorder } from "@kubemend/core/Audit"
import { Storage } from "@kubemend/core/Storage"

export const namespace = "kubemend-system"
export const appNs = "shop"

export const wf = (id: string, name: string, actionType: string, parameters: ReadonlyArray<Record<string, unknown>>): RemediationWorkflow => ({
  workflowId: id,
  workflowName: name,
  actionType,
  version: "1.0.0",
  schemaVersion: "1.0",
  name,
  description: { what: `${actionType} the target`, whenToUse: "when it helps" },
  content: "",
  contentHash: "0".repeat(64),
  parameters: { parameters },
  executionEngine: "job",
  executionBundle: `registry.example/${name}:1.0.0`,
  labels: { severity: ["*"], component: ["*"], environment: ["*"], priority: "*" },
  status: "Active",
  isLatestVersion: true,
  createdAt: "2025-01-01T00:00:00Z",
  updatedAt: "2025-01-01T00:00:00Z"
})

export const restartId = "11111111-1111-4111-8111-111111111111"
export const scaleId = "22222222-2222-4222-8222-222222222222"

const workflows: ReadonlyArray<RemediationWorkflow> = [
  wf(restartId, "restart-deployment", "RestartDeployment", [
    { name: "NAMESPACE", type: "string", description: "namespace", required: true },
    { name: "DEPLOYMENT", type: "string", description: "deployment name", required: true, pattern: "^[a-z0-9-]+$" }
  ]),
  wf(scaleId, "scale-deployment", "ScaleReplicas", [
    { name: "NAMESPACE", type: "string", description: "namespace", required: true },
    { name: "DEPLOYMENT", type: "string", description: "deployment name", required: true },
    { name: "REPLICAS", type: "integer", description: "replicas", required: true, minimum: 1, maximum: 20 }
  ])
]

/** The storage service's catalog in memory (core `Storage.layerMemory`, the same matching rules). */
const storageWith = (catalog: ReadonlyArray<RemediationWorkflow>) =>
  Storage.layerMemory({
    workflows: catalog,
    actionTypes: [...new Set(catalog.map((w) => w.actionType))].map((name) => ({ name, description: { what: name, whenToUse: "when it helps" } }))
  })
export const StorageTest = storageWith(workflows)

const meta = (name: string, extra: Record<string, unknown> = {}) => ({ name, namespace: appNs, uid: `uid-${name}`, ...extra })

/** A Deployment -> ReplicaSet -> Pod chain in CrashLoopBackOff; `log` is the pod's termination message. */
export const cluster = (log = "out of memory"): ReadonlyArray<KubeObject> => [
  {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: meta("checkout", { labels: { "app.kubernetes.io/managed-by": "Helm" } }),
    spec: { replicas: 2, template: { metadata: { labels: { app: "checkout" } } } }
  },
  {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: meta("checkout-7d9f", {
      ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: "checkout", uid: "uid-checkout", controller: true }]
    }),
    spec: {}
  },
  {
    apiVersion: "v1",
    kind: "Pod",
    metadata: meta("checkout-7d9f-abcde", {
      labels: { app: "checkout" },
      ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "checkout-7d9f", uid: "uid-checkout-7d9f", controller: true }]
    }),
    spec: { containers: [{ name: "app", image: "shop/checkout:1" }] },
    status: {
      phase: "Running",
      containerStatuses: [{ name: "app", restartCount: 7, lastState: { terminated: { reason: "OOMKilled", exitCode: 137, message: log } } }]
    }
  },
  {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: meta("checkout-pdb"),
    spec: { selector: { matchLabels: { app: "checkout" } } }
  }
]

export const incident = (signal: string, overrides: Partial<IncidentRequestEncoded> = {}): IncidentRequestEncoded => ({
  incident_id: `inc-${signal}`,
  remediation_id: `rr-${signal.toLowerCase()}`,
  signal_name: signal,
  severity: "high",
  signal_source: "prometheus",
  resource_namespace: appNs,
  resource_kind: "Pod",
  resource_name: "checkout-7d9f-abcde",
  resource_api_version: "v1",
  error_message: "container app restarted 7 times",
  environment: "production",
  priority: "P1",
  risk_tolerance: "medium",
  business_category: "checkout",
  cluster_name: "dev",
  ...overrides
})

/** The analysis controller's ServiceAccount, granted `agent-client` as the operator renders it. */
const controllerUser = "system:serviceaccount:kubemend-operator:kubemend-operator"
const controllerToken = "analysis-controller-token"

/** The gateway's ServiceAccount: the agent believes the acting user it names. */
const gatewayUser = "system:serviceaccount:kubemend-system:kubemend-gateway"
export const gatewayToken = "gateway-sa-token"

const agentClientRole = {
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRole",
  metadata: { name: "agent-client" },
  rules: [{ apiGroups: [""], resources: ["services"], verbs: ["get", "create"], resourceNames: ["kubemend-agent"] }]
}
const agentClientBinding = {
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRoleBinding",
  metadata: { name: "agent-client-controller" },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "agent-client" },
  subjects: [
    { kind: "ServiceAccount", name: "kubemend-operator", namespace: "kubemend-operator" },
    { kind: "ServiceAccount", name: "kubemend-gateway", namespace }
  ]
}

export interface TestOptions {
  readonly scripts: ReadonlyArray<ScriptedLlm.Script>
  readonly config?: Partial<AgentSettings>
  readonly seed?: ReadonlyArray<KubeObject>
  /** Per-phase models (`llm.phaseModels`), all answered by the scripted server. */
  readonly phaseModels?: ScriptedLlm.ScriptedLlmOptions["phaseModels"]
  /** The catalog (default `workflows`). */
  readonly workflows?: ReadonlyArray<RemediationWorkflow>
}

/** The devkit's dev API server, seeded, with the agent's K8s layer talking to it over HTTP. */
export const DevKubeCluster = (seed: ReadonlyArray<KubeObject>) =>
  Layer.unwrapEffect(Effect.map(DevKube, (kube) => K8sLive.layer({ namespace, kubeconfig: kube.kubeConfig() }))).pipe(
    Layer.provideMerge(Layer.scoped(
      DevKube,
      Effect.tap(DevKube.scoped(), (kube) =>
        Effect.sync(() => {
          kube.seed([...seed, agentClientRole, agentClientBinding])
          kube.registerToken(controllerToken, { username: controllerUser, groups: ["system:serviceaccounts"] })
          kube.registerToken(gatewayToken, { username: gatewayUser, groups: ["system:serviceaccounts"] })
        }))
    ))
  )

export const agentOn = <E, R>(cluster: Layer.Layer<R, E>, options: TestOptions) =>
  ServerLive.pipe(
    Layer.provideMerge(options.workflows === undefined ? StorageTest : storageWith(options.workflows)),
    Layer.provideMerge(AlignmentLlm.fromMain),
    Layer.provideMerge(
      ScriptedLlm.layerScripted({ scripts: options.scripts, ...(options.phaseModels === undefined ? {} : { phaseModels: options.phaseModels }) })
    ),
    Layer.provideMerge(cluster),
    Layer.provideMerge(Audit.layerRecording),
    Layer.provideMerge(AgentConfig.layer({ interactive: { ...AgentConfig.defaults.interactive, enabled: true }, ...options.config })),
    Layer.provideMerge(ServerConfig.layer()),
    Layer.provideMerge(MetricsLive),
    Layer.provideMerge(NodeHttpClient.layerUndici),
    Layer.provideMerge(NodeContext.layer)
  )

/** The agent serving on loopback, with handles for assertions (scripted server, memory cluster, audit). */
export const AgentTest = (options: TestOptions) =>
  agentOn(
    K8sMemory.layer({
      namespace,
      seed: options.seed ?? cluster(),
      tokens: {
        [controllerToken]: { username: controllerUser, groups: ["system:serviceaccounts"] },
        [gatewayToken]: { username: gatewayUser, groups: ["system:serviceaccounts"] }
      },
      // `agent-client`, as the operator binds it to the analysis controller and the gateway.
      allow: [controllerUser, gatewayUser].flatMap((user) =>
        (["get", "create"] as const).map((verb) => ({ user, verb, resource: "services", name: "kubemend-agent" }))
      )
    }),
    options
  )

/** The same agent against the dev API server (`DevKube` in context for assertions). */
export const AgentOnDevKube = (options: TestOptions) => agentOn(DevKubeCluster(options.seed ?? cluster()), options)

export const baseUrl = Effect.map(apiPort, (port) => `http://127.0.0.1:${port}`)

/** The REST client as the analysis controller holds it (its ServiceAccount token). */
export const client = Effect.flatMap(
  baseUrl,
  (url) => HttpApiClient.make(AgentApi, { baseUrl: url, transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(controllerToken)) })
)

/** Polls the session until it ends (at most 10 s). */
export const awaitEnd = (sessionId: string) =>
  Effect.gen(function* () {
    const c = yield* client
    for (let i = 0; i < 500; i++) {
      const s = yield* c.incident.sessionStatus({ path: { session_id: sessionId } })
      if (s.status === "completed" || s.status === "failed" || s.status === "cancelled") return s
      yield* Effect.sleep(Duration.millis(20))
    }
    return yield* Effect.dieMessage(`session ${sessionId} did not end`)
  })

export const auditEvents = Effect.flatMap(AuditRecorder, (r) => r.events)

/** Raw HTTP with the controller's token unless `init` sets `authorization` (an empty value sends none). */
export const fetchRaw = (path: string, init?: RequestInit) =>
  Effect.flatMap(baseUrl, (url) => {
    const headers = new Headers(init?.headers)
    if (!headers.has("authorization")) headers.set("authorization", `Bearer ${controllerToken}`)
    if (headers.get("authorization") === "") headers.delete("authorization")
    return Effect.promise(() => fetch(`${url}${path}`, { ...init, headers }))
  })
