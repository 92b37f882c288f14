/**
 * The workflow execution reconciler against the dev API server (generated CRDs, the workflow namespace, a target
 * Deployment) and the real storage service holding the catalog; tests call `reconcile` directly and play the Job
 * controller and kubelet by writing Job and Pod status, as the cluster would.
 */
import { DevKube } from "@kubemend/devkit/kube/index"
import type { KubeObject } from "@kubemend/core/K8s"
import * as K8sLive from "@kubemend/core/K8s/Live"
import { Metrics } from "@kubemend/core/Metrics"
import { Storage } from "@kubemend/core/Storage"
import { Context, Duration, Effect, Exit, Layer, Logger, LogLevel, Redacted, Scope } from "effect"
import { afterAll } from "vitest"
import { grantStorageClient, startStorage } from "../../gateway/test/support/StorageProcess.ts"
import * as ClusterLive from "../src/runtime/Cluster/Live.ts"
import { renderCrds } from "../src/Crds.ts"
import { Engines } from "../src/execution/Engines.ts"
import { ExecutionConfig } from "../src/remediation/ExecutionConfig.ts"
import { ExecutionMetrics } from "../src/execution/ExecutionMetrics.ts"
import { ExecutionReconciler } from "../src/execution/ExecutionReconciler.ts"
import { RecordedAudit } from "../src/remediation/LifecycleAudit.ts"
import { LifecycleConfig } from "../src/remediation/LifecycleConfig.ts"
import { PlatformSettings } from "../src/remediation/PlatformSettings.ts"

export const apiGroup = "kubemend.io"
export const namespace = "kubemend-system"
export const workflows = "kubemend-workflows"
export const shop = "shop"

export const workflowDoc = (o: { name: string; engine?: string; extra?: string; version?: string }) =>
  `apiVersion: ${apiGroup}/v1alpha1
kind: RemediationWorkflow
metadata:
  name: ${o.name}
spec:
  version: "${o.version ?? "1.0.0"}"
  actionType: RollbackDeployment
  description:
    what: Rolls a Deployment back
    whenToUse: A rollout broke the workload
  labels:
    severity: [critical]
    component: ["*"]
    environment: ["*"]
    priority: "*"
  execution:
    engine: ${o.engine ?? "job"}
    bundle: ghcr.io/kubemend/${o.name}:1.0
    bundleDigest: sha256:${"ab".repeat(32)}
    serviceAccountName: rollback-runner
${o.extra ?? ""}  parameters:
    - { name: TARGET_NAME, type: string, required: true, description: the Deployment, pattern: "^[a-z-]+$" }
    - { name: TARGET_NAMESPACE, type: string, required: true, description: its namespace }
    - { name: TO_REVISION, type: integer, required: false, description: revision, default: 1 }
`

export const deployment = (name: string, image = "shop/checkout:1.4.2"): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: shop },
  spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image }] } } }
})

export const remediationRequest = (name: string, target: string): KubeObject => ({
  apiVersion: `${apiGroup}/v1alpha1`,
  kind: "RemediationRequest",
  metadata: { name, namespace },
  spec: {
    signalName: "KubePodCrashLooping",
    signalFingerprint: "f".repeat(64),
    severity: "critical",
    signalType: "alert",
    signalSource: "prometheus",
    targetType: "kubernetes",
    targetResource: { apiVersion: "apps/v1", kind: "Deployment", name: target, namespace: shop }
  }
})

export const execution = (name: string, rr: string, target: string, workflowId: string, parameters: Record<string, string> = {}): KubeObject => ({
  apiVersion: `${apiGroup}/v1alpha1`,
  kind: "WorkflowExecution",
  metadata: { name, namespace, labels: { [`${apiGroup}/remediation-request`]: rr } },
  spec: {
    remediationRequestRef: { apiVersion: `${apiGroup}/v1alpha1`, kind: "RemediationRequest", name: rr, namespace },
    targetResource: `${shop}/Deployment/${target}`,
    workflowRef: { workflowId, version: "1.0.0" },
    parameters: { TARGET_NAME: target, TARGET_NAMESPACE: shop, ...parameters },
    executionConfig: { timeout: "10m" }
  }
})

/**
 * One storage process per test file, its start being most of a test's time; it authenticates the reconciler's token
 * against a dev API server of its own. Each test's catalog registrations are idempotent, so sharing it is safe.
 */
