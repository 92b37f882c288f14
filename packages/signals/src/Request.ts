/**
 * The RemediationRequest a new signal makes (core's `newRemediationRequest`): every spec field of the original CRD (signalName, signalFingerprint,
 * severity, signalType, signalSource, targetType, targetResource, firingTime, receivedTime, signalLabels,
 * signalAnnotations, providerData, originalPayload). The payload is kept up to `maxPayloadBytes`; a longer one is cut
 * and `providerData.originalPayloadTruncated` says so.
 *
 * Its name is derived, not random: `rr-<first 16 hex of the fingerprint>-<occurrence>`, the occurrence counting the
 * requests this fingerprint has had (1, then 2 after a terminal request and the cooldown, ...). Two replicas racing
 * on one signal therefore create the same name; the API server lets one win and answers the other 409, which then
 * folds its signal into the winner.
 */
import { newRemediationRequest, signalFingerprint } from "@kubemend/core/domain/NewRemediationRequest"
import type { KubeObject } from "@kubemend/core/K8s"
import { type Signal, signalSource, signalType, type Target } from "./Signal.ts"

export interface RequestOptions {
  readonly apiGroup: string
  readonly receivedAt: string
  readonly occurrence: number
  readonly maxPayloadBytes: number
}

const namePrefix = (fingerprint: string) => `rr-${fingerprint.slice(0, 16)}-`

/** The name of the fingerprint's `occurrence`-th request: at most 3 + 16 + 1 + 16 characters, DNS-1123. */
export const requestName = (fingerprint: string, occurrence: number) => `${namePrefix(fingerprint)}${occurrence}`

/** The occurrence a request name of this fingerprint carries; 0 for names of another form (made before names were derived). */
export const occurrenceOf = (fingerprint: string, name: string) => {
  const prefix = namePrefix(fingerprint)
  const n = name.startsWith(prefix) ? Number(name.slice(prefix.length)) : Number.NaN
  return Number.isSafeInteger(n) && n > 0 ? n : 0
}

const cut = (text: string, max: number) => {
  const bytes = Buffer.from(text)
  return bytes.length <= max ? { text, truncated: false } : { text: bytes.subarray(0, max).toString("utf8"), truncated: true }
}

/** Firing times that are not RFC 3339 (a sender's mistake) fall back to when we received the signal. */
const timeOr = (t: string, fallback: string) => (Number.isNaN(Date.parse(t)) ? fallback : new Date(t).toISOString())

/** The request for a signal, through core's one constructor (fingerprint, labels, spec shape shared by every door). */
export const requestFor = (signal: Signal, target: Target, o: RequestOptions): KubeObject => {
  const payload = cut(JSON.stringify(signal.original), o.maxPayloadBytes)
  const providerData = { ...signal.providerData, ...(payload.truncated ? { originalPayloadTruncated: true } : {}) }
  return newRemediationRequest({
    apiGroup: o.apiGroup,
    name: requestName(signalFingerprint(signal.name, target), o.occurrence),
    door: "signals",
    signalName: signal.name,
    target,
    receivedAt: o.receivedAt,
    firingTime: timeOr(signal.firingTime, o.receivedAt),
    severity: signal.severity,
    signalType: signalType(signal.source),
    signalSource: signalSource(signal.source),
    signalLabels: signal.labels,
    signalAnnotations: signal.annotations,
    providerData: JSON.stringify(providerData),
    originalPayload: payload.text
  })
}
