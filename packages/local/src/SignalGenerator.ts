/**
 * The demo's signal generator on `npm start`: every `interval` it posts the next alert of its rotation (below: a
 * duplicate of the previous alert, one target outside the managed namespace) to the signal service as Alertmanager
 * would — a `version: "4"` webhook with the `alertmanager` ServiceAccount's token — so each remediation enters the
 * way a real one does (target resolution, fingerprint, deduplication: the rotation's repeat answers 202).
 */
import { Duration, Effect, Schedule } from "effect"

export interface GeneratorOptions {
  readonly signalsUrl: string
  readonly token: string
  readonly managedNamespace: string
  readonly unmanagedNamespace: string
  readonly interval: Duration.Duration
  readonly maxSignals: number
}

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

/** The template of the `n`-th signal (0-based) and whether it is a duplicate. */
export const signalAt = (n: number): { readonly template: SignalTemplate; readonly duplicate: boolean } => {
  const i = n % rotation.length
  const t = rotation[i]
  if (t !== null && t !== undefined) return { template: t, duplicate: false }
  return { template: rotation[(i + rotation.length - 1) % rotation.length]!, duplicate: true }
}

const kindLabel: Readonly<Record<string, string>> = { Deployment: "deployment", StatefulSet: "statefulset", CronJob: "cronjob", DaemonSet: "daemonset" }

/** The webhook for one template, as Alertmanager sends it. */
export const alertPayload = (t: SignalTemplate, namespace: string, startsAt: string) => ({
  version: "4",
  groupKey: `{}:{alertname="${t.signalName}"}`,
  truncatedAlerts: 0,
  status: "firing",
  receiver: "kubemend",
  groupLabels: { alertname: t.signalName },
  commonLabels: { alertname: t.signalName, severity: t.severity },
  commonAnnotations: {},
  externalURL: "http://alertmanager.local:9093",
  alerts: [{
    status: "firing",
    labels: { alertname: t.signalName, severity: t.severity, namespace, [kindLabel[t.kind] ?? "deployment"]: t.name, environment: "production" },
    annotations: { summary: t.description, description: t.description },
    startsAt,
    endsAt: "0001-01-01T00:00:00Z",
    generatorURL: `http://prometheus.local:9090/graph?g0.expr=${encodeURIComponent(t.signalName)}`,
    fingerprint: t.slug
  }]
})

const post = (o: GeneratorOptions, n: number) =>
  Effect.tryPromise(async () => {
    const { template: t } = signalAt(n)
    const namespace = t.managed ? o.managedNamespace : o.unmanagedNamespace
    const res = await fetch(`${o.signalsUrl}/api/v1/signals/prometheus`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${o.token}` },
      body: JSON.stringify(alertPayload(t, namespace, new Date().toISOString()))
    })
    const body = (await res.json()) as { status?: string; detail?: string; remediationRequestRef?: { name: string } }
    if (res.status >= 400) throw new Error(`signal service answered ${res.status}: ${body.detail ?? ""}`)
    const name = body.remediationRequestRef?.name
    return `${t.signalName} on ${namespace}/${t.kind}/${t.name}: ${res.status} ${body.status ?? ""} ${name ?? ""}`
  }).pipe(
    Effect.flatMap((line) => Effect.logInfo(`signal generator: ${line}`)),
    Effect.catchAll((e) => Effect.logWarning("signal generator: the alert was not taken", e))
  )

/** Runs for the enclosing scope: the first alert at once, then one per interval, at most `maxSignals`. */
export const runSignalGenerator = (o: GeneratorOptions) =>
  Effect.gen(function* () {
    if (o.maxSignals <= 0 || rotation.length === 0) return
    let n = 0
    yield* Effect.suspend(() => post(o, n++)).pipe(
      Effect.repeat(Schedule.spaced(o.interval).pipe(Schedule.intersect(Schedule.recurs(o.maxSignals - 1)))),
      Effect.forkScoped
    )
  })
