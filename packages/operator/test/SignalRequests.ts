/**
 * Remediation requests as the signal service creates them from the demo's alert rotation (`@kubemend/local`'s
 * signal generator): the RR straight through K8s, and the `gateway.signal.received` event storage starts an RR's
 * reconstruction from. The rotation has a duplicate of the previous alert and one unmanaged target.
 */
import { K8s } from "@kubemend/core/K8s"
import { signalAt } from "@kubemend/local/SignalGenerator"
import { Clock, type Duration, Effect, Schedule } from "effect"
import { createHash } from "node:crypto"
import { LifecycleAudit } from "../src/remediation/LifecycleAudit.ts"

export interface SignalNamespaces {
  /** Namespace of the managed demo workloads. */
  readonly namespace: string
  /** Namespace without the managed label. */
  readonly unmanagedNamespace?: string
}

/** The RR of the `n`-th alert of the rotation at `now`. */
const signalRr = (n: number, now: number, apiGroup: string, s: SignalNamespaces) => {
  const { duplicate, template: t } = signalAt(n)
  const namespace = t.managed ? s.namespace : s.unmanagedNamespace ?? "legacy-batch"
  const at = new Date(now).toISOString()
  return {
    metadata: {
      name: `sig-${t.slug}-${Math.floor(now / 1000).toString(36)}-${n}`,
      labels: { [`${apiGroup}/signal`]: t.signalName, [`${apiGroup}/source`]: "signal-stream" }
    },
    spec: {
      signalName: t.signalName,
      signalFingerprint: createHash("sha256").update(`${t.signalName}/${namespace}/${t.kind}/${t.name}`).digest("hex"),
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

/** Creates the `n`-th alert's RR and audits it as received. */
export const createSignalRr = (n: number, s: SignalNamespaces) =>
  Effect.gen(function* () {
    const k8s = yield* K8s
    const audit = yield* LifecycleAudit
    const rr = signalRr(n, yield* Clock.currentTimeMillis, k8s.apiGroup, s)
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
  })

/** `count` alerts, the first at once, then one per `interval`. */
export const signalStream = (count: number, interval: Duration.DurationInput, s: SignalNamespaces) =>
  Effect.gen(function* () {
    let n = 0
    yield* Effect.suspend(() => createSignalRr(n++, s)).pipe(
      Effect.repeat(Schedule.spaced(interval).pipe(Schedule.intersect(Schedule.recurs(count - 1))))
    )
  })
