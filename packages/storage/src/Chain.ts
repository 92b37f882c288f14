/**
 * The per-correlation-id hash chain. Each event's hash is hex SHA-256 (or HMAC-SHA256 with the configured key) over
 * the previous event's hash followed by the canonical JSON of the event as stored: sorted keys, absent and null
 * fields left out, timestamp as ISO-8601 UTC with milliseconds, ids lower-case. The first event's previous hash is
 * the empty string. The algorithm is stored per row, so a chain stays verifiable when a key is added later.
 */
import type { AuditHashAlgorithm } from "@kubemend/core/domain/Audit"
import { createHmac, createSecretKey, hash as digest } from "node:crypto"
import { canonicalEvent } from "./Chain/Canonical.ts"

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

export { canonicalEvent }

export interface Hasher {
  readonly algorithm: AuditHashAlgorithm
  readonly hash: (previous: string, event: ChainEvent) => string
  /** The same, from `canonicalEvent(event)` already built. */
  readonly hashCanonical: (previous: string, canonical: string) => string
  /** Recomputes with the row's own algorithm; `undefined` when that needs a key this service does not have. */
  readonly rehash: (algorithm: string, previous: string, event: ChainEvent) => string | undefined
  /** The same from the row's canonical JSON. */
  readonly rehashCanonical: (algorithm: string, previous: string, canonical: string) => string | undefined
}

// One-shot `crypto.hash` is about three times faster than a createHash object per event.
const sha256 = (previous: string, body: string) => digest("sha256", previous + body, "hex")

export const makeHasher = (key: string | undefined): Hasher => {
  const keyed = key !== undefined && key.length > 0
  // The key is imported once; a string key would be converted again for every event.
  const secret = keyed ? createSecretKey(Buffer.from(key, "utf8")) : undefined
  const hmac = (previous: string, body: string) => createHmac("sha256", secret!).update(previous + body).digest("hex")
  const own = keyed ? hmac : sha256
  const rehashCanonical = (algorithm: string, previous: string, canonical: string) =>
    algorithm === "sha256-unkeyed" ? sha256(previous, canonical) : algorithm === "hmac-sha256" && keyed ? hmac(previous, canonical) : undefined
  return {
    algorithm: keyed ? "hmac-sha256" : "sha256-unkeyed",
    hash: (previous, event) => own(previous, canonicalEvent(event)),
    hashCanonical: own,
    rehash: (algorithm, previous, event) => rehashCanonical(algorithm, previous, canonicalEvent(event)),
    rehashCanonical
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

/** One stored link as the walk reads it (the event's content arrives separately, as its canonical JSON). */
export interface ChainLink {
  readonly eventId: string
  readonly eventTimestamp: string
  readonly chainPosition: number
  readonly eventHash: string
  readonly previousEventHash: string
  readonly hashAlgorithm: string
}

/**
 * Walks a chain one link at a time (so rows can be checked while the next page is still being read). A row is bad
 * when its stored previous hash is not the stored hash of the row before it (a row was deleted, reordered or
 * re-linked), when its position skips, or when its own content no longer hashes to its stored hash (tampered).
 * `finish(head)` compares the last link with the head recorded at write time, so removing the newest rows shows too.
 */
export class ChainWalk {
  private readonly findings: Array<ChainFinding> = []
  private readonly validIds = new Set<string>()
  private total = 0
  private verified = 0
  private previousHash = ""
  private expectedPosition = 1
  private last: ChainLink | undefined

  constructor(private readonly hasher: Hasher, private readonly collectIds = true) {}

  step(link: ChainLink, canonical: string): void {
    this.total++
    const linked = link.previousEventHash === this.previousHash && link.chainPosition === this.expectedPosition
    const recomputed = linked ? this.hasher.rehashCanonical(link.hashAlgorithm, link.previousEventHash, canonical) : undefined
    if (linked && recomputed === link.eventHash) {
      this.verified++
      if (this.collectIds) this.validIds.add(link.eventId)
    } else {
      const base = {
        event_id: link.eventId,
        event_timestamp: link.eventTimestamp,
        actual_hash: link.eventHash,
        previous_hash: link.previousEventHash
      }
      this.findings.push(
        !linked
          ? {
            ...base,
            expected_hash: this.previousHash,
            message: link.chainPosition !== this.expectedPosition
              ? `chain position ${link.chainPosition} where ${this.expectedPosition} was expected: events were deleted or reordered`
              : "previous_event_hash does not match the preceding event: events were deleted, reordered or re-linked"
          }
          : recomputed === undefined
          ? { ...base, message: `cannot verify ${link.hashAlgorithm}: no hash key is configured` }
          : { ...base, expected_hash: recomputed, message: "event content does not match its hash: the event was modified" }
      )
    }
    this.previousHash = link.eventHash
    this.expectedPosition = link.chainPosition + 1
    this.last = link
  }

  finish(head?: { readonly chainPosition: number; readonly eventHash: string }): ChainReport {
    const last = this.last
    if (head !== undefined && (last === undefined || last.chainPosition !== head.chainPosition || last.eventHash !== head.eventHash)) {
      this.findings.push({
        event_id: last?.eventId ?? "",
        event_timestamp: last?.eventTimestamp ?? "",
        actual_hash: last?.eventHash ?? "",
        previous_hash: last?.previousEventHash ?? "",
        expected_hash: head.eventHash,
        message: `the chain ends at position ${last?.chainPosition ?? 0} but ${head.chainPosition} events were written: events were deleted`
      })
    }
    return { total: this.total, verified: this.verified, findings: this.findings, validIds: this.validIds }
  }
}

/** Walks a whole chain of rows in `chain_position` order (see `ChainWalk`). */
export const verifyChain = (
  rows: ReadonlyArray<ChainRow>,
  hasher: Hasher,
  head?: { readonly chainPosition: number; readonly eventHash: string }
): ChainReport => {
  const walk = new ChainWalk(hasher)
  for (const row of rows) {
    walk.step({
      eventId: row.event.event_id,
      eventTimestamp: row.event.event_timestamp,
      chainPosition: row.chainPosition,
      eventHash: row.eventHash,
      previousEventHash: row.previousEventHash,
      hashAlgorithm: row.hashAlgorithm
    }, canonicalEvent(row.event))
  }
  return walk.finish(head)
}
