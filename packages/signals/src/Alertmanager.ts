/**
 * The Alertmanager webhook (`version: "4"`, as Alertmanager documents its webhook_config payload): one POST per
 * notification group, `alerts[]` each with `status`, `labels`, `annotations`, `startsAt`, `endsAt`, `generatorURL`
 * and `fingerprint`. Firing alerts become signals; resolved ones are recorded only.
 */
import { ValidationError } from "@kubemend/core/Errors"
import { Effect, Schema } from "effect"
import { decodeBody } from "./Decode.ts"
import { type RawTarget, type Signal, severityOf } from "./Signal.ts"

const Labels = Schema.Record({ key: Schema.String, value: Schema.String })
const NonEmpty = Schema.String.pipe(Schema.minLength(1, { message: () => "must not be empty" }))

export const Alert = Schema.Struct({
  status: Schema.Literal("firing", "resolved"),
  labels: Schema.Struct({ alertname: NonEmpty }, Schema.Record({ key: Schema.String, value: Schema.String })),
  annotations: Schema.optionalWith(Labels, { default: () => ({}) }),
  startsAt: Schema.String,
  endsAt: Schema.optional(Schema.String),
  generatorURL: Schema.optional(Schema.String),
  fingerprint: Schema.optional(Schema.String)
})
export interface Alert extends Schema.Schema.Type<typeof Alert> {}

export const Webhook = Schema.Struct({
  version: Schema.String,
  status: Schema.Literal("firing", "resolved"),
  receiver: Schema.optional(Schema.String),
  groupKey: Schema.optional(Schema.String),
  truncatedAlerts: Schema.optional(Schema.Number),
  groupLabels: Schema.optional(Labels),
  commonLabels: Schema.optional(Labels),
  commonAnnotations: Schema.optional(Labels),
  externalURL: Schema.optional(Schema.String),
  alerts: Schema.Array(Alert).pipe(Schema.minItems(1, { message: () => "must hold at least one alert" }))
})
export interface Webhook extends Schema.Schema.Type<typeof Webhook> {}

const decodeWebhook = decodeBody(Webhook)

/** The version is checked first so a future payload gets "unsupported version", not a confusing shape error. */
export const decodeAlertmanager = (u: unknown) =>
  Effect.gen(function* () {
    const version = typeof u === "object" && u !== null ? (u as Record<string, unknown>)["version"] : undefined
    if (version === undefined) return yield* new ValidationError({ field: "version", detail: "is required" })
    if (version !== "4") {
      return yield* new ValidationError({ field: "version", detail: `unsupported Alertmanager webhook version ${JSON.stringify(version)}; expected "4"` })
    }
    return yield* decodeWebhook(u)
  })

/** Label -> kind, most specific first: a pod is walked up its owner chain, a node stands alone. */
const targetLabels: ReadonlyArray<readonly [string, string, string]> = [
  ["pod", "Pod", "v1"],
  ["deployment", "Deployment", "apps/v1"],
  ["statefulset", "StatefulSet", "apps/v1"],
  ["daemonset", "DaemonSet", "apps/v1"],
  ["replicaset", "ReplicaSet", "apps/v1"],
  ["job_name", "Job", "batch/v1"],
  ["cronjob", "CronJob", "batch/v1"],
  ["persistentvolumeclaim", "PersistentVolumeClaim", "v1"],
  ["horizontalpodautoscaler", "HorizontalPodAutoscaler", "autoscaling/v2"],
  ["service", "Service", "v1"]
]

/** The target an alert's labels name (kube-state-metrics and kube-prometheus conventions). */
export const alertTarget = (labels: Readonly<Record<string, string>>): RawTarget | { readonly unresolvable: string } => {
  const namespace = labels["namespace"]
  if (namespace !== undefined && namespace !== "") {
    for (const [label, kind, apiVersion] of targetLabels) {
      const name = labels[label]
      if (name !== undefined && name !== "") return { kind, name, namespace, apiVersion }
    }
  }
  const node = labels["node"] ?? labels["instance_node"]
  if (node !== undefined && node !== "") return { kind: "Node", name: node, apiVersion: "v1" }
  return {
    unresolvable: namespace === undefined || namespace === ""
      ? "no_namespace"
      : "no_target_label"
  }
}

/** One signal per alert of the group; group-level labels fill what an alert lacks, as Alertmanager defines them. */
export const alertSignals = (webhook: Webhook): ReadonlyArray<Signal> =>
  webhook.alerts.map((alert) => {
    const labels = { ...webhook.commonLabels, ...alert.labels }
    const annotations = { ...webhook.commonAnnotations, ...alert.annotations }
    return {
      source: "prometheus",
      name: alert.labels.alertname,
      severity: severityOf(labels["severity"]),
      status: alert.status,
      firingTime: alert.startsAt,
      labels,
      annotations,
      target: alertTarget(labels),
      providerData: {
        ...(alert.fingerprint === undefined ? {} : { alertmanagerFingerprint: alert.fingerprint }),
        ...(alert.generatorURL === undefined ? {} : { generatorURL: alert.generatorURL }),
        ...(alert.endsAt === undefined ? {} : { endsAt: alert.endsAt }),
        ...(webhook.receiver === undefined ? {} : { receiver: webhook.receiver }),
        ...(webhook.groupKey === undefined ? {} : { groupKey: webhook.groupKey }),
        ...(webhook.externalURL === undefined ? {} : { externalURL: webhook.externalURL })
      },
      original: alert
    } satisfies Signal
  })
