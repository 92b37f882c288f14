/**
 * Platform CR blocks of the remediation pipeline services: signal processing, analysis, orchestrator (timeouts
 * and routing), workflow execution, signal ingestion, storage, notification, effectiveness monitor and webhook.
 * Defaults of blocks the spec shows without fields follow the original operator.
 */
import { Schema } from "effect"
import { GoDurationString, Int, Loose, NonEmpty, optional, withBlockDefault, withDefault } from "../Common.ts"
import { Logging, Route } from "./Shared.ts"

const ConfigMapRef = Schema.Struct({ configMapName: NonEmpty })
const common = { logging: withBlockDefault(Logging), resources: optional(Loose) }
const duration = (d: string) => withDefault(GoDurationString, d)
const count = (n: number) => withDefault(Int.pipe(Schema.positive()), n)

export const SignalProcessing = Schema.Struct({
  /** ConfigMap with key `policy.rego`. */
  policy: ConfigMapRef,
  proactiveSignalMappings: optional(ConfigMapRef),
  ...common
})

export const AIAnalysisConfig = Schema.Struct({
  /** ConfigMap with key `approval.rego`. */
  policy: ConfigMapRef,
  /** Minimum confidence for auto-approval (a decimal string, e.g. "0.8"). */
  confidenceThreshold: optional(Schema.String),
  ...common
})

export const OrchestratorTimeouts = Schema.Struct({
  global: duration("1h"),
  processing: duration("5m"),
  analyzing: duration("10m"),
  executing: duration("30m"),
  awaitingApproval: duration("15m"),
  verifying: duration("30m")
})

/** Routing engine tunables behind the block reasons. */
export const OrchestratorRouting = Schema.Struct({
  consecutiveFailureThreshold: count(3),
  consecutiveFailureCooldown: duration("1h"),
  recentlyRemediatedCooldown: duration("5m"),
  exponentialBackoffBase: duration("1m"),
  exponentialBackoffMax: duration("10m"),
  exponentialBackoffMaxExponent: count(4),
  ineffectiveChainThreshold: count(3),
  ineffectiveTimeWindow: duration("4h"),
  noActionRequiredDelayHours: count(24),
  recurrenceCountThreshold: count(5),
  scopeBackoffBase: duration("5s"),
  scopeBackoffMax: duration("5m")
})

export const RemediationOrchestrator = Schema.Struct({
  timeouts: withBlockDefault(OrchestratorTimeouts),
  routing: withBlockDefault(OrchestratorRouting),
  effectivenessAssessment: withBlockDefault(Schema.Struct({ stabilizationWindow: duration("5m") })),
  asyncPropagation: withBlockDefault(
    Schema.Struct({
      gitOpsSyncDelay: duration("3m"),
      operatorReconcileDelay: duration("1m"),
      proactiveAlertDelay: duration("5m")
    })
  ),
  /** Stop after analysis: no workflow execution, approval or assessment (outcome `DryRun`). */
  dryRun: withDefault(Schema.Boolean, false),
  dryRunHoldPeriod: duration("1h"),
  notifications: withBlockDefault(Schema.Struct({ notifySelfResolved: withDefault(Schema.Boolean, false) })),
  /** Terminal RRs are garbage-collected after this period. */
  retention: withBlockDefault(Schema.Struct({ period: duration("24h") })),
  ...common
})

export const WorkflowExecutionConfig = Schema.Struct({
  workflowNamespace: withDefault(NonEmpty, "kubemend-workflows"),
  cooldownPeriod: duration("1m"),
  tekton: optional(Schema.Struct({ enabled: optional(Schema.Boolean) })),
  ...common
})

/** The signal ingestion service (alerts and events in, RRs out); not the external gateway. */
export const SignalGateway = Schema.Struct({
  enabled: withDefault(Schema.Boolean, true),
  route: optional(Route),
  config: withBlockDefault(
    Schema.Struct({
      k8sRequestTimeout: duration("15s"),
      trustedProxyCIDRs: optional(Schema.Array(Schema.String)),
      corsAllowedOrigins: optional(Schema.Array(Schema.String)),
      deduplicationCooldown: duration("5m")
    })
  ),
  ...common
})

export const DataStorage = Schema.Struct({
  endpointPropagationDelay: duration("10s"),
  retention: withBlockDefault(
    Schema.Struct({
      enabled: optional(Schema.Boolean),
      interval: duration("24h"),
      batchSize: count(1000),
      defaultDays: withDefault(Int.pipe(Schema.between(1, 2555)), 2555)
    })
  ),
  ...common
})

export const Notification = Schema.Struct({
  routing: optional(ConfigMapRef),
  slack: optional(Schema.Struct({ channel: optional(Schema.String), secretName: optional(Schema.String) })),
  ...common
})

export const EffectivenessMonitor = Schema.Struct({
  assessment: withBlockDefault(
    Schema.Struct({ stabilizationWindow: duration("30s"), validityWindow: duration("300s") })
  ),
  ...common
})

export const AuthWebhook = Schema.Struct({ ...common })
