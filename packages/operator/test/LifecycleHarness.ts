/**
 * The lifecycle controllers' reconcilers against the in-memory K8s layer (or the dev API server), the fake agent
 * and the devkit's policy engine (OPA's REST API) loaded with the shipped policies, driven the kubebuilder way: tests
 * call reconcile directly and move TestClock between calls. `settle` runs every RR, signal processing and analysis
 * through its reconciler (and runs the executions) until a pass writes nothing.
 */
import { Metrics } from "@kubemend/core/Metrics"
import { K8s, type K8sService, type KubeObject } from "@kubemend/core/K8s"
import type { Storage } from "@kubemend/core/Storage"
import { K8sMemory, type K8sMemoryControl } from "@kubemend/core/K8s/Memory"
import type { AuditEventRequest } from "@kubemend/core/domain/Audit"
import { Clock, Context, Effect, Layer, Logger, LogLevel, Option, Redacted, Ref, type Scope } from "effect"
import { AlertCheck } from "../src/effectiveness/AlertCheck.ts"
import { MetricsCheck } from "../src/effectiveness/MetricsCheck.ts"
import { EffectivenessConfig, type EffectivenessSettings } from "../src/effectiveness/EffectivenessConfig.ts"
import { EffectivenessMetrics } from "../src/effectiveness/EffectivenessMetrics.ts"
import { EffectivenessReconciler } from "../src/effectiveness/Reconciler.ts"
import { AgentRestClient } from "../src/clients/AgentRestClient.ts"
import { AnalysisReconciler } from "../src/analysis/AnalysisReconciler.ts"
import { type LifecycleAudit, RecordedAudit } from "../src/remediation/LifecycleAudit.ts"
import { LifecycleConfig, type LifecycleOverrides } from "../src/remediation/LifecycleConfig.ts"
import { LifecycleMetrics } from "../src/remediation/LifecycleMetrics.ts"
import { OrchestratorReconciler } from "../src/orchestrator/OrchestratorReconciler.ts"
import { PlatformSettings } from "../src/remediation/PlatformSettings.ts"
import { ManagedTargets, type NamespaceLabels } from "../src/remediation/Targets.ts"
import { type DevOpa, make as makeOpa } from "@kubemend/devkit/Opa"
import { defaultPolicies } from "../src/policy/Defaults.ts"
import { OpaClient } from "../src/clients/OpaClient.ts"
import { PolicyEngine } from "../src/remediation/PolicyEngine.ts"
import { policyModules } from "../src/policy/PolicySync.ts"
import { SignalProcessingReconciler } from "../src/signalprocessing/SignalProcessingReconciler.ts"
import { type FakeAgent, fakeAgentToken, startFakeAgent } from "./FakeAgent.ts"

/** The dev policy engine loaded as the operator loads OPA: each module under its id (default: the shipped policies). */
export const policyEngine = (texts: Record<(typeof policyModules)[number]["key"], string> = defaultPolicies) =>
  makeOpa({ policies: Object.fromEntries(policyModules.map((m) => [m.id, texts[m.key]])) })

export const apiGroup = "kubemend.io"
export const namespace = "kubemend-system"
export const workloads = "shop"

export const managedNamespace = (name = workloads, managed = true): KubeObject => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name, labels: managed ? { [`${apiGroup}/managed`]: "true" } : {} }
})

export const rr = (
  name: string,
  over: {
    fingerprint?: string
    target?: string
    targetNamespace?: string
    labels?: Record<string, string>
    annotations?: Record<string, string>
    status?: Record<string, unknown>
  } = {}
): KubeObject => ({
  apiVersion: `${apiGroup}/v1alpha1`,
  kind: "RemediationRequest",
  metadata: {
    name,
    namespace,
    ...(over.labels === undefined ? {} : { labels: over.labels }),
    ...(over.annotations === undefined ? {} : { annotations: over.annotations })
  },
  spec: {
    signalName: "KubePodCrashLooping",
    signalFingerprint: over.fingerprint ?? "a".repeat(64),
    severity: "critical",
    signalType: "alert",
    signalSource: "prometheus",
    targetType: "kubernetes",
    targetResource: { apiVersion: "apps/v1", kind: "Deployment", name: over.target ?? "checkout", namespace: over.targetNamespace ?? workloads }
  },
  ...(over.status === undefined ? {} : { status: over.status })
})

