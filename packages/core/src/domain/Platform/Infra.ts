/**
 * Platform CR blocks for what the platform runs on: images, PostgreSQL, Valkey, monitoring, network policies and
 * the optional Ansible automation backend.
 */
import { Schema } from "effect"
import { Enum, Int, NonEmpty, optional, StringMap, withDefault } from "../Common.ts"
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
    message:
      "actual" in issue && issue.actual === "disable"
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
  Schema.filter((a) => !a.enabled || a.apiURL !== undefined || {
    path: ["apiURL"],
    message: "is required when ansible.enabled is true"
  })
)
