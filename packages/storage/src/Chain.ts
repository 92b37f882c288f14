/**
 * The per-correlation-id hash chain. Each event's hash is hex SHA-256 (or HMAC-SHA256 with the configured key) over
 * the previous event's hash followed by the canonical JSON of the event as stored: sorted keys, absent and null
 * fields left out, timestamp as ISO-8601 UTC with milliseconds, ids lower-case. The first event's previous hash is
 * the empty string. The algorithm is stored per row, so a chain stays verifiable when a key is added later.
 */
import type { AuditHashAlgorithm } from "@kubemend/core/domain/Audit"
import { canonicalJson } from "@kubemend/core/StorageApi"
import { createHmac, hash as digest } from "node:crypto"

/** The hashed fields of an event: what the request carried after normalisation, plus the assigned id. */
export interface ChainEvent {
  readonly event_id: string
  readonly version: string
  readonly event_type: string
  readonly event_timestamp: string
  readonly event_category: string
  readonly event_action: string
  readonly event_outcome: string
  readonly correlation_id: string
  readonly actor_type?: string | null | undefined
  readonly actor_id?: string | null | undefined
  readonly actor_ip?: string | null | undefined
  readonly resource_type?: string | null | undefined
  readonly resource_id?: string | null | undefined
  readonly parent_event_id?: string | null | undefined
  readonly parent_event_date?: string | null | undefined
  readonly namespace?: string | null | undefined
  readonly cluster_id?: string | null | undefined
  readonly severity?: string | null | undefined
  readonly duration_ms?: number | null | undefined
  readonly error_code?: string | null | undefined
  readonly error_message?: string | null | undefined
  readonly retention_days: number
  readonly is_sensitive?: boolean | null | undefined
  readonly event_data: unknown
}

/** Every field a chain event can carry, sorted, with its JSON key prefix precomputed. */
const eventKeys = ([
  "actor_id", "actor_ip", "actor_type", "cluster_id", "correlation_id", "duration_ms", "error_code", "error_message",
  "event_action", "event_category", "event_data", "event_id", "event_outcome", "event_timestamp", "event_type",
  "is_sensitive", "namespace", "parent_event_date", "parent_event_id", "resource_id", "resource_type",
  "retention_days", "severity", "version"
] as const).map((k) => [k, `${JSON.stringify(k)}:`] as const)

/** Canonical JSON of the event: its fields in sorted order, null/absent ones left out, `event_data` canonical too. */
export const canonicalEvent = (e: ChainEvent): string => {
  let out = "{"
  for (const [key, prefix] of eventKeys) {
    const v = e[key]
    if (v === null || v === undefined) continue
    out += (out.length === 1 ? "" : ",") + prefix + (key === "event_data" ? canonicalJson(v) : JSON.stringify(v))
  }
  return out + "}"
}

export interface Hasher {
  readonly algorithm: AuditHashAlgorithm
  readonly hash: (previous: string, event: ChainEvent) => string
  /** The same, from `canonicalEvent(event)` computed earlier (outside the writers' lock). */
  readonly hashCanonical: (previous: string, canonical: string) => string
  /** Recomputes with the row's own algorithm; `undefined` when that needs a key this service does not have. */
  readonly rehash: (algorithm: string, previous: string, event: ChainEvent) => string | undefined
}

// One-shot `crypto.hash` is about three times faster than a createHash object per event.
const sha256 = (previous: string, body: string) => digest("sha256", previous + body, "hex")

export const makeHasher = (key: string | undefined): Hasher => {
  const hmac = (previous: string, body: string) =>
    createHmac("sha256", key!).update(previous).update(body).digest("hex")
  const keyed = key !== undefined && key.length > 0
  return {
    algorithm: keyed ? "hmac-sha256" : "sha256-unkeyed",
    hash: (previous, event) => (keyed ? hmac : sha256)(previous, canonicalEvent(event)),
    hashCanonical: (previous, canonical) => (keyed ? hmac : sha256)(previous, canonical),
    rehash: (algorithm, previous, event) => {
      if (algorithm === "sha256-unkeyed") return sha256(previous, canonicalEvent(event))
      if (algorithm === "hmac-sha256" && keyed) return hmac(previous, canonicalEvent(event))
      return undefined
    }
  }
}

/** A stored link of the chain, in `chain_position` order. */
export interface ChainRow {
  readonly event: ChainEvent
  readonly chainPosition: number
  readonly eventHash: string
  readonly previousEventHash: string
  readonly hashAlgorithm: string
}

export interface ChainFinding {
  readonly event_id: string
  readonly event_timestamp: string
  readonly expected_hash?: string
  readonly actual_hash: string
  readonly previous_hash: string
  readonly message: string
}

export interface ChainReport {
  readonly total: number
  readonly verified: number
  /** In chain order; the first entry is the first tampered event. */
  readonly findings: ReadonlyArray<ChainFinding>
  readonly validIds: ReadonlySet<string>
}

/**
 * Walks a chain. A row is bad when its stored previous hash is not the stored hash of the row before it (a row
 * was deleted, reordered or re-linked), when its position skips, or when its own content no longer hashes to its
 * stored hash (tampered). `head` is the last link recorded at write time, so removing the newest rows shows too.
 */
export const verifyChain = (
  rows: ReadonlyArray<ChainRow>,
  hasher: Hasher,
  head?: { readonly chainPosition: number; readonly eventHash: string }
): ChainReport => {
  const findings: Array<ChainFinding> = []
  const validIds = new Set<string>()
  let previousHash = ""
  let expectedPosition = 1
  for (const row of rows) {
    const base = {
      event_id: row.event.event_id,
      event_timestamp: row.event.event_timestamp,
      actual_hash: row.eventHash,
      previous_hash: row.previousEventHash
    }
    const recomputed = hasher.rehash(row.hashAlgorithm, row.previousEventHash, row.event)
    if (row.previousEventHash !== previousHash || row.chainPosition !== expectedPosition) {
      findings.push({
        ...base,
        expected_hash: previousHash,
        message:
          row.chainPosition !== expectedPosition
            ? `chain position ${row.chainPosition} where ${expectedPosition} was expected: events were deleted or reordered`
            : "previous_event_hash does not match the preceding event: events were deleted, reordered or re-linked"
      })
    } else if (recomputed === undefined) {
      findings.push({ ...base, message: `cannot verify ${row.hashAlgorithm}: no hash key is configured` })
    } else if (recomputed !== row.eventHash) {
      findings.push({ ...base, expected_hash: recomputed, message: "event content does not match its hash: the event was modified" })
    } else {
      validIds.add(row.event.event_id)
    }
    previousHash = row.eventHash
    expectedPosition = row.chainPosition + 1
  }
  const last = rows[rows.length - 1]
  if (head !== undefined && (last === undefined || last.chainPosition !== head.chainPosition || last.eventHash !== head.eventHash)) {
    findings.push({
      event_id: last?.event.event_id ?? "",
      event_timestamp: last?.event.event_timestamp ?? "",
      actual_hash: last?.eventHash ?? "",
      previous_hash: last?.previousEventHash ?? "",
      expected_hash: head.eventHash,
      message: `the chain ends at position ${last?.chainPosition ?? 0} but ${head.chainPosition} events were written: events were deleted`
    })
  }
  return { total: rows.length, verified: validIds.size, findings, validIds }
}