export interface Harness {
  readonly k8s: K8sService
  readonly agent: FakeAgent
  /** The policy engine (devkit OPA) loaded with `policy.rego` and `approval.rego`. */
  readonly opa: DevOpa
  readonly reconcileRr: (name: string) => Effect.Effect<unknown, unknown>
  readonly reconcileAnalysis: (name: string) => Effect.Effect<unknown, unknown>
  readonly reconcileSignalProcessing: (name: string) => Effect.Effect<unknown, unknown>
  readonly reconcileAssessment: (name: string) => Effect.Effect<unknown, unknown>
  /** Reconciles everything until nothing changes. */
  readonly settle: Effect.Effect<void, unknown>
  readonly rr: (name: string) => Effect.Effect<Record<string, any>, unknown>
  readonly get: (plural: Parameters<K8sService["getCr"]>[0], name: string) => Effect.Effect<Option.Option<Record<string, any>>, unknown>
  readonly audit: Effect.Effect<ReadonlyArray<AuditEventRequest>>
  readonly metrics: Effect.Effect<string>
  /** The in-memory layer's control handle (faults, actions); undefined on another backend. */
  readonly memory: K8sMemoryControl | undefined
  /** Creates or overwrites objects (status kept), as a test fixture. */
  readonly seed: (objects: ReadonlyArray<KubeObject>) => Effect.Effect<void>
  /** Runs `effect` with the harness' services (K8s, config, audit …). */
  readonly run: <A, E>(effect: Effect.Effect<A, E, K8s | LifecycleConfig | LifecycleAudit>) => Effect.Effect<A, E>
}

export interface HarnessOptions {
  readonly config?: LifecycleOverrides
  readonly seed?: ReadonlyArray<KubeObject>
  /** The storage service (none by default): with it the orchestrator resolves workflow overrides in its catalog. */
  readonly storage?: Layer.Layer<Storage>
  /** The effectiveness monitor's settings (no metrics backend by default: the alert component is not assessed). */
  readonly effectiveness?: Partial<EffectivenessSettings>
  /**
   * `settle` runs every WorkflowExecution (Running at once, Completed after 5 s of Clock time), playing the execution
   * controller (default true); the controller itself is tested against the dev API server in Execution*.test.ts.
   */
  readonly completeExecutions?: boolean
  /** policy.rego / approval.rego texts; default the shipped ones. */
  readonly policies?: Partial<Record<"policy.rego" | "approval.rego", string>>
  /** The K8s layer and how to count writes and read namespace labels; default in memory. */
  readonly backend?: {
    readonly k8s: Layer.Layer<K8s>
    readonly writes: Effect.Effect<number>
    readonly namespaceLabels: NamespaceLabels
    readonly seed: (objects: ReadonlyArray<KubeObject>) => Effect.Effect<void>
  }
}

const memoryWrites = Effect.flatMap(
  K8sMemory,
  (m) => Effect.map(Ref.get(m.actions), (as) => as.filter((a) => a.verb !== "get" && a.verb !== "list" && a.verb !== "watch").length)
)

const memoryNamespaces = (memory: Context.Context<K8sMemory>): NamespaceLabels => (name) =>
  Effect.map(
    Context.get(memory, K8sMemory).objects("v1", "Namespace"),
    (ns) => Option.fromNullable(ns.find((n) => n.metadata.name === name)?.metadata.labels ?? (ns.some((n) => n.metadata.name === name) ? {} : undefined))
  )

