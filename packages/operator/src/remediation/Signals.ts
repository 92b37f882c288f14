/**
 * The local platform's signal stream (enabled by `lifecycle.signals.enabled`): plays the signal gateway, creating a
 * new RemediationRequest every `interval` from a fixed rotation of alerts on the demo workloads, so a person
 * connected over MCP sees remediations move. The rotation has a duplicate of the previous signal (same
 * fingerprint: `DuplicateInProgress`) and one target outside the managed namespace (`UnmanagedResource`). Each signal is
 * audited as `gateway.signal.received`, the event storage starts an RR's reconstruction from.
 */
import { whenLeading } from "@kubemend/core/LeaderElection"
import { K8s } from "@kubemend/core/K8s"
import { Effect, Layer, Schedule } from "effect"
import { createHash } from "node:crypto"
import { LifecycleAudit } from "./LifecycleAudit.ts"
import { LifecycleConfig, type LifecycleSettings } from "./LifecycleConfig.ts"
import { iso, nowMillis } from "./Objects.ts"

export interface SignalTemplate {
  readonly slug: string
  readonly signalName: string
  readonly severity: "critical" | "high" | "warning" | "info"
  readonly kind: string
  readonly name: string
  readonly managed: boolean
  readonly description: string
}

/** One turn of the rotation; `null` repeats the previous signal (a duplicate). */
export const rotation: ReadonlyArray<SignalTemplate | null> = [
  {
    slug: "recommendations-crashloop",
    signalName: "KubePodCrashLooping",
    severity: "critical",
    kind: "Deployment",
    name: "recommendations",
    managed: true,
    description: "recommendations pods restart repeatedly (OOMKilled)"
  },
  {
    slug: "cart-latency",
    signalName: "HighLatencyP99",
    severity: "warning",
    kind: "Deployment",
    name: "cart",
    managed: true,
    description: "cart p99 latency above 2s for 10 minutes"
  },
  null,
  {
    slug: "search-replicas",
    signalName: "KubeDeploymentReplicasMismatch",
    severity: "high",
    kind: "Deployment",
    name: "search",
    managed: true,
    description: "search has 1 of 3 replicas available"
  },
  {
    slug: "reports-failing",
    signalName: "KubeJobFailed",
    severity: "warning",
    kind: "CronJob",
    name: "report-generator",
    managed: false,
    description: "nightly report job failed 3 times"
  },
  {
    slug: "payments-disk",
    signalName: "PersistentVolumeFillingUp",
    severity: "high",
    kind: "StatefulSet",
    name: "payments-db",
    managed: true,
    description: "payments-db volume 92% full"
  }
]

const fingerprint = (t: SignalTemplate, namespace: string) => createHash("sha256").update(`${t.signalName}/${namespace}/${t.kind}/${t.name}`).digest("hex")

/** The template of the `n`-th signal (0-based) and whether it is a duplicate. */
export const signalAt = (n: number): { readonly template: SignalTemplate; readonly duplicate: boolean } => {
  const i = n % rotation.length
  const t = rotation[i]
  if (t !== null && t !== undefined) return { template: t, duplicate: false }
  return { template: rotation[(i + rotation.length - 1) % rotation.length]!, duplicate: true }
}

/** The RR of the `n`-th signal at `now`. */
export const signalRr = (n: number, now: number, apiGroup: string, s: LifecycleSettings["signals"]) => {
  const { duplicate, template: t } = signalAt(n)
  const namespace = t.managed ? s.namespace : s.unmanagedNamespace
  const at = iso(now)
  return {
    metadata: {
      name: `sig-${t.slug}-${Math.floor(now / 1000).toString(36)}-${n}`,
      labels: { [`${apiGroup}/signal`]: t.signalName, [`${apiGroup}/source`]: "signal-stream" }
    },
    spec: {
      signalName: t.signalName,
      signalFingerprint: fingerprint(t, namespace),
      severity: t.severity,
      signalType: "alert",
      signalSource: "prometheus",
      targetType: "kubernetes",
      targetResource: { apiVersion: t.kind === "CronJob" ? "batch/v1" : "apps/v1", kind: t.kind, name: t.name, namespace },
      firingTime: at,
      receivedTime: at,
      signalLabels: { alertname: t.signalName, namespace, severity: t.severity, environment: "production" },
      signalAnnotations: { description: t.description, ...(duplicate ? { note: "repeated alert" } : {}) },
      description: t.description
    }
  }
}

/** Creates the `n`-th signal's RR and audits it (failures are logged: the stream goes on). */
export const emitSignal = (n: number) =>
  Effect.gen(function* () {
    const k8s = yield* K8s
    const config = yield* LifecycleConfig
    const audit = yield* LifecycleAudit
    const rr = signalRr(n, yield* nowMillis, k8s.apiGroup, config.signals)
    yield* k8s.createCr("remediationrequests", rr)
    const target = rr.spec.targetResource
    yield* audit.emit({
      type: "gateway.signal.received",
      category: "gateway",
      correlationId: rr.metadata.name,
      namespace: target.namespace,
      actor: { type: "service", id: "signal-stream" },
      resource: { type: "RemediationRequest", id: rr.metadata.name },
      data: {
        rr_name: rr.metadata.name,
        rr_namespace: k8s.namespace,
        remediation_request: `${k8s.namespace}/${rr.metadata.name}`,
        signal_name: rr.spec.signalName,
        fingerprint: rr.spec.signalFingerprint,
        signal_type: rr.spec.signalType,
        signal_source: rr.spec.signalSource,
        severity: rr.spec.severity,
        resource_kind: target.kind,
        resource_name: target.name,
        namespace: target.namespace,
        signal_labels: rr.spec.signalLabels,
        signal_annotations: rr.spec.signalAnnotations,
        original_payload: JSON.stringify({ labels: rr.spec.signalLabels, annotations: rr.spec.signalAnnotations, startsAt: rr.spec.firingTime })
      }
    })
    yield* Effect.logInfo(`signal stream: ${rr.spec.signalName} on ${target.namespace}/${target.kind}/${target.name} -> ${rr.metadata.name}`)
  }).pipe(Effect.catchAll((e) => Effect.logWarning("signal stream: could not create a remediation request", e)))

/** The stream, bounded by `maxSignals`; the first signal comes at once. */
export const runSignals = Effect.gen(function* () {
  const config = yield* LifecycleConfig
  const max = config.signals.maxSignals
  if (max <= 0) return
  let n = 0
  yield* Effect.suspend(() => emitSignal(n++)).pipe(
    Effect.repeat(Schedule.spaced(config.signals.interval).pipe(Schedule.intersect(Schedule.recurs(max - 1))))
  )
})

/** The stream as a layer: runs while the layer is alive, when enabled. */
export const SignalsLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* LifecycleConfig
    if (config.signals.enabled) yield* whenLeading(Effect.asVoid(Effect.forkScoped(runSignals)))
  })
)
