/**
 * What the service knows per fingerprint: the request it last made or found, that request's phase (trusted for
 * `phaseRefresh`), the deduplication count as the cluster has it and the duplicates this replica counted since.
 * Bounded to `maxTracked` fingerprints; the least recently seen go first (a forgotten fingerprint is looked up in
 * the cluster again).
 */
import { isTerminalPhase } from "@kubemend/core/domain/Phases"
import type { KubeObject } from "@kubemend/core/K8s"

export interface Entry {
  readonly rrName: string
  /** The request's `creationTimestamp`: of two requests for one fingerprint, the newer is the one signals fold into. */
  readonly createdAt: string
  phase: string | undefined
  /** When the request became terminal (ms), from `completedAt`, else its last change, else its creation. */
  terminalAt: number | undefined
  checkedAt: number
  /** `status.deduplication.occurrenceCount` at `resourceVersion` (1 before any duplicate). */
  written: number
  /** The version `written` was read at: a count write is made against it, so replicas add up instead of overwriting. */
  resourceVersion: string | undefined
  /** Duplicates counted here and not yet written. */
  pending: number
  /** A count write is out: its answer, not the watch, brings the new count (the watch would count `pending` twice). */
  writing: boolean
  firstSeen: string
  lastSeen: string
}

/** The count a caller sees: what the cluster has plus what this replica has not written yet. */
export const countOf = (entry: Entry) => entry.written + entry.pending

/** Whether `rv` is newer than `than` (resourceVersions are opaque; etcd's are integers, compared as such). */
const newer = (rv: string | undefined, than: string | undefined) => {
  if (rv === undefined) return false
  if (than === undefined) return true
  const a = Number(rv)
  const b = Number(than)
  return Number.isSafeInteger(a) && Number.isSafeInteger(b) ? a > b : rv !== than
}

/** Takes the cluster's count from `rr` when it is newer than what `entry` holds. */
export const observeCount = (entry: Entry, rr: KubeObject) => {
  if (!newer(rr.metadata.resourceVersion, entry.resourceVersion)) return
  const d = ((rr.status ?? {}) as RrStatus).deduplication
  entry.written = d?.occurrenceCount ?? 1
  entry.resourceVersion = rr.metadata.resourceVersion
  if (d?.firstSeenAt !== undefined && d.firstSeenAt < entry.firstSeen) entry.firstSeen = d.firstSeenAt
  if (d?.lastSeenAt !== undefined && d.lastSeenAt > entry.lastSeen) entry.lastSeen = d.lastSeenAt
}

const millis = (s: unknown): number | undefined => {
  const n = typeof s === "string" ? Date.parse(s) : Number.NaN
  return Number.isNaN(n) ? undefined : n
}

interface RrStatus {
  readonly overallPhase?: string
  readonly completedAt?: string
  readonly lastModifiedAt?: string
  readonly deduplication?: { readonly firstSeenAt?: string; readonly lastSeenAt?: string; readonly occurrenceCount?: number }
}

/** Updates the phase fields of `entry` from the request as the cluster has it. */
export const observe = (entry: Entry, rr: KubeObject, now: number) => {
  const status = (rr.status ?? {}) as RrStatus
  entry.phase = status.overallPhase
  entry.terminalAt = entry.phase !== undefined && isTerminalPhase(entry.phase)
    ? millis(status.completedAt) ?? millis(status.lastModifiedAt) ?? millis(rr.metadata.creationTimestamp) ?? now
    : undefined
  entry.checkedAt = now
}

/**
 * The request was deleted: kept as ended long ago, so the next signal makes a new request with the next occurrence
 * in its name instead of reusing the deleted one's (its audit trail is keyed by that name).
 */
export const ended = (entry: Entry) => {
  entry.terminalAt = Number.NEGATIVE_INFINITY
}

/** An entry for a request found in the cluster (its written count, or 1). */
export const entryFrom = (rr: KubeObject, now: number): Entry => {
  const status = (rr.status ?? {}) as RrStatus
  const created = rr.metadata.creationTimestamp ?? new Date(now).toISOString()
  const entry: Entry = {
    rrName: rr.metadata.name,
    createdAt: created,
    phase: undefined,
    terminalAt: undefined,
    checkedAt: now,
    written: status.deduplication?.occurrenceCount ?? 1,
    resourceVersion: rr.metadata.resourceVersion,
    pending: 0,
    writing: false,
    firstSeen: status.deduplication?.firstSeenAt ?? created,
    lastSeen: status.deduplication?.lastSeenAt ?? created
  }
  observe(entry, rr, now)
  return entry
}

export const makeIndex = (max: number) => {
  const entries = new Map<string, Entry>()
  let evicted = false
  return {
    get: (fp: string) => entries.get(fp),
    /** Stores (or touches) the entry as the most recently seen. */
    set: (fp: string, entry: Entry) => {
      entries.delete(fp)
      entries.set(fp, entry)
      if (entries.size > max) {
        const oldest = entries.keys().next().value
        if (oldest !== undefined) entries.delete(oldest)
        evicted = true
      }
    },
    delete: (fp: string) => void entries.delete(fp),
    /** Nothing was ever forgotten to stay under `max`: a fingerprint missing here has no request the index saw. */
    complete: () => !evicted
  }
}