export const harness = (options: HarnessOptions = {}): Effect.Effect<Harness, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const agent = yield* startFakeAgent
    const texts = { ...defaultPolicies, ...options.policies }
    const opa = yield* policyEngine(texts)
    let k8sLayer: Layer.Layer<K8s>
    let writes: Effect.Effect<number>
    let namespaceLabels: NamespaceLabels
    let seed: (objects: ReadonlyArray<KubeObject>) => Effect.Effect<void>
    let control: K8sMemoryControl | undefined
    if (options.backend === undefined) {
      const memory = yield* Layer.build(K8sMemory.layer({ namespace, apiGroup, seed: [managedNamespace(), ...(options.seed ?? [])] }))
      k8sLayer = Layer.succeedContext(memory)
      writes = Effect.provide(memoryWrites, memory)
      namespaceLabels = memoryNamespaces(memory)
      control = Context.get(memory, K8sMemory)
      seed = (objects) => Effect.asVoid(Context.get(memory, K8sMemory).seed(objects))
    } else {
      seed = options.backend.seed
      k8sLayer = options.backend.k8s
      writes = options.backend.writes
      namespaceLabels = options.backend.namespaceLabels
    }
    const config = LifecycleConfig.layer({
      agentUrl: agent.url,
      agentToken: Option.some(Redacted.make(fakeAgentToken)),
      ...options.config,
      policy: { url: opa.url, ...options.config?.policy }
    })
    const base = Layer.mergeAll(
      k8sLayer,
      config,
      EffectivenessConfig.layer(options.effectiveness),
      RecordedAudit.layer,
      options.storage ?? Layer.empty,
      Layer.merge(LifecycleMetrics.Default, EffectivenessMetrics.Default).pipe(Layer.provideMerge(Metrics.Default))
    )
    const services = Layer.mergeAll(
      ManagedTargets.layerWith(namespaceLabels),
      AgentRestClient.layer,
      PlatformSettings.Default,
      PolicyEngine.layer.pipe(Layer.provide(OpaClient.layer))
    ).pipe(Layer.provideMerge(base))
    const context = yield* Layer.build(
      Layer.mergeAll(
        OrchestratorReconciler.Default,
        AnalysisReconciler.Default,
        SignalProcessingReconciler.Default,
        EffectivenessReconciler.Default.pipe(Layer.provide(Layer.merge(AlertCheck.layer, MetricsCheck.layer)))
      ).pipe(Layer.provideMerge(services))
    )
    const k8s = Context.get(context, K8s)
    const orchestrator = Context.get(context, OrchestratorReconciler)
    const analysis = Context.get(context, AnalysisReconciler)
    const signalProcessing = Context.get(context, SignalProcessingReconciler)
    const effectiveness = Context.get(context, EffectivenessReconciler)
    const key = (name: string) => `${namespace}/${name}`
    const names = (plural: Parameters<K8sService["listCr"]>[0]) => Effect.map(k8s.listCr(plural), (l) => l.items.map((o) => o.metadata.name))

    // Quiet: the controllers log every transition; tests read the objects instead.
    const quiet = <A, E>(e: Effect.Effect<A, E>) => Logger.withMinimumLogLevel(e, LogLevel.Warning)

    const settle = Effect.gen(function* () {
      for (let pass = 0; pass < 60; pass++) {
        const before = yield* writes
        for (const n of yield* names("remediationrequests")) yield* orchestrator.reconcile(key(n))
        for (const n of yield* names("signalprocessings")) yield* signalProcessing.reconcile(key(n))
        for (const n of yield* names("aianalyses")) yield* analysis.reconcile(key(n))
        for (const n of yield* names("effectivenessassessments")) yield* effectiveness.reconcile(key(n))
        if (options.completeExecutions !== false) {
          // Running on first sight, Completed once 5 seconds (Clock time) have passed.
          for (const we of (yield* k8s.listCr("workflowexecutions")).items) {
            const status = (we.status ?? {}) as { phase?: string; startTime?: string }
            if (status.phase === "Completed" || status.phase === "Failed") continue
            const now = yield* Clock.currentTimeMillis
            const at = new Date(now).toISOString()
            if (status.startTime === undefined) {
              yield* k8s.patchCrStatus("workflowexecutions", we.metadata.name, {
                phase: "Running",
                startTime: at,
                executionEngine: "job",
                executionRef: { name: we.metadata.name }
              })
            } else if (now - Date.parse(status.startTime) >= 5_000) {
              yield* k8s.patchCrStatus("workflowexecutions", we.metadata.name, { phase: "Completed", completionTime: at })
            }
          }
        }
        if ((yield* writes) === before) return
      }
      return yield* Effect.fail(new Error("the lifecycle did not settle in 60 passes"))
    }).pipe(quiet)

    const get = (plural: Parameters<K8sService["getCr"]>[0], name: string) =>
      k8s.getCr(plural, name).pipe(
        Effect.map((o) => Option.some(o as Record<string, any>)),
        Effect.catchTag("K8sNotFound", () => Effect.succeed(Option.none<Record<string, any>>()))
      )

    return {
      k8s,
      agent,
      opa,
      reconcileRr: (n) => quiet(orchestrator.reconcile(key(n))),
      reconcileAnalysis: (n) => quiet(analysis.reconcile(key(n))),
      reconcileSignalProcessing: (n) => quiet(signalProcessing.reconcile(key(n))),
      reconcileAssessment: (n) => quiet(effectiveness.reconcile(key(n))),
      settle,
      rr: (n) => Effect.map(k8s.getCr("remediationrequests", n), (o) => o as Record<string, any>),
      get,
      audit: Context.get(context, RecordedAudit).events,
      metrics: Effect.map(Context.get(context, Metrics).render(undefined), (r) => r.body),
      memory: control,
      seed,
      run: (effect) => quiet(Effect.provide(effect, context))
    }
  })

/** The value of one sample line of the metrics text, 0 when absent. */
export const sample = (text: string, name: string, labels: Record<string, string>): number => {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)))
  return line === undefined ? 0 : Number(line.split(" ").pop())
}

/**
 * A Deployment and its pods as the API server would report them: `ready` pods Ready, the rest crash-looping
 * (CrashLoopBackOff with restarts). The world the effectiveness monitor reads when no real remediation runs.
 */
export const workload = (
  name: string,
  options: { readonly namespace?: string; readonly replicas?: number; readonly ready?: number; readonly image?: string } = {}
): ReadonlyArray<KubeObject> => {
  const ns = options.namespace ?? workloads
  const replicas = options.replicas ?? 1
  const ready = options.ready ?? replicas
  const labels = { app: name }
  const pods = Array.from({ length: replicas }, (_, i): KubeObject => {
    const healthy = i < ready
    return {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: `${name}-${i}`, namespace: ns, labels, creationTimestamp: "1970-01-01T00:00:00Z" },
      spec: { containers: [{ name: "app", image: options.image ?? "shop/app:1" }] },
      status: {
        phase: "Running",
        conditions: [{ type: "Ready", status: healthy ? "True" : "False" }],
        containerStatuses: [{
          name: "app",
          ready: healthy,
          restartCount: healthy ? 0 : 7,
          state: healthy ? { running: { startedAt: "1970-01-01T00:00:00Z" } } : { waiting: { reason: "CrashLoopBackOff" } }
        }]
      }
    }
  })
  return [
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name, namespace: ns, labels },
      spec: {
        replicas,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: "app", image: options.image ?? "shop/app:1" }] } }
      },
      status: { replicas, readyReplicas: ready }
    },
    ...pods
  ]
}