const storageScope = Effect.runSync(Scope.make())
afterAll(() => Effect.runPromise(Scope.close(storageScope, Exit.void)))
let sharedStorage: Promise<{ readonly url: string; readonly token: string }> | undefined
const catalogStorage = Effect.promise(() =>
  sharedStorage ??= Effect.runPromise(
    Effect.gen(function* () {
      const kube = yield* DevKube.scoped({ apiGroup })
      const storage = yield* startStorage(kube, namespace)
      grantStorageClient(kube, namespace, "kubemend-operator")
      return { url: storage.url, token: kube.registerServiceAccountToken(namespace, "kubemend-operator") }
    }).pipe(Scope.extend(storageScope))
  )
)

export const world = (settings: Parameters<typeof ExecutionConfig.make>[0] = {}, objects: ReadonlyArray<unknown> = []) =>
  Effect.gen(function* () {
    const kube = yield* DevKube.scoped({ apiGroup })
    kube.seed([
      ...[namespace, workflows, shop].map((name) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } })),
      ...renderCrds(apiGroup),
      deployment("checkout"),
      deployment("cart"),
      ...objects
    ] as never)
    const storage = yield* catalogStorage
    const storageLayer = Storage.layer({ baseUrl: storage.url, token: Redacted.make(storage.token) })
    const base = Layer.mergeAll(
      K8sLive.layer({ namespace, apiGroup, kubeconfig: kube.kubeConfig() }),
      ClusterLive.layer({ apiGroup, kubeconfig: kube.kubeConfig() }),
      storageLayer,
      ExecutionConfig.layer({ workflowNamespace: workflows, cooldownPeriod: Duration.minutes(5), ...settings }),
      LifecycleConfig.layer(),
      RecordedAudit.layer,
      Metrics.Default
    ).pipe(Layer.orDie)
    const context = yield* Layer.build(
      ExecutionReconciler.Default.pipe(
        Layer.provideMerge(Layer.mergeAll(Engines.Default, ExecutionMetrics.Default, PlatformSettings.Default)),
        Layer.provideMerge(base)
      )
    )
    const reconciler = Context.get(context, ExecutionReconciler)
    const catalog = Context.get(context, Storage)
    yield* catalog.registerActionType({ name: "RollbackDeployment", description: { what: "Roll back", whenToUse: "a bad rollout" }, registeredBy: "test" })
    const register = (content: string) => Effect.map(catalog.registerWorkflow({ content, source: "api", registeredBy: "test" }), (r) => r.workflow.workflowId)
    const reconcile = (name: string) => Logger.withMinimumLogLevel(reconciler.reconcile(`${namespace}/${name}`), LogLevel.Warning)
    const we = (name: string) =>
      kube.get(`${apiGroup}/v1alpha1`, "WorkflowExecution", name, namespace) as (KubeObject & { status?: Record<string, any> }) | undefined
    const job = (name: string) => kube.get("batch/v1", "Job", name, workflows) as Record<string, any> | undefined
    /** Plays the Job controller and kubelet: the Job's pod ends with `exitCode`, its log `log`. */
    const finishJob = (name: string, exitCode: number, log = "", reason?: string) => {
      const at = new Date().toISOString()
      kube.put({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: `${name}-x1`, namespace: workflows, labels: { "job-name": name } },
        spec: { containers: [{ name: "workflow", image: "x" }] },
        status: {
          phase: exitCode === 0 ? "Succeeded" : "Failed",
          containerStatuses: [{
            name: "workflow",
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode, reason: reason ?? (exitCode === 0 ? "Completed" : "Error") } }
          }]
        }
      })
      if (log !== "") kube.setPodLog(workflows, `${name}-x1`, "workflow", log)
      const j = job(name)!
      kube.put({
        ...j,
        status: exitCode === 0
          ? {
            succeeded: 1,
            completionTime: at,
            conditions: [{ type: "Complete", status: "True", reason: "Completed", message: "Reached expected number of succeeded pods" }]
          }
          : {
            failed: 1,
            conditions: [{ type: "Failed", status: "True", reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" }]
          }
      })
    }
    return {
      kube,
      register,
      reconcile,
      we,
      job,
      finishJob,
      audit: Context.get(context, RecordedAudit).events,
      metrics: Effect.map(Context.get(context, Metrics).render(undefined), (r) => r.body),
      create: (o: KubeObject) => Effect.sync(() => void kube.seed([o]))
    }
  })
