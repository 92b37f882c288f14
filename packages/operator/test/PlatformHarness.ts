/**
 * The dev API server with a platform namespace, the Secrets and ConfigMaps a valid CR points at, a CR builder, and
 * the reconciler on the real Cluster client. Helpers play the cluster's controllers: complete the migration Job,
 * report Deployments ready or not.
 */
import { DevKube } from "@kubemend/devkit/kube/index"
import type { KubeObject } from "@kubemend/core/K8s"
import { Context, Effect, Layer, Logger, LogLevel } from "effect"
import * as ClusterLive from "../src/runtime/Cluster/Live.ts"
import { OperatorConfig, type OperatorSettings } from "../src/OperatorConfig.ts"
import { PlatformReconciler } from "../src/platform/Reconcile.ts"

export const apiGroup = "kubemend.io"
export const namespace = "kubemend-system"
export const crName = "kubemend"
export const platformApiVersion = `${apiGroup}/v1alpha1`

const secret = (name: string, data: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace },
  stringData: data
})
const configMap = (name: string, data: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace },
  data
})

/** What a valid CR refers to. */
export const references = [
  { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
  secret("pg", { username: "u", password: "p", database: "kubemend" }),
  secret("valkey", { password: "p" }),
  secret("llm", { "api-key": "k" }),
  secret("console-auth", { "client-id": "c", "client-secret": "s", "cookie-secret": "x" }),
  secret("ansible-token", { token: "t" }),
  configMap("approval-policy", { "approval.rego": "package approval" }),
  configMap("sp-policy", { "policy.rego": "package sp" })
]

export type Spec = Record<string, any>

/** A minimal valid spec; `edit` changes it in place. */
export const spec = (edit: (s: Spec) => void = () => {}): Spec => {
  const s: Spec = {
    postgresql: { host: "pg.db.svc", secretName: "pg", sslMode: "verify-full" },
    valkey: { host: "valkey.db.svc", secretName: "valkey" },
    agent: { llm: { provider: "vertexAi", model: "claude-sonnet", credentialsSecretName: "llm" } },
    aiAnalysis: { policy: { configMapName: "approval-policy" } },
    signalProcessing: { policy: { configMapName: "sp-policy" } },
    apiFrontend: {
      auth: { issuerURL: "https://issuer.example.com" },
      rbac: { roleBindings: [{ role: "sre", groups: ["sre-team"] }, { role: "l3-audit", groups: ["auditors"] }] }
    }
  }
  edit(s)
  return s
}

export const platform = (s: Spec = spec()): KubeObject => ({
  apiVersion: platformApiVersion,
  kind: "Kubemend",
  metadata: { name: crName, namespace },
  spec: s
})

/** Dev API server (scoped) seeded with the references, and a reconciler layer talking to it. */
export const world = (settings: Partial<OperatorSettings> = {}) =>
  Effect.gen(function* () {
    const kube = yield* DevKube.scoped({ apiGroup })
    kube.seed(references)
    const layer = PlatformReconciler.Default.pipe(
      Layer.provide(ClusterLive.layer({ kubeconfig: kube.kubeConfig(), apiGroup })),
      Layer.provide(OperatorConfig.layer({ apiGroup, ...settings }))
    )
    const reconciler = yield* Effect.flatMap(Layer.build(layer), (context) => Effect.succeed(Context.get(context, PlatformReconciler)))
    /** Reconciles the platform CR `name` of the namespace (default: the harness's own). */
    const reconcileNamed = (name: string) => reconciler.reconcile(`${namespace}/${name}`).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))
    const reconcile = reconcileNamed(crName)
    const cr = () => kube.get(platformApiVersion, "Kubemend", crName, namespace)
    const status = () => (cr()?.status ?? {}) as Record<string, any>
    const condition = (type: string) => (status().conditions ?? []).find((c: { type: string }) => c.type === type)
    const deployment = (svc: string) => kube.get("apps/v1", "Deployment", `kubemend-${svc}`, namespace)
    const clusterRoles = () => kube.list("rbac.authorization.k8s.io/v1", "ClusterRole").filter((r) => r.metadata.labels?.[`${apiGroup}/owner-name`] === crName)
    const clusterRoleBindings = () =>
      kube.list("rbac.authorization.k8s.io/v1", "ClusterRoleBinding").filter((r) => r.metadata.labels?.[`${apiGroup}/owner-name`] === crName)

    /** Plays the Job controller: every migration Job succeeds. */
    const completeJobs = () => {
      for (const job of kube.list("batch/v1", "Job", namespace)) kube.put({ ...job, status: { succeeded: 1 } })
    }
    /** Plays the Deployment controller: the named services report ready (the others rolled out, not ready). */
    const reportReady = (ready: ReadonlyArray<string> = ["gateway", "agent", "storage", "signals", "console"]) => {
      for (const d of kube.list("apps/v1", "Deployment", namespace)) {
        const svc = d.metadata.labels?.["app.kubernetes.io/name"] ?? ""
        const ok = ready.includes(svc)
        const replicas = (d.spec as { replicas?: number } | undefined)?.replicas ?? 1
        kube.put({
          ...d,
          status: { observedGeneration: d.metadata.generation, replicas, updatedReplicas: replicas, readyReplicas: ok ? replicas : 0 }
        })
      }
    }
    /** Change the spec as a user would (status and finalizers stay). */
    const updateSpec = (s: Spec) => {
      const current = cr()
      if (current === undefined) throw new Error("no platform CR")
      kube.put({ ...current, spec: s })
    }
    /** Create the CR, complete the migration, report every Deployment ready and reconcile to Running. */
    const settle = (s: Spec = spec()) =>
      Effect.gen(function* () {
        kube.put(platform(s))
        yield* reconcile
        completeJobs()
        yield* reconcile
        reportReady()
        return yield* reconcile
      })
    return {
      kube,
      reconcile,
      reconcileNamed,
      cr,
      status,
      condition,
      deployment,
      clusterRoles,
      clusterRoleBindings,
      completeJobs,
      reportReady,
      settle,
      updateSpec
    }
  })
