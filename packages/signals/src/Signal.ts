/**
 * A signal as the service handles it, whatever sent it: an Alertmanager alert or a Kubernetes event, before and
 * after its target is resolved. Its fingerprint is core's `signalFingerprint` over the signal name and the resolved
 * target, so every pod of one Deployment alerting the same thing is one remediation.
 */
import { classifySeverity, type Severity } from "@kubemend/core/domain/Severity"

export type SourceType = "prometheus" | "kubernetes-event"

/** Where the signal points before the owner chain is walked (alert labels or the event's involved object). */
export interface RawTarget {
  readonly kind: string
  readonly name: string
  readonly namespace?: string
  readonly apiVersion?: string
}

export interface Target {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly namespace?: string
}

export interface Signal {
  readonly source: SourceType
  readonly name: string
  readonly severity: Severity
  /** `firing` signals can make requests; `resolved` ones are only recorded. */
  readonly status: "firing" | "resolved"
  readonly firingTime: string
  readonly labels: Readonly<Record<string, string>>
  readonly annotations: Readonly<Record<string, string>>
  /** The target named by the signal, or why there is none. */
  readonly target: RawTarget | { readonly unresolvable: string }
  /** Source-specific data (`providerData`, JSON). */
  readonly providerData: Readonly<Record<string, unknown>>
  /** The signal as it came (`originalPayload`). */
  readonly original: unknown
}

/** Severity from a label value: the 4-level model, `medium`/`low` as aliases, anything else `unknown`. */
export const severityOf = (raw: string | undefined): Severity => classifySeverity(raw)

/** `signalType` on the request per source (the original's values). */
export const signalType = (source: SourceType) => (source === "prometheus" ? "alert" : "kubernetes-event")
/** `signalSource` on the request per source. */
export const signalSource = (source: SourceType) => (source === "prometheus" ? "prometheus" : "kubernetes")
