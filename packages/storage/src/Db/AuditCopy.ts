/**
 * COPY text lines of `audit_events`. Fields are written by hand rather than through an array per row: this runs
 * for every event of every batch.
 */
import { ValidationError } from "@kubemend/core/Errors"
import type { ChainEvent } from "../Chain.ts"
import { canonicalData } from "../Chain/Canonical.ts"
import { wellFormedJson } from "../Normalise.ts"

/** The columns the write path fills, in the order of each COPY line. */
export const copyColumns = `event_id, event_version, event_timestamp, event_date, event_type, event_category, event_action,
  event_outcome, actor_type, actor_id, actor_ip, resource_type, resource_id, correlation_id, parent_event_id,
  parent_event_date, namespace, cluster_id, severity, duration_ms, error_code, error_message, retention_days,
  is_sensitive, event_data, chain_position, event_hash, previous_event_hash, hash_algorithm, legal_hold,
  legal_hold_reason, legal_hold_placed_by, legal_hold_placed_at`

const specials = /[\\\t\n\r]/

/** One text field: `\N` for null, backslash escapes for the separators. */
export const copyText = (text: string): string =>
  specials.test(text) ? text.replace(/\\/g, "\\\\").replace(/\t/g, "\\t").replace(/\n/g, "\\n").replace(/\r/g, "\\r") : text

const opt = (v: string | null | undefined) => (v === null || v === undefined ? "\\N" : copyText(v))
const num = (v: number | null | undefined) => (v === null || v === undefined ? "\\N" : String(v))
const bool = (v: boolean | null | undefined) => (v === null || v === undefined ? "\\N" : v ? "t" : "f")

const nulRefused = () => new ValidationError({ detail: "audit events must not contain NUL (\\u0000) characters" })

const hasNul = (e: ChainEvent) =>
  e.event_id.includes("\u0000") || e.version.includes("\u0000") || e.event_type.includes("\u0000") ||
  e.event_category.includes("\u0000") || e.event_action.includes("\u0000") || e.event_outcome.includes("\u0000") ||
  e.correlation_id.includes("\u0000") || [
    e.actor_type,
    e.actor_id,
    e.actor_ip,
    e.resource_type,
    e.resource_id,
    e.parent_event_id,
    e.parent_event_date,
    e.namespace,
    e.cluster_id,
    e.severity,
    e.error_code,
    e.error_message
  ].some((v) => typeof v === "string" && v.includes("\u0000"))

/**
 * The canonical JSON of the event's `event_data` (hashed, and stored as the same jsonb value), lone surrogates made
 * U+FFFD (`wellFormedJson`). Throws `ValidationError` when the event holds NUL, which PostgreSQL text and jsonb
 * cannot store.
 */
export const storablePayload = (e: ChainEvent): string => {
  const data = canonicalData(e.event_data)
  // A lone surrogate can only show as a `\udXXX` escape here (a backslash in the text before "ud" matches too, harmlessly).
  const storable = data.includes("\\ud") ? canonicalData(wellFormedJson(e.event_data)) : data
  if (storable.includes("\\u0000") || hasNul(e)) throw nulRefused()
  return storable
}

/** The event's own columns, up to and with `event_data` (`data`: its canonical JSON). */
export const eventColumns = (e: ChainEvent, data: string): string =>
  copyText(e.event_id) + "\t" + copyText(e.version) + "\t" + e.event_timestamp + "\t" + e.event_timestamp.slice(0, 10) +
  "\t" + copyText(e.event_type) + "\t" + copyText(e.event_category) + "\t" + copyText(e.event_action) +
  "\t" + copyText(e.event_outcome) + "\t" + opt(e.actor_type) + "\t" + opt(e.actor_id) + "\t" + opt(e.actor_ip) +
  "\t" + opt(e.resource_type) + "\t" + opt(e.resource_id) + "\t" + copyText(e.correlation_id) +
  "\t" + opt(e.parent_event_id) + "\t" + opt(e.parent_event_date) + "\t" + opt(e.namespace) + "\t" + opt(e.cluster_id) +
  "\t" + opt(e.severity) + "\t" + num(e.duration_ms) + "\t" + opt(e.error_code) + "\t" + opt(e.error_message) +
  "\t" + num(e.retention_days) + "\t" + bool(e.is_sensitive) + "\t" + copyText(data)

/** A legal hold active on the chain when the batch is written (new events of a held chain are held too). */
export interface ActiveHold {
  readonly reason: string | null
  readonly by: string | null
  readonly at: Date | null
}

/** The link and hold columns that end a line. */
export const linkColumns = (position: number, hash: string, previous: string, algorithm: string, hold: ActiveHold | undefined) =>
  "\t" + position + "\t" + hash + "\t" + previous + "\t" + algorithm +
  (hold === undefined ? "\tf\t\\N\t\\N\t\\N" : "\tt\t" + opt(hold.reason) + "\t" + opt(hold.by) + "\t" + opt(hold.at?.toISOString()))
