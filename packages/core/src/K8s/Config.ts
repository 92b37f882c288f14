/**
 * Tunables shared by the live and in-memory K8s layers. Both run every call through the same deadline and retry
 * policy (K8s/Retry.ts) and the same informer (K8s/Watch.ts), so they behave alike under faults.
 */
import { Duration } from "effect"
import type { CrPlural } from "../K8s.ts"

export interface K8sSettings {
  /** Deadline of one API request; a request that has not answered by then fails as K8sUnavailable. */
  readonly requestTimeout: Duration.Duration
  /** Tries of an update answered 409 Conflict (client-go's default is 5). */
  readonly conflictTries: number
  /** First delay between conflict retries; doubles per try, with jitter. */
  readonly conflictBaseDelay: Duration.Duration
  /** Further tries after 429 Too Many Requests. */
  readonly throttleRetries: number
  /** Longest `Retry-After` honoured; a longer value is cut to this. */
  readonly maxRetryAfter: Duration.Duration
  /** First delay of the watch reconnect/relist backoff. */
  readonly watchBackoffBase: Duration.Duration
  /** Cap of the watch reconnect/relist backoff. */
  readonly watchBackoffMax: Duration.Duration
  /** Consecutive failed list/watch requests before a watch stream gives up with K8sUnavailable. */
  readonly watchMaxFailures: number
  /** Server-side timeout asked for each watch request; the stream then reconnects from the last resourceVersion. */
  readonly watchTimeout: Duration.Duration
  /** How long a discovery result is trusted before the REST mapper asks the server again. */
  readonly discoveryTTL: Duration.Duration
}

export const defaults: K8sSettings = {
  requestTimeout: Duration.seconds(10),
  conflictTries: 5,
  conflictBaseDelay: Duration.millis(10),
  throttleRetries: 3,
  maxRetryAfter: Duration.seconds(10),
  watchBackoffBase: Duration.millis(100),
  watchBackoffMax: Duration.seconds(5),
  watchMaxFailures: 10,
  watchTimeout: Duration.minutes(5),
  discoveryTTL: Duration.minutes(5)
}

/** Overrides of the settings; times accept any Duration input (`"10 seconds"`, `Duration.millis(10)`). */
export type K8sSettingsInput = {
  readonly [K in keyof K8sSettings]?: K8sSettings[K] extends Duration.Duration ? Duration.DurationInput : K8sSettings[K]
}

/** Options common to both layers. */
export interface K8sBaseOptions extends K8sSettingsInput {
  /** The controller namespace the platform CRs and leases live in. */
  readonly namespace: string
  /** The platform's API group (default `kubemend.io`); CRs are served at `{apiGroup}/v1alpha1`. */
  readonly apiGroup?: string
}

export const defaultApiGroup = "kubemend.io"
export const crVersion = "v1alpha1"

export const resolveSettings = (input: K8sSettingsInput): K8sSettings => {
  const d = (v: Duration.DurationInput | undefined, fallback: Duration.Duration) => v === undefined ? fallback : Duration.decode(v)
  return {
    requestTimeout: d(input.requestTimeout, defaults.requestTimeout),
    conflictTries: input.conflictTries ?? defaults.conflictTries,
    conflictBaseDelay: d(input.conflictBaseDelay, defaults.conflictBaseDelay),
    throttleRetries: input.throttleRetries ?? defaults.throttleRetries,
    maxRetryAfter: d(input.maxRetryAfter, defaults.maxRetryAfter),
    watchBackoffBase: d(input.watchBackoffBase, defaults.watchBackoffBase),
    watchBackoffMax: d(input.watchBackoffMax, defaults.watchBackoffMax),
    watchMaxFailures: input.watchMaxFailures ?? defaults.watchMaxFailures,
    watchTimeout: d(input.watchTimeout, defaults.watchTimeout),
    discoveryTTL: d(input.discoveryTTL, defaults.discoveryTTL)
  }
}

/** Kinds of the platform CRs, by plural. */
export const crKinds = {
  remediationrequests: "RemediationRequest",
  remediationapprovalrequests: "RemediationApprovalRequest",
  aianalyses: "AIAnalysis",
  signalprocessings: "SignalProcessing",
  workflowexecutions: "WorkflowExecution",
  investigationsessions: "InvestigationSession",
  effectivenessassessments: "EffectivenessAssessment",
  notificationrequests: "NotificationRequest",
  kubemends: "Kubemend"
} as const satisfies Record<CrPlural, string>
