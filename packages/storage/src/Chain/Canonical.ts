/**
 * The canonical JSON of a chain event, the bytes its hash covers: its fields in sorted key order, null and absent
 * ones left out, `event_data` as core's `canonicalJson`. The fixed top-level fields are written from a precomputed
 * key table instead of sorting each event's keys.
 */
import { canonicalJson, quote } from "@kubemend/core/CanonicalJson"

/** The payload's canonical JSON (core's `canonicalJson`). */
export const canonicalData = canonicalJson

/** The hashed fields of an event, in canonical (sorted) order. `version` is stored as `event_version`. */
export const canonicalKeys = [
  "actor_id",
  "actor_ip",
  "actor_type",
  "cluster_id",
  "correlation_id",
  "duration_ms",
  "error_code",
  "error_message",
  "event_action",
  "event_category",
  "event_data",
  "event_id",
  "event_outcome",
  "event_timestamp",
  "event_type",
  "is_sensitive",
  "namespace",
  "parent_event_date",
  "parent_event_id",
  "resource_id",
  "resource_type",
  "retention_days",
  "severity",
  "version"
] as const

export type CanonicalKey = (typeof canonicalKeys)[number]

/** Index of `event_data` in `canonicalKeys`. */
export const dataIndex = canonicalKeys.indexOf("event_data")

const keyPrefixes = canonicalKeys.map((k) => `"${k}":`)

type Fields = { readonly [K in CanonicalKey]?: unknown }

const field = (out: string, i: number, v: unknown): string =>
  v === null || v === undefined
    ? out
    : out + (out.length === 1 ? "" : ",") + keyPrefixes[i]! + (typeof v === "string" ? quote(v) : JSON.stringify(v))

/** The canonical JSON of an event; `data` is `canonicalData(event.event_data)` when the caller already has it. */
export const canonicalEvent = (event: Fields, data: string = canonicalData(event.event_data)): string => {
  let out = "{"
  for (let i = 0; i < canonicalKeys.length; i++) {
    out = i === dataIndex ? out + (out.length === 1 ? "" : ",") + keyPrefixes[i]! + data : field(out, i, event[canonicalKeys[i]!])
  }
  return out + "}"
}

/** The same from the field values in `canonicalKeys` order (a database row); `values[dataIndex]` is not read. */
export const canonicalFromValues = (values: ReadonlyArray<unknown>, data: string): string => {
  let out = "{"
  for (let i = 0; i < canonicalKeys.length; i++) {
    out = i === dataIndex ? out + (out.length === 1 ? "" : ",") + keyPrefixes[i]! + data : field(out, i, values[i])
  }
  return out + "}"
}
