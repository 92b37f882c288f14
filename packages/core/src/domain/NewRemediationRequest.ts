/**
 * The one way a RemediationRequest is made, whichever door it comes through: signal ingestion, the gateway's
 * `svc_investigate`, the A2A agent's `svc_remediate` and the agent's interactive workflow selection. All of them
 * write the same fingerprint, labels and spec shape, and ask the same question before creating ("is a request
 * already in progress on this target?"), so each door recognises the requests the others made.
 */
import { createHash } from "node:crypto"
import type { TargetResource } from "./Meta.ts"
import { isTerminalPhase } from "./Phases.ts"
import { RRKind } from "./RemediationRequest.ts"

/** Which door made a request (its `<apiGroup>/source` label); `interactive` is the gateway's `svc_investigate`. */
export type RequestDoor = "signals" | "interactive" | "a2a" | "agent-interactive"

/**
 * Lower-case SHA-256 hex of what identifies a signal: its name and the resolved target. Every pod of one Deployment
 * alerting the same thing is one fingerprint; the routing's duplicate, failure and ineffectiveness history follow it.
 */
export const signalFingerprint = (signalName: string, target: TargetResource): string =>
  createHash("sha256").update(JSON.stringify([signalName, target.kind, target.namespace ?? "", target.name])).digest("hex")

/** A label value: at most 63 characters of `[A-Za-z0-9._-]`, starting and ending alphanumeric. */
export const labelValue = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 63).replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "")

/** The label every request carries with (the first 63 characters of) its fingerprint, for lookups by selector. */
export const fingerprintLabel = (apiGroup: string) => `${apiGroup}/signal-fingerprint`

/** Whether two targets name the same resource (kinds compare case-insensitively; the API version is not compared). */
export const sameTarget = (a: TargetResource, b: TargetResource): boolean =>
  a.name === b.name && a.kind.toLowerCase() === b.kind.toLowerCase() && (a.namespace ?? "") === (b.namespace ?? "")

interface RequestLike {
  readonly metadata: { readonly name: string; readonly creationTimestamp?: string | undefined }
  readonly spec?: unknown
  readonly status?: unknown
}

const targetOf = (rr: RequestLike): TargetResource | undefined => (rr.spec as { targetResource?: TargetResource } | undefined)?.targetResource
const phaseOf = (rr: RequestLike): string => (rr.status as { overallPhase?: string } | undefined)?.overallPhase ?? "Pending"

/** The oldest request among `requests` that is in progress (not terminal) on `target`, whichever door made it. */
export const inProgressOn = <R extends RequestLike>(requests: ReadonlyArray<R>, target: TargetResource): R | undefined =>
  requests
    .filter((rr) => {
      const t = targetOf(rr)
      return t !== undefined && t.kind !== undefined && sameTarget(t, target) && !isTerminalPhase(phaseOf(rr))
    })
    .sort((a, b) => (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? "") || a.metadata.name.localeCompare(b.metadata.name))[0]

export interface NewRequest {
  readonly apiGroup: string
  readonly name: string
  readonly door: RequestDoor
  readonly signalName: string
  readonly target: TargetResource
  /** When the door received it (RFC 3339); also the firing time unless one is given. */
  readonly receivedAt: string
  readonly firingTime?: string
  readonly severity?: string
  readonly signalType: string
  readonly signalSource: string
  readonly signalLabels?: Readonly<Record<string, string>> | undefined
  readonly signalAnnotations?: Readonly<Record<string, string>> | undefined
  readonly providerData?: string
  readonly originalPayload?: string
  readonly description?: string | undefined
  /** Labels of the door's own beside the common ones (e.g. the interactive session). */
  readonly labels?: Readonly<Record<string, string>>
}

const defined = <A extends Record<string, unknown>>(o: A): A => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as A

/** The RemediationRequest object to create, with its fingerprint and the labels every door writes. */
export const newRemediationRequest = (r: NewRequest) => {
  const { apiVersion, kind, name, namespace } = r.target
  const target: TargetResource = {
    ...(apiVersion === undefined ? {} : { apiVersion }),
    kind,
    name,
    ...(namespace === undefined ? {} : { namespace })
  }
  const fingerprint = signalFingerprint(r.signalName, target)
  return {
    apiVersion: `${r.apiGroup}/v1alpha1`,
    kind: RRKind,
    metadata: {
      name: r.name,
      labels: {
        [fingerprintLabel(r.apiGroup)]: fingerprint.slice(0, 63),
        [`${r.apiGroup}/signal`]: labelValue(r.signalName),
        [`${r.apiGroup}/source`]: r.door,
        ...r.labels
      }
    },
    spec: defined({
      signalName: r.signalName,
      signalFingerprint: fingerprint,
      severity: r.severity ?? "unknown",
      signalType: r.signalType,
      signalSource: r.signalSource,
      targetType: "kubernetes",
      targetResource: target,
      firingTime: r.firingTime ?? r.receivedAt,
      receivedTime: r.receivedAt,
      signalLabels: r.signalLabels,
      signalAnnotations: r.signalAnnotations,
      providerData: r.providerData,
      originalPayload: r.originalPayload,
      description: r.description
    })
  }
}
