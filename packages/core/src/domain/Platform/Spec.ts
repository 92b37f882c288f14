/**
 * The platform custom resource (kind `Kubemend`, `{api_group}/v1alpha1`, one per namespace), spec document 3.
 *
 * Defaults are `withDefault` / `withBlockDefault` property signatures: decoding fills them (the operator always
 * sees a complete spec) and they appear as JSON Schema `default`s, so a CRD generated with `JSONSchema.make` gets
 * the same defaults the API server applies. Cross-field rules are filters; they are listed as CEL rules in
 * `Validate.ts` for the CRD (JSON Schema cannot carry them).
 */
import { Schema } from "effect"
import { Enum, Int, optional, withBlockDefault } from "../Common.ts"
import { Condition, resource } from "../Meta.ts"
import { Agent } from "./Agent.ts"
import { ApiFrontend, Console } from "./ApiFrontend.ts"
import {
  AIAnalysisConfig,
  AuthWebhook,
  DataStorage,
  EffectivenessMonitor,
  Notification,
  RemediationOrchestrator,
  SignalGateway,
  SignalProcessing,
  WorkflowExecutionConfig
} from "./Controllers.ts"
import { Ansible, HighAvailability, Image, Monitoring, NetworkPolicies, PostgreSQL, Valkey } from "./Infra.ts"

export const PlatformKind = "Kubemend"
export const PlatformPlural = "kubemends"

export const PlatformSpec = Schema.Struct({
  postgresql: PostgreSQL,
  valkey: Valkey,
  /** The investigation agent (`kubernautAgent` in the original; `decodePlatformSpec` accepts that key too). */
  agent: Agent,
  aiAnalysis: AIAnalysisConfig,
  signalProcessing: SignalProcessing,
  image: withBlockDefault(Image),
  ansible: withBlockDefault(Ansible),
  monitoring: withBlockDefault(Monitoring),
  notification: withBlockDefault(Notification),
  remediationOrchestrator: withBlockDefault(RemediationOrchestrator),
  workflowExecution: withBlockDefault(WorkflowExecutionConfig),
  effectivenessMonitor: withBlockDefault(EffectivenessMonitor),
  /** Signal ingestion service. */
  gateway: withBlockDefault(SignalGateway),
  /** External MCP / A2A gateway. */
  apiFrontend: withBlockDefault(ApiFrontend),
  authWebhook: withBlockDefault(AuthWebhook),
  dataStorage: withBlockDefault(DataStorage),
  console: withBlockDefault(Console),
  networkPolicies: withBlockDefault(NetworkPolicies),
  /** Replicas, disruption budgets, topology spread and autoscaling of the services. */
  highAvailability: withBlockDefault(HighAvailability)
})
/** The decoded spec: every default filled in. */
export interface PlatformSpec extends Schema.Schema.Type<typeof PlatformSpec> {}
/** The spec as written in the resource (defaults optional). */
export interface PlatformSpecEncoded extends Schema.Schema.Encoded<typeof PlatformSpec> {}

export const PlatformPhase = Enum("Validating", "Migrating", "Deploying", "Running", "Degraded", "Error")
export type PlatformPhase = typeof PlatformPhase.Type

/** Condition types the operator maintains. */
export const PlatformConditionTypes = [
  "BYOValidated",
  "MigrationComplete",
  "CRDsInstalled",
  "RBACProvisioned",
  "WebhooksConfigured",
  "ServicesDeployed",
  "RouteReady",
  "AnsibleReady",
  "AdditionalRBACBound",
  "ToolRBACBound",
  "AlertManagerAuthConfigured"
] as const
export type PlatformConditionType = (typeof PlatformConditionTypes)[number]

export const ServiceStatus = Schema.Struct({
  name: Schema.String,
  ready: Schema.Boolean,
  readyReplicas: Int,
  desiredReplicas: Int
})
export interface ServiceStatus extends Schema.Schema.Type<typeof ServiceStatus> {}

export const PlatformStatus = Schema.Struct({
  phase: optional(PlatformPhase),
  message: optional(Schema.String),
  observedGeneration: optional(Int),
  conditions: optional(Schema.Array(Condition)),
  services: optional(Schema.Array(ServiceStatus)),
  lastMigrationHash: optional(Schema.String),
  lastMigrationTime: optional(Schema.String),
  boundAdditionalClusterRoles: optional(Schema.Array(Schema.String)),
  boundToolRoleBindings: optional(Schema.Array(Schema.String))
})
export interface PlatformStatus extends Schema.Schema.Type<typeof PlatformStatus> {}

export const Platform = resource(PlatformKind, PlatformSpec, PlatformStatus)
export interface Platform extends Schema.Schema.Type<typeof Platform> {}
