/**
 * The service on loopback against the dev API server (live K8s layer, the repo's CRDs installed), with a recording
 * audit: a sender ServiceAccount bound to `gateway-signal-source`, a stranger without it, and a shop namespace with
 * Deployment -> ReplicaSet -> Pod.
 */
import { Audit, AuditRecorder } from "@kubemend/core/Audit"
import { AuthConfig } from "@kubemend/core/Auth"
import { DevKube } from "@kubemend/devkit/kube/index"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { apiPort, BoundPorts, ServerConfig } from "@kubemend/core/Servers"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { ServerLive } from "../src/Service.ts"
import { SignalsConfig, type SignalsSettings } from "../src/SignalsConfig.ts"

const apiGroup = "kubemend.io"
const namespace = "kubemend-system"
const crdDir = Path.resolve(import.meta.dirname, "..", "..", "..", "deploy", "crds")

const owner = (apiVersion: string, kind: string, name: string) => [{ apiVersion, kind, name, uid: `${name}-uid`, controller: true }]

/** The `gateway-signal-source` role and Alertmanager's ServiceAccount (monitoring/alertmanager) bound to it. */
export const alertmanagerSenderGrant = [
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: "gateway-signal-source" },
    rules: [{ apiGroups: [""], resources: ["services"], verbs: ["create"], resourceNames: ["kubemend-signals"] }]
  },
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: "alertmanager-signal-source" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "gateway-signal-source" },
    subjects: [{ kind: "ServiceAccount", name: "alertmanager", namespace: "monitoring" }]
  }
]

const world = [
  { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
  { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop", labels: { environment: "production" } } },
  { apiVersion: "v1", kind: "Namespace", metadata: { name: "monitoring" } },
  { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "checkout", namespace: "shop", uid: "checkout-uid" }, spec: { replicas: 2 } },
  {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: "checkout-7d9f", namespace: "shop", uid: "checkout-7d9f-uid", ownerReferences: owner("apps/v1", "Deployment", "checkout") }
  },
  {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "checkout-7d9f-abcde", namespace: "shop", ownerReferences: owner("apps/v1", "ReplicaSet", "checkout-7d9f") }
  },
  {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "checkout-7d9f-fghij", namespace: "shop", ownerReferences: owner("apps/v1", "ReplicaSet", "checkout-7d9f") }
  },
  { apiVersion: "apps/v1", kind: "StatefulSet", metadata: { name: "payments-db", namespace: "shop" } },
  ...alertmanagerSenderGrant
]

export const startKube = Effect.gen(function* () {
  const kube = yield* DevKube.scoped({ apiGroup })
  for (const f of Fs.readdirSync(crdDir).filter((f) => f.endsWith(".yaml"))) kube.seedYaml(Fs.readFileSync(Path.join(crdDir, f), "utf8"))
  kube.seed(world)
  return {
    kube,
    sender: kube.registerServiceAccountToken("monitoring", "alertmanager"),
    stranger: kube.registerServiceAccountToken("shop", "someone")
  }
})

/** Starts the service for the enclosing scope; returns its base URL and the recorder. */
export const startSignals = (kube: DevKube, overrides: Partial<SignalsSettings> = {}) =>
  Effect.gen(function* () {
    const layer = ServerLive.pipe(
      Layer.provideMerge(Audit.layerRecording),
      Layer.provideMerge(K8sLive.layer({ namespace, apiGroup, kubeconfig: kube.kubeConfig(), requestTimeout: "10 seconds" })),
      Layer.provideMerge(Layer.mergeAll(AuthConfig.layer(), SignalsConfig.layer(overrides), ServerConfig.layer()))
    )
    const context = yield* Layer.build(layer)
    const port = yield* Effect.provide(apiPort, context)
    const ports = yield* Effect.provide(BoundPorts, context)
    const recorder = yield* Effect.provide(AuditRecorder, context)
    return {
      url: `http://127.0.0.1:${port}`,
      metricsUrl: `http://127.0.0.1:${ports.metrics}`,
      healthUrl: `http://127.0.0.1:${ports.health}`,
      recorder,
      context
    }
  })

export const post = (url: string, body: unknown, token?: string, headers: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body)
    })
    const text = await res.text()
    return { status: res.status, contentType: res.headers.get("content-type") ?? "", body: (text === "" ? undefined : JSON.parse(text)) as any }
  })

/** An Alertmanager v4 webhook as its documentation shows it. */
export const webhook = (alerts: ReadonlyArray<Record<string, unknown>>, status: "firing" | "resolved" = "firing") => ({
  version: "4",
  groupKey: "{}:{alertname=\"KubePodCrashLooping\"}",
  truncatedAlerts: 0,
  status,
  receiver: "kubemend",
  groupLabels: { alertname: "KubePodCrashLooping" },
  commonLabels: { alertname: "KubePodCrashLooping", severity: "critical" },
  commonAnnotations: {},
  externalURL: "http://alertmanager.monitoring:9093",
  alerts
})

export const alert = (labels: Record<string, string>, status: "firing" | "resolved" = "firing") => ({
  status,
  labels: { alertname: "KubePodCrashLooping", severity: "critical", ...labels },
  annotations: { summary: "Pod is crash looping", description: "checkout restarts repeatedly (OOMKilled)" },
  startsAt: "2026-11-26T01:00:00Z",
  endsAt: status === "resolved" ? "2026-11-26T01:30:00Z" : "0001-01-01T00:00:00Z",
  generatorURL: "http://prometheus.monitoring:9090/graph?g0.expr=...",
  fingerprint: "c0ffee0123456789"
})
