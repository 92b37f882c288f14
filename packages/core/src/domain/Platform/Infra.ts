/**
 * Platform CR blocks for what the platform runs on: images, PostgreSQL, Valkey, monitoring, network policies, high
 * availability and the optional Ansible automation backend.
 */
import { Schema } from "effect"
import { Enum, Int, NonEmpty, optional, StringMap, withBlockDefault, withDefault } from "../Common.ts"
import { secretKeyRef } from "./Shared.ts"

const Port = Int.pipe(Schema.between(1, 65535, { message: () => "must be a port between 1 and 65535" }))

export const Image = Schema.Struct({
  pullPolicy: withDefault(Enum("Always", "IfNotPresent", "Never"), "IfNotPresent"),
  pullSecrets: optional(Schema.Array(Schema.Struct({ name: NonEmpty }))),
  /** Image per component name, replacing the release default. */
  overrides: optional(StringMap)
})

/** TLS modes of the database connection; `disable` is rejected (connections are always encrypted). */
export const SslMode = Schema.Literal("require", "verify-ca", "verify-full").annotations({
  message: (issue) => ({
    message: "actual" in issue && issue.actual === "disable"
      ? "sslMode \"disable\" is not allowed: use require, verify-ca or verify-full"
      : "must be one of require, verify-ca, verify-full",
    override: true
  })
})

/** PostgreSQL connection; the Secret holds `username`, `password`, `database`. */
export const PostgreSQL = Schema.Struct({
  host: NonEmpty,
  port: withDefault(Port, 5432),
  secretName: NonEmpty,
  sslMode: optional(SslMode)
})

/** Valkey (cache) connection; the Secret holds `password`. */
export const Valkey = Schema.Struct({
  host: NonEmpty,
  port: withDefault(Port, 6379),
  secretName: NonEmpty,
  tls: optional(
    Schema.Struct({
      enabled: Schema.Boolean,
      caSecretName: optional(Schema.String),
      clientCertSecretName: optional(Schema.String)
    })
  )
})

/** Monitoring integration; when enabled the metrics and alert-manager URLs are derived unless given. */
export const Monitoring = Schema.Struct({
  enabled: withDefault(Schema.Boolean, true),
  metricsURL: optional(Schema.String),
  alertManagerURL: optional(Schema.String)
})

/** Default-deny ingress policies for the platform namespace. */
export const NetworkPolicies = Schema.Struct({
  enabled: withDefault(Schema.Boolean, false),
  apiServerCIDR: optional(Schema.String),
  monitoringNamespace: optional(Schema.String),
  gatewayIngressNamespaces: optional(Schema.Array(Schema.String))
})

/** Ansible automation backend for workflows with the `ansible` engine; `apiURL` is required when enabled. */
export const Ansible = Schema.Struct({
  enabled: withDefault(Schema.Boolean, false),
  apiURL: optional(NonEmpty),
  organizationID: withDefault(Int.pipe(Schema.greaterThanOrEqualTo(1, { message: () => "must be at least 1" })), 1),
  tokenSecretRef: optional(secretKeyRef("token")),
  caCertSecretRef: optional(secretKeyRef("ca.crt"))
}).pipe(
  Schema.filter((a) =>
    !a.enabled || a.apiURL !== undefined || {
      path: ["apiURL"],
      message: "is required when ansible.enabled is true"
    }
  )
)

const Replicas = Int.pipe(Schema.between(1, 50, { message: () => "must be between 1 and 50" }))

/**
 * How many pods of each service run and how they survive node loss (not in the original's CRD, which renders one
 * of each). Keys name the CR's blocks: `apiFrontend` (MCP/A2A gateway), `agent`, `dataStorage`, `gateway` (signal
 * ingestion), `console`. The operator's own replicas (leader + standby) are in deploy/operator/operator.yaml.
 */
export const HighAvailability = Schema.Struct({
  replicas: withBlockDefault(Schema.Struct({
    apiFrontend: withDefault(Replicas, 2),
    agent: withDefault(Replicas, 2),
    dataStorage: withDefault(Replicas, 2),
    gateway: withDefault(Replicas, 2),
    console: withDefault(Replicas, 2)
  })),
  /** A PodDisruptionBudget (maxUnavailable 1) for every service with more than one replica. */
  podDisruptionBudgets: withDefault(Schema.Boolean, true),
  /** Each service's pods spread over `topologyKey`: preferred (ScheduleAnyway) or required (DoNotSchedule). */
  topologySpread: withBlockDefault(Schema.Struct({
    enabled: withDefault(Schema.Boolean, true),
    topologyKey: withDefault(NonEmpty, "kubernetes.io/hostname"),
    whenUnsatisfiable: withDefault(Enum("ScheduleAnyway", "DoNotSchedule"), "ScheduleAnyway")
  })),
  /** HorizontalPodAutoscalers on CPU between the service's replicas and `maxReplicas`; off by default. */
  autoscaling: withBlockDefault(Schema.Struct({
    enabled: withDefault(Schema.Boolean, false),
    maxReplicas: withDefault(Replicas, 6),
    targetCPUUtilizationPercentage: withDefault(Int.pipe(Schema.between(1, 100, { message: () => "must be between 1 and 100" })), 75)
  }))
})
