/**
 * The RemediationRequest a new signal makes: every spec field of the original CRD (signalName, signalFingerprint,
 * severity, signalType, signalSource, targetType, targetResource, firingTime, receivedTime, signalLabels,
 * signalAnnotations, providerData, originalPayload). The payload is kept up to `maxPayloadBytes`; a longer one is cut
 * and `providerData.originalPayloadTruncated` says so.
 */
import type { KubeObject } from "@kubemend/core/K8s"
import { type Signal, signalSource, signalType, type Target } from "./Signal.ts"

export interface RequestOptions {
  readonly apiGroup: string
  readonly receivedAt: string
  readonly now: number
  readonly maxPayloadBytes: number
}

/** Label values: at most 63 characters of `[A-Za-z0-9._-]`, starting and ending alphanumeric. */
export const labelValue = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 63).replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "")

const cut = (text: string, max: number) => {
  const bytes = Buffer.from(text)
  return bytes.length <= max ? { text, truncated: false } : { text: bytes.subarray(0, max).toString("utf8"), truncated: true }
}

/** Firing times that are not RFC 3339 (a sender's mistake) fall back to when we received the signal. */
const timeOr = (t: string, fallback: string) => (Number.isNaN(Date.parse(t)) ? fallback : new Date(t).toISOString())

export const requestFor = (signal: Signal, fingerprint: string, target: Target, o: RequestOptions): KubeObject => {
  const payload = cut(JSON.stringify(signal.original), o.maxPayloadBytes)
  const providerData = { ...signal.providerData, ...(payload.truncated ? { originalPayloadTruncated: true } : {}) }
  return {
    apiVersion: `${o.apiGroup}/v1alpha1`,
    kind: "RemediationRequest",
    metadata: {
      name: `rr-${fingerprint.slice(0, 12)}-${o.now.toString(36)}`,
      labels: {
        [`${o.apiGroup}/signal-fingerprint`]: fingerprint.slice(0, 63),
        [`${o.apiGroup}/signal`]: labelValue(signal.name),
        [`${o.apiGroup}/source`]: "signals"
      }
    },
    spec: {
      signalName: signal.name,
      signalFingerprint: fingerprint,
      severity: signal.severity,
      signalType: signalType(signal.source),
      signalSource: signalSource(signal.source),
      targetType: "kubernetes",
      targetResource: target,
      firingTime: timeOr(signal.firingTime, o.receivedAt),
      receivedTime: o.receivedAt,
      signalLabels: signal.labels,
      signalAnnotations: signal.annotations,
      providerData: JSON.stringify(providerData),
      originalPayload: payload.text
    }
  }
}
